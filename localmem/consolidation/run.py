"""``consolidate``: read a scope, plan, then write the whole run in one transaction."""

from __future__ import annotations

import hashlib
import time
from datetime import datetime

import numpy as np

from localmem import validate
from localmem.consolidation import scope
from localmem.consolidation.cluster import ClusterParams
from localmem.consolidation.model import ConsolidationReport, Derived, KnownFact, Source
from localmem.consolidation.patterns import MetaDraft
from localmem.consolidation.plan import (
    FactDraft,
    Plan,
    Settings,
    add_fact,
    attach_leftovers,
    centroid_of,
    clusters_of,
    fact_context,
    names_of,
    nearest_known,
    plan_meta,
    task_inputs,
)
from localmem.consolidation.write import write_plan
from localmem.errors import EngineUnavailableError, InputError, SchemaError
from localmem.llm.tasks import MODEL_FREE, Implementation
from localmem.store.kernel import HasKernel, Kernel, kernel_of
from localmem.store.memories import new_id
from localmem.types import embedding_text

#: the implementations a run may ask for, by the name it gives
IMPLEMENTATIONS: dict[str, Implementation] = {
    "auto": "auto",
    "model": "model",
    "model-free": "model-free",
}
WITHIN = ("scope", "session")


def consolidate(
    memory: Kernel | HasKernel,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    within: str | None = None,
    window_days: float | None = None,
    threshold: float | None = None,
    implementation: str | None = None,
    meta: bool = True,
    dry_run: bool = False,
    now: datetime | None = None,
) -> ConsolidationReport:
    """Consolidate a scope's episodic memories into semantic facts and meta patterns.

    Args:
        memory: The store.
        user_id: Whose memories (None: those without a user).
        agent_id: Only this agent's memories (None: any).
        within: ``scope`` (default) or ``session`` (never mix sessions in a cluster).
        window_days: Never cluster memories further apart in event time than this.
        threshold: Least average cosine similarity within a cluster.
        implementation: ``auto``, ``model`` or ``model-free`` (default from the config).
        meta: Also write meta memories (patterns across facts).
        dry_run: Plan and report, write nothing.
        now: The present moment (recorded with the run).

    Raises:
        InputError: A bad option.
        NotFoundError: The named user or agent has no memories.
        EngineUnavailableError: ``implementation="model"`` without an engine.
        SchemaError: The engine's output stayed invalid after a retry (nothing is written).
    """
    started = time.perf_counter()
    kernel = kernel_of(memory)
    settings = _settings(kernel, within, window_days, threshold, implementation, meta)
    user_id = validate.scope_id(user_id, "user_id")
    agent_id = validate.scope_id(agent_id, "agent_id")
    db = kernel.db
    scope.check_scope(db, user_id, agent_id)
    if settings.implementation == "model" and kernel.engine is None:
        raise EngineUnavailableError(
            "consolidation was asked to use a model but no engine is configured"
        )
    episodic = scope.episodic(db, user_id, agent_id)
    done = scope.consolidated_ids(db, user_id, agent_id)
    pending = [s for s in episodic if s.id not in done]
    known = scope.known_facts(db, user_id, agent_id)
    plan = Plan()
    by_id = {s.id: s for s in episodic}
    engine_patterns = _plan_facts(kernel, plan, pending, known, settings)
    if settings.meta and (plan.facts or plan.extend or known):
        subject = user_id if len({s.speaker for s in episodic} - {None}) == 0 else None
        plan_meta(
            plan,
            known,
            by_id,
            scope.known_meta(db, user_id, agent_id),
            settings,
            subject=subject,
            extra=engine_patterns,
        )
    run_id = None
    params = _run_params(settings, now)
    ids: dict[str, str] = {}
    if not dry_run and (plan.facts or plan.meta or plan.extend or plan.replaced):
        run_id, ids = write_plan(
            kernel,
            plan,
            sources=by_id,
            user_id=user_id,
            agent_id=agent_id,
            counts=(len(episodic), plan.clusters),
            params=params,
        )
    return ConsolidationReport(
        user_id=user_id,
        agent_id=agent_id,
        dry_run=dry_run,
        run_id=run_id,
        episodic=len(episodic),
        pending=len(pending),
        clusters=plan.clusters,
        semantic=_semantic(plan),
        extended=len(plan.extend),
        meta=_meta(plan, ids),
        replaced=tuple(m.id for m in plan.replaced),
        served_by=tuple(sorted(plan.served_by)),
        seconds=time.perf_counter() - started,
        prompt_tokens=plan.prompt_tokens,
        completion_tokens=plan.completion_tokens,
        warnings=tuple(plan.warnings),
    )


def _run_params(settings: Settings, now: datetime | None) -> dict[str, object]:
    """The settings a run is recorded with (the ``consolidation_runs`` row)."""
    return {
        "threshold": settings.cluster.threshold,
        "max_cluster": settings.cluster.max_size,
        "min_cluster": settings.min_cluster,
        "within_session": settings.cluster.within_session,
        "window_days": settings.cluster.window_days,
        "implementation": settings.implementation,
        "now": now.isoformat() if now else None,
    }


def _semantic(plan: Plan) -> tuple[Derived, ...]:
    """The semantic facts a plan makes, as the report lists them."""
    return tuple(
        Derived(f.id, "semantic", f.content, f.context, tuple(f.sources), f.served_by)
        for f in plan.facts
    )


def _meta(plan: Plan, ids: dict[str, str]) -> tuple[Derived, ...]:
    """The meta memories a plan makes, by the ids they were written under (their keys in a
    dry run)."""
    return tuple(
        Derived(ids.get(m.key, m.key), "meta", m.content, None, m.sources, MODEL_FREE)
        for m in plan.meta
    )


def _plan_facts(
    kernel: Kernel, plan: Plan, pending: list[Source], known: list, settings: Settings
) -> list[MetaDraft]:
    """Facts per cluster (through the task), then left-overs attached; returns engine patterns."""
    from localmem.consolidation.task import SPEC
    from localmem.llm.tasks import TaskContext, run_task

    clusters = clusters_of(pending, settings.cluster)
    big = [c for c in clusters if len(c) >= settings.min_cluster]
    plan.clusters = len(big)
    context = TaskContext(embedder=kernel.embedder, config=kernel.config)
    engine = kernel.engine if settings.implementation != MODEL_FREE else None
    drafts: list[tuple[str, str, list[Source], list[Source], str]] = []
    patterns: list[MetaDraft] = []
    for cluster in big:
        members = [pending[i] for i in cluster]
        near = nearest_known(centroid_of(members), known, most=5) if known else []
        inputs = task_inputs(members, [f.content for _, f in near])
        try:
            result = run_task(
                SPEC,
                inputs,
                engine=engine,
                context=context,
                implementation=settings.implementation,
                max_tokens=settings.max_tokens,
            )
        except (SchemaError, InputError) as exc:  # one bad cluster must not sink the run
            plan.warnings.append(f"cluster of {members[0].id[:8]}: {exc}")
            continue
        plan.served_by.add(result.served_by)
        plan.prompt_tokens += int(result.usage.prompt_tokens or 0)
        plan.completion_tokens += int(result.usage.completion_tokens or 0)
        shown = members[: result.memories_shown or len(members)]
        for fact in result.value.facts:
            cited = [shown[i - 1] for i in dict.fromkeys(fact.sources) if 0 < i <= len(shown)]
            text = " ".join(fact.fact.split())
            if cited and text:  # the schema holds the model to cited, bounded sentences
                drafts.append((text, "", cited, members, result.served_by))
        for pat in result.value.patterns:
            cited = [shown[i - 1] for i in dict.fromkeys(pat.sources) if 0 < i <= len(shown)]
            text = " ".join(pat.pattern.split())
            if cited and text:
                key = "pattern:" + hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
                patterns.append(MetaDraft(key, pat.kind, None, text, tuple(c.id for c in cited)))
    _add_drafts(kernel, plan, drafts, known, settings)
    clustered = {pending[i].id for c in big for i in c}
    leftovers = [s for s in pending if s.id not in clustered and s.id not in plan.consolidated]
    attach_leftovers(plan, leftovers, known, settings.attach_similarity)
    return patterns


def _add_drafts(kernel: Kernel, plan: Plan, drafts: list, known: list, settings: Settings) -> None:
    if not drafts:
        return
    names = names_of(list({m.id: m for _, _, _, ms, _ in drafts for m in ms}.values()))
    contexts = [fact_context(members, names=names) for _, _, _, members, _ in drafts]
    texts = [embedding_text(d[0], c) for d, c in zip(drafts, contexts, strict=True)]
    vectors = np.asarray(kernel.embedder.embed_batch(texts), dtype=np.float32)
    hashes: dict[str, KnownFact] = {}
    for fact in known:
        hashes.setdefault(fact.content_hash, fact)
    for (content, _, cited, members, served), ctx, vec in zip(
        drafts, contexts, vectors, strict=True
    ):
        draft = FactDraft(
            id=new_id(),
            content=content,
            context=ctx,
            sources=[c.id for c in cited],
            weights=[1.0] * len(cited),
            members=[m.id for m in members],
            served_by=served,
            vector=vec,
        )
        add_fact(plan, draft, known, hashes, settings)


def _settings(
    kernel: Kernel,
    within: str | None,
    window_days: float | None,
    threshold: float | None,
    implementation: str | None,
    meta: bool,
) -> Settings:
    cfg = kernel.config.consolidation
    within = within or cfg.within
    if within not in WITHIN:
        raise InputError(f"within must be one of {', '.join(WITHIN)}, not {within!r}")
    asked = implementation or cfg.implementation
    chosen = IMPLEMENTATIONS.get(asked) if isinstance(asked, str) else None
    if chosen is None:
        raise InputError(
            f"implementation must be one of {', '.join(IMPLEMENTATIONS)}, not {asked!r}"
        )
    threshold = cfg.threshold if threshold is None else threshold
    if not isinstance(threshold, (int, float)) or not -1.0 <= float(threshold) <= 1.0:
        raise InputError(f"threshold must be a number from -1 to 1, not {threshold!r}")
    window = cfg.window_days if window_days is None else window_days
    if window is not None and (not isinstance(window, (int, float)) or window <= 0):
        raise InputError(f"window_days must be a positive number, not {window!r}")
    return Settings(
        cluster=ClusterParams(
            threshold=float(threshold),
            max_size=cfg.max_cluster,
            within_session=within == "session",
            window_days=float(window) if window is not None else None,
        ),
        min_cluster=cfg.min_cluster,
        duplicate_similarity=cfg.duplicate_similarity,
        attach_similarity=cfg.attach_similarity,
        meta_min_facts=cfg.meta_min_facts,
        implementation=chosen,
        max_tokens=cfg.max_tokens,
        meta=bool(meta),
    )
