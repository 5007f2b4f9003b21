"""The A-Mem experiment (seed 001) on thought sessions: does evolution improve retrieval?

Sessions ship with localmem (``localmem/eval/data/amem/*.json``): the seed's quick protocol (5
thoughts on API rate limiting, then the insight "sliding window, not fixed buckets") and longer
sessions of 20+ thoughts with relevance labels (1-5, written before any run) and multi-hop
queries that need two thoughts. Each session is run twice on fresh stores, without and with
evolution, with the same queries; the metrics are the seed's:

- share of neighbours updated (and linked) by evolution;
- relevance of the top 3 (mean label; unlisted thoughts count 1), and the judge's when given;
- connections surfaced that the baseline missed (a thought labelled 4+ in the top 3 of the
  evolved condition and not of the baseline), and those lost (the reverse);
- multi-hop: both needed thoughts in the top k;
- model tokens per added thought, and the time evolution adds per add.

Metric functions are pure; the runner takes a ``make_memory(path, evolution=...)`` factory.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from statistics import mean
from typing import TYPE_CHECKING, Any

from localmem.errors import InputError

if TYPE_CHECKING:
    from localmem.memory import Memory

DATA = "data/amem"
TOP = 3  # the seed scores the top 3
GOOD = 4  # a label from which a thought counts as a real connection for the query

#: judge(query, texts) -> a relevance in 1..5 for each text (an LLM judge, when a model is there)
Judge = Callable[[str, Sequence[str]], list[float]]


@dataclass(frozen=True)
class LabelledQuery:
    """A query with relevance labels per thought number (1-5), maybe needing two thoughts."""

    text: str
    relevance: dict[int, int]
    needs: tuple[int, int] | None = None

    def label(self, number: int) -> int:
        """The relevance of a thought (unlisted: 1)."""
        return self.relevance.get(number, 1)


@dataclass(frozen=True)
class ThoughtSession:
    """A session of thoughts and its labelled queries."""

    name: str
    title: str
    protocol: str  # "quick" (evolve only the insight) or "session" (evolve every add)
    thoughts: tuple[str, ...]
    queries: tuple[LabelledQuery, ...]
    insight: int | None = None


def parse_session(data: Any, origin: str) -> ThoughtSession:
    """A session from its JSON form; InputError names what is wrong."""
    try:
        thoughts = tuple(str(t) for t in data["thoughts"])
        queries = []
        for q in data["queries"]:
            rel = {int(n): int(v) for n, v in q["relevance"].items()}
            needs = tuple(int(n) for n in q["needs"]) if q.get("needs") else None
            if any(not 1 <= n <= len(thoughts) for n in [*rel, *(needs or ())]):
                raise ValueError(f"query {q['query']!r} names a thought that does not exist")
            if any(not 1 <= v <= 5 for v in rel.values()):
                raise ValueError(f"query {q['query']!r} has a label outside 1-5")
            if needs is not None and len(needs) != 2:
                raise ValueError(f"query {q['query']!r}: needs names two thoughts")
            queries.append(LabelledQuery(str(q["query"]), rel, needs))  # type: ignore[arg-type]
        protocol = data.get("protocol", "session")
        if protocol not in ("quick", "session"):
            raise ValueError(f"unknown protocol {protocol!r}")
        insight = data.get("insight")
        if protocol == "quick" and insight != len(thoughts):
            raise ValueError("the quick protocol's insight must be its last thought")
        return ThoughtSession(
            str(data["name"]), str(data["title"]), protocol, thoughts, tuple(queries), insight
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{origin}: not an A-Mem session: {exc}") from None


def shipped_sessions(names: Sequence[str] | None = None) -> list[ThoughtSession]:
    """The sessions shipped with localmem (all, or the named ones; quick first)."""
    folder = resources.files("lab").joinpath(DATA)
    found = {}
    for entry in folder.iterdir():
        if entry.name.endswith(".json"):
            session = parse_session(json.loads(entry.read_text(encoding="utf-8")), entry.name)
            found[session.name] = session
    if names:
        unknown = sorted(set(names) - set(found))
        if unknown:
            raise InputError(f"unknown session(s) {', '.join(unknown)}; known: {', '.join(found)}")
        return [found[n] for n in names]
    return sorted(found.values(), key=lambda s: (s.protocol != "quick", s.name))


# -- metrics (pure) ------------------------------------------------------------------------------
def relevance_at(ranked: Sequence[int], query: LabelledQuery, k: int = TOP) -> float:
    """Mean label of the top ``k`` (a missing hit counts as 1)."""
    labels = [query.label(n) for n in ranked[:k]]
    labels += [1] * (k - len(labels))
    return mean(labels)


def surfaced(
    test: Sequence[int], base: Sequence[int], query: LabelledQuery, k: int = TOP
) -> list[int]:
    """Thoughts labelled ``GOOD``+ in the test's top k that the baseline's top k missed."""
    return [n for n in test[:k] if query.label(n) >= GOOD and n not in base[:k]]


def pair_found(ranked: Sequence[int], needs: tuple[int, int], k: int) -> bool:
    """Both thoughts a multi-hop query needs are in the top k."""
    return set(needs) <= set(ranked[:k])


# -- running -------------------------------------------------------------------------------------
@dataclass
class Condition:
    """What one condition retrieved for every query (thought numbers, best first)."""

    name: str
    ranked: list[list[int]]
    judged: list[float] | None = None


@dataclass
class SessionRun:
    """Everything measured on one session."""

    session: ThoughtSession
    conditions: dict[str, Condition]
    steps: dict[str, int]  # evolution step outcomes by status
    model_tokens: int
    served_by: list[str]
    evolved_adds: int
    add_ms_plain: float
    add_ms_evolve: float
    context_tokens: float  # mean tokens of evolved context per thought
    links: set[tuple[int, int]]
    examples: list[dict[str, str]] = field(default_factory=list)


def _numbers(mem: Memory, query: str, ids: dict[str, int], k: int, **options) -> list[int]:
    return [ids[h.memory.id] for h in mem.search(query, k=k, **options) if h.memory.id in ids]


def _add_all(mem: Memory, thoughts: Sequence[str], evolve_from: int | None) -> tuple[dict, float]:
    """Add thoughts as a session (evolving from thought ``evolve_from`` on, inline); returns
    id -> number and the mean milliseconds per add."""
    session = mem.start_session("A-Mem experiment")
    ids: dict[str, int] = {}
    times = []
    for n, text in enumerate(thoughts, start=1):
        evolving = evolve_from is not None and n >= evolve_from
        t0 = time.perf_counter()
        thought = mem.add_thought(session.id, text, evolve=evolving or None)
        times.append((time.perf_counter() - t0) * 1000)
        ids[thought.memory.id] = n
    return ids, mean(times) if times else 0.0


def run_session(
    make_memory: Callable[..., Memory],
    session: ThoughtSession,
    workdir: Path,
    *,
    k: int = 5,
    judge: Judge | None = None,
) -> SessionRun:
    """Run one session without and with evolution; ``make_memory(path)`` opens a fresh store."""
    texts = session.thoughts
    base_mem = make_memory(workdir / f"{session.name}-baseline")
    test_mem = make_memory(workdir / f"{session.name}-evolved")
    try:
        base_ids, plain_ms = _add_all(base_mem, texts, None)
        if session.protocol == "quick":
            # one store: the insight is added plainly, searched ("before"), then evolved
            test_ids, _ = _add_all(test_mem, texts[:-1], None)
            t0 = time.perf_counter()
            insight = test_mem.add(texts[-1], kind="thought")
            test_ids[insight.id] = len(texts)
            before = [_numbers(test_mem, q.text, test_ids, k) for q in session.queries]
            from localmem.evolution import evolve

            evolve(test_mem, insight.id)
            evolve_ms = (time.perf_counter() - t0) * 1000
            evolved_adds = 1
        else:
            test_ids, evolve_ms = _add_all(test_mem, texts, 1)
            before = [_numbers(base_mem, q.text, base_ids, k) for q in session.queries]
            evolved_adds = len(texts)
        conditions = {
            "baseline": Condition("baseline", before),
            "evolved": Condition(
                "evolved", [_numbers(test_mem, q.text, test_ids, k) for q in session.queries]
            ),
            "evolved+links": Condition(
                "evolved+links",
                [_numbers(test_mem, q.text, test_ids, k, links=True) for q in session.queries],
            ),
        }
        if judge is not None:
            for cond in conditions.values():
                cond.judged = _judge(judge, session, cond)
        from localmem import evolution

        done = evolution.totals(test_mem)
        items = test_mem.get_many(list(test_ids))
        ctx_tokens = mean(
            test_mem.embedder.count_tokens(i.context) if i.context else 0 for i in items
        )
        links = {
            tuple(sorted((test_ids[a], test_ids[b])))
            for a, b in evolution.links_between(test_mem)
            if a in test_ids and b in test_ids
        }
        examples = [
            {
                "new": f"{test_ids[src]}. {texts[test_ids[src] - 1]}",
                "neighbour": f"{test_ids[dst]}. {texts[test_ids[dst] - 1]}",
                "context": context or "",
            }
            for src, dst, context in done.rewrites
        ]
        return SessionRun(
            session,
            conditions,
            done.steps,
            done.tokens,
            done.served_by,
            evolved_adds,
            plain_ms,
            evolve_ms,
            ctx_tokens,
            links,  # type: ignore[arg-type]
            examples,
        )
    finally:
        base_mem.close()
        test_mem.close()


def _judge(judge: Judge, session: ThoughtSession, cond: Condition) -> list[float]:
    """Mean judged relevance of the top 3 per query (the judge sees the thoughts' own text)."""
    out = []
    for q, ranked in zip(session.queries, cond.ranked, strict=True):
        texts = [session.thoughts[n - 1] for n in ranked[:TOP]]
        scores = list(judge(q.text, texts)) if texts else []
        scores += [1.0] * (TOP - len(scores))
        out.append(mean(scores))
    return out


def make_judge(engine: Any) -> Judge:
    """An LLM judge of relevance (1-5) through the ``rerank`` task (relevance 0-1 per memory,
    mapped to 1 + 4r; a memory the model did not score counts 1)."""
    from localmem.llm.tasks import run_task
    from localmem.retrieval.tasks.rerank import SPEC

    def judge(query: str, texts: Sequence[str]) -> list[float]:
        memories = [{"text": t} for t in texts]
        value = run_task(SPEC, {"query": query, "memories": memories}, engine=engine).value
        return [1.0 + 4.0 * (r if r is not None else 0.0) for r in value.by_memory(len(texts))]

    return judge
