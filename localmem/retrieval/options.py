"""Every option of a search, validated once, in one frozen object."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, get_args

from localmem import validate
from localmem.errors import InputError
from localmem.types import (
    KINDS,
    LEVELS,
    AttributeMode,
    Axis,
    Expansion,
    Fusion,
    Mode,
    Reranker,
    Strategy,
)

if TYPE_CHECKING:  # the CLI imports the option names; pydantic (config) would slow its start
    from localmem.config import SearchConfig

MODES: tuple[str, ...] = get_args(Mode)
FUSIONS: tuple[str, ...] = get_args(Fusion)
ATTRIBUTE_MODES: tuple[str, ...] = get_args(AttributeMode)
ATTRIBUTE_AXES: tuple[str, ...] = get_args(Axis)
STRATEGIES: tuple[str, ...] = get_args(Strategy)
EXPANSIONS: tuple[str, ...] = get_args(Expansion)
RERANKERS: tuple[str, ...] = get_args(Reranker)


@dataclass(frozen=True)
class SearchOptions:
    """What a search does. Defaults of the first group come from the store's ``SearchConfig``.

    Temporal attention and the model-free reranker run by default (the best pipeline measured
    on every data shape); the other stages after candidate generation are off unless
    asked for. Each stage that runs adds a line to the explanation of the result.
    """

    k: int = 5
    mode: str = "hybrid"
    fusion: str = "zscore"
    rrf_k: int = 60
    dense_weight: float = 0.5
    candidates: int = 70
    # filters (scope, kind, level, time, metadata equality)
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    kinds: tuple[str, ...] | None = None
    levels: tuple[str, ...] | None = None
    since: datetime | None = None
    until: datetime | None = None
    metadata: dict[str, Any] | None = None
    # time validity: None answers for now (superseded memories are left out);
    # a time answers for that moment (what was true then)
    as_of: datetime | None = None
    # query expansion: off, prf (model-free pseudo-relevance feedback), engine, auto
    expand: str = "off"
    # MemInsight attributes
    attributes: str = "off"
    min_matches: int = 2
    axes: tuple[str, ...] = ATTRIBUTE_AXES
    priority: bool = True
    strategy: str = "refined"
    # temporal attention; on by default (the store's SearchConfig says)
    temporal: bool = True
    # A-Mem link expansion
    links: bool = False
    # reranking: off, model-free, engine, auto; model-free by default
    rerank: str = "model-free"
    # packing the hits into a token budget (None: no packing)
    budget_tokens: int | None = None
    # hits whose relevance (0 to 1, calibrated: localmem.retrieval.relevance) is below this are
    # left out (None: every hit is kept)
    min_relevance: float | None = None
    # "now" for time-aware stages (default: the time of the search)
    now: datetime | None = None

    @classmethod
    def build(cls, config: SearchConfig | None = None, **kwargs: Any) -> SearchOptions:
        """Options from keyword arguments, over the defaults of ``config``; all checked."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise InputError(
                f"unknown search option(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        base: dict[str, Any] = {}
        if config is not None:
            base = {
                "mode": config.mode,
                "fusion": config.fusion,
                "rrf_k": config.rrf_k,
                "dense_weight": config.dense_weight,
                "candidates": config.candidates,
                "temporal": config.temporal,
                "rerank": config.rerank,
            }
        base.update({k: v for k, v in kwargs.items() if v is not None or k in _NULLABLE})
        return cls(**base).checked()

    def checked(self) -> SearchOptions:
        """These options, validated and normalised (tuples, aware times)."""
        validate.positive_int(self.k, "k", maximum=1000)
        validate.positive_int(self.candidates, "candidates", maximum=100_000)
        validate.positive_int(self.rrf_k, "rrf_k", maximum=100_000)
        _one_of(self.mode, MODES, "mode")
        _one_of(self.fusion, FUSIONS, "fusion")
        _one_of(self.attributes, ATTRIBUTE_MODES, "attributes")
        _one_of(self.strategy, STRATEGIES, "strategy")
        expand = _one_of(_switch(self.expand), EXPANSIONS, "expand")
        rerank = _one_of(_switch(self.rerank), RERANKERS, "rerank")
        if not isinstance(self.dense_weight, (int, float)) or not 0 <= self.dense_weight <= 1:
            raise InputError("dense_weight must be a number between 0 and 1")
        kinds = _tuple(self.kinds, KINDS, "kind")
        levels = _tuple(self.levels, LEVELS, "level")
        axes = _tuple(self.axes, ATTRIBUTE_AXES, "axis") or ()
        if self.attributes != "off" and not axes:
            raise InputError("attribute search needs at least one axis")
        if isinstance(self.min_matches, bool) or not isinstance(self.min_matches, int):
            raise InputError("min_matches must be an integer")
        if self.attributes == "filter" and not 1 <= self.min_matches <= len(axes):
            raise InputError(f"min_matches must be between 1 and {len(axes)} (the axes used)")
        for name in ("user_id", "agent_id", "session_id"):
            validate.scope_id(getattr(self, name), name)
        since = validate.timestamp(self.since, "since")
        until = validate.timestamp(self.until, "until")
        if since and until and since > until:
            raise InputError("since is after until")
        now = validate.timestamp(self.now, "now")
        as_of = validate.timestamp(self.as_of, "as_of")
        meta = validate.metadata_filter(self.metadata)
        if self.budget_tokens is not None:
            validate.positive_int(self.budget_tokens, "budget_tokens", maximum=1_000_000)
        if self.min_relevance is not None and (
            isinstance(self.min_relevance, bool)
            or not isinstance(self.min_relevance, (int, float))
            or not 0 <= self.min_relevance <= 1
        ):
            raise InputError("min_relevance must be a number between 0 and 1")
        return replace(
            self,
            kinds=kinds,
            levels=levels,
            axes=axes,
            since=since,
            until=until,
            now=now,
            as_of=as_of,
            metadata=meta,
            expand=expand,
            rerank=rerank,
            temporal=bool(self.temporal),
            links=bool(self.links),
            priority=bool(self.priority),
        )

    @property
    def has_filters(self) -> bool:
        """Whether any filter narrows the memories searched."""
        return any(
            getattr(self, name) is not None
            for name in (
                "user_id",
                "agent_id",
                "session_id",
                "kinds",
                "levels",
                "since",
                "until",
                "metadata",
                "as_of",
            )
        )


_NULLABLE = {"budget_tokens", "min_relevance"}


def _one_of(value: object, allowed: tuple[str, ...], what: str) -> str:
    """``value`` when it is one of ``allowed``, else an InputError."""
    for name in allowed:
        if value == name:
            return name
    raise InputError(f"{what} must be one of {', '.join(allowed)}, not {value!r}")


def _switch(value: object) -> object:
    """A stage given as on or off (``expand=True``, ``rerank=False``): True is "auto", False
    "off" (callers outside Python's types, such as JSON, send either)."""
    return "auto" if value is True else "off" if value is False else value


def _tuple(value: Any, allowed: tuple[str, ...], what: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = (value,)
    try:
        items = tuple(value)
    except TypeError:
        raise InputError(f"{what}s must be a list of names") from None
    for item in items:
        _one_of(item, allowed, what)
    return items
