"""What a search stage is, and how the stages of a search are put in order.

A stage is a function ``run(ctx) -> dict | None`` over the :class:`SearchContext`: None means
it did not run (switched off); a dict (possibly empty) becomes a :class:`StageReport` with
those notes. The core stages are listed in :data:`localmem.retrieval.pipeline.CORE_STAGES`;
a mechanism adds its own (``Plugin.stages``), each placed right after a named stage.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from localmem.retrieval.context import SearchContext

StageFn = Callable[["SearchContext"], "dict[str, Any] | None"]


@dataclass(frozen=True)
class StageSpec:
    """One stage of the read pipeline.

    Attributes:
        name: Its name in reports and options (``temporal``, ``links``...).
        run: The stage itself.
        implementation: What serves it, as reports name it (a stage may say otherwise in its
            notes, under ``implementation``).
        after: For a stage a mechanism adds: the stage it runs after.
        served: When what serves it depends on the search (candidate generation names the
            retrievers of its mode): that label, from the context.
    """

    name: str
    run: StageFn
    implementation: str
    after: str | None = None
    served: Callable[[SearchContext], str] | None = None

    def served_by(self, ctx: SearchContext) -> str:
        """The implementation label for this search."""
        return self.served(ctx) if self.served is not None else self.implementation


def compose(core: Sequence[StageSpec], extra: Sequence[StageSpec]) -> tuple[StageSpec, ...]:
    """The core stages with each extra one inserted after the stage it names.

    Raises:
        ValueError: a stage name is taken twice, or an extra stage follows no known stage.
    """
    order = list(core)
    for stage in extra:
        names = [s.name for s in order]
        if stage.name in names:
            raise ValueError(f"two search stages are named {stage.name!r}")
        if stage.after not in names:
            raise ValueError(
                f"search stage {stage.name!r} follows {stage.after!r}, which is not a stage "
                f"(stages: {', '.join(names)})"
            )
        order.insert(names.index(stage.after) + 1, stage)
    return tuple(order)
