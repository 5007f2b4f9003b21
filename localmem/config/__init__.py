"""Typed, immutable configuration.

A store keeps its configuration in ``<store>/config.json``; what is not written there takes the
defaults below. Each mechanism has its own section so that a config file reads like a map of the
system. Every field says why it exists.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import ValidationError

from localmem.atomic import write_private
from localmem.config.base import Section
from localmem.config.core import (
    BUILTIN_EMBEDDER,
    E5_EMBEDDER,
    EmbedderConfig,
    EngineConfig,
    SearchConfig,
    StoreConfig,
)
from localmem.config.mechanisms import (
    AttributeConfig,
    ConsolidationConfig,
    ConversationConfig,
    EvolutionConfig,
    InferConfig,
    ProcedureConfig,
)
from localmem.errors import InputError
from localmem.home import default_store_path, localmem_home

CONFIG_FILE = "config.json"

__all__ = [
    "BUILTIN_EMBEDDER",
    "CONFIG_FILE",
    "E5_EMBEDDER",
    "AttributeConfig",
    "Config",
    "ConsolidationConfig",
    "ConversationConfig",
    "EmbedderConfig",
    "EngineConfig",
    "EvolutionConfig",
    "InferConfig",
    "ProcedureConfig",
    "SearchConfig",
    "StoreConfig",
    "default_store_path",
    "localmem_home",
]


class Config(Section):
    """The whole configuration of a store."""

    embedder: EmbedderConfig = EmbedderConfig()
    engine: EngineConfig = EngineConfig()
    store: StoreConfig = StoreConfig()
    search: SearchConfig = SearchConfig()
    attributes: AttributeConfig = AttributeConfig()
    evolution: EvolutionConfig = EvolutionConfig()
    procedures: ProcedureConfig = ProcedureConfig()
    conversation: ConversationConfig = ConversationConfig()
    consolidation: ConsolidationConfig = ConsolidationConfig()
    infer: InferConfig = InferConfig()

    @classmethod
    def from_dict(cls, data: dict) -> Config:
        """Build a config from plain data, with a clear error for a wrong field."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise InputError(f"invalid config at {where}: {first['msg']}") from None

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Config:
        """Read a config file (JSON); a missing file gives the defaults."""
        path = Path(path)
        if not path.exists():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as exc:
            raise InputError(
                f"config {path} is not UTF-8 text (bad byte at offset {exc.start})"
            ) from None
        except (OSError, json.JSONDecodeError, RecursionError) as exc:
            raise InputError(f"cannot read config {path}: {exc}") from None
        if not isinstance(data, dict):
            raise InputError(f"config {path} must hold a JSON object")
        return cls.from_dict(data)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write only the fields that differ from the defaults, so new defaults still apply."""
        data = self.model_dump(mode="json", exclude_defaults=True)
        write_private(path, json.dumps(data, indent=2, sort_keys=True) + "\n")

    def with_updates(self, **sections: dict) -> Config:
        """A copy with some fields of some sections replaced: ``with_updates(search={"k": 3})``."""
        data = self.model_dump()
        for name, fields in sections.items():
            if name not in data:
                raise InputError(f"unknown config section {name!r}; known: {', '.join(data)}")
            data[name].update(fields)
        return Config.from_dict(data)
