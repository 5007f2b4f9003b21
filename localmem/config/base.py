"""The base of every config section: frozen, unknown fields refused."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """A config section: immutable, and a misspelt field is an error, not a silent default."""

    model_config = ConfigDict(frozen=True, extra="forbid")
