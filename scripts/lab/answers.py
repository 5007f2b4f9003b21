"""Answer quality on LoCoMo: token F1, BLEU-1, the LLM judge, refusals (pure metrics + a runner).

F1 and BLEU-1 are computed here (no nltk, nothing downloaded): answers are lower-cased,
punctuation and the articles a/an/the are removed, and words are stemmed with the project's
Snowball stemmer (LoCoMo's own scorer stems too). BLEU-1 is clipped unigram precision with the
brevity penalty, against the one reference answer.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from localmem.text import stem

if TYPE_CHECKING:
    from lab.locomo import Conversation, Question
    from localmem.memory import Memory

_ARTICLES = {"a", "an", "the"}
#: phrases that mean "the memories do not say" (category 5 wants exactly this)
REFUSALS = (
    "not in memory",
    "not mentioned",
    "no information",
    "not enough information",
    "no mention",
    "not stated",
    "not specified",
    "unknown",
    "cannot be determined",
    "can't be determined",
    "does not say",
    "don't know",
    "do not know",
    "no evidence",
    "not available",
)


def answer_tokens(text: str) -> list[str]:
    """Normalised, stemmed words of an answer."""
    words = re.findall(r"[a-z0-9]+", str(text).lower())
    return [stem(w) for w in words if w not in _ARTICLES]


def f1_score(prediction: str, reference: str) -> float:
    """Token F1 between a predicted and a reference answer (0 when either has no words)."""
    pred, ref = answer_tokens(prediction), answer_tokens(reference)
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def bleu1(prediction: str, reference: str) -> float:
    """BLEU-1: clipped unigram precision times the brevity penalty (one reference)."""
    pred, ref = answer_tokens(prediction), answer_tokens(reference)
    if not pred or not ref:
        return 0.0
    clipped = sum((Counter(pred) & Counter(ref)).values())
    precision = clipped / len(pred)
    brevity = 1.0 if len(pred) > len(ref) else math.exp(1 - len(ref) / len(pred))
    return brevity * precision


def is_refusal(answer: str) -> bool:
    """Whether an answer says the information is not there."""
    low = " ".join(str(answer).lower().split())
    return not low or any(p in low for p in REFUSALS)


def memory_time(when: datetime | None) -> str | None:
    """A memory's date as the answer prompt shows it ("8 May 2023")."""
    return f"{when.day} {when:%B %Y}" if when else None


@dataclass
class AnswerResult:
    """One question answered and graded."""

    sample_id: str
    category: int
    question: str
    reference: str | None
    answer: str
    f1: float | None
    bleu1: float | None
    judge: float | None  # 1 correct, 0 wrong; None for category 5
    refused: bool
    served_by: str
    seconds: float
    tokens: int
    evidence_cited: list[str] = field(default_factory=list)


def answer_questions(
    memory: Memory,
    conv: Conversation,
    search_options: dict[str, Any],
    *,
    k: int = 10,
    categories: Sequence[int] = (1, 2, 3, 4, 5),
    limit: int | None = None,
    now: datetime | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[AnswerResult]:
    """Retrieve, answer (the ``answer`` task) and grade (``judge``) every question.

    Category 5 questions have no reference answer: they are scored as refusals (the right
    answer is that the memories do not say).
    """
    from localmem.llm import TaskContext

    engine = memory.engine
    task_ctx = TaskContext(embedder=memory.embedder, config=memory.config, now=now)
    questions = [q for q in conv.questions if q.category in set(categories)]
    if limit is not None:
        questions = questions[:limit]
    out: list[AnswerResult] = []
    for i, q in enumerate(questions):
        out.append(_answer_one(memory, conv, q, search_options, k, engine, task_ctx, now))
        if progress:
            progress(i + 1, len(questions))
    return out


def _answer_one(memory, conv, q: Question, options, k, engine, task_ctx, now) -> AnswerResult:
    from localmem.llm import run_task
    from localmem.llm.schema import MemoryLine

    hits = memory.search(q.question, k=k, user_id=conv.sample_id, now=now, **options).hits
    lines = tuple(
        MemoryLine(text=h.memory.content, time=memory_time(h.memory.event_time)) for h in hits
    )
    started = time.perf_counter()
    asked = memory_time(now)
    from lab.judge import SPEC as JUDGE
    from localmem.answers.tasks.answer import SPEC as ANSWER

    result = run_task(
        ANSWER,
        {"question": q.question, "memories": lines, "now": asked},
        engine=engine,
        context=task_ctx,
    )
    answer = result.value.answer
    tokens = result.usage.prompt_tokens + result.usage.completion_tokens
    cited = [
        hits[n - 1].memory.metadata.get("dia_id", "")
        for n in result.value.evidence
        if 1 <= n <= len(hits)
    ]
    reference = q.answer
    f1 = b1 = judged = None
    if q.category != 5 and reference is not None:
        f1, b1 = f1_score(answer, reference), bleu1(answer, reference)
        verdict = run_task(
            JUDGE,
            {"question": q.question, "reference": reference, "answer": answer},
            engine=engine,
            context=task_ctx,
        )
        judged = 1.0 if verdict.value.label == "CORRECT" else 0.0
        tokens += verdict.usage.prompt_tokens + verdict.usage.completion_tokens
    return AnswerResult(
        conv.sample_id,
        q.category,
        q.question,
        reference,
        answer,
        f1,
        b1,
        judged,
        is_refusal(answer),
        result.served_by,
        time.perf_counter() - started,
        tokens,
        cited,
    )


def summarize_answers(results: Sequence[AnswerResult]) -> dict[str, dict[str, float]]:
    """Per category and overall (1-4): F1, BLEU-1, judge; category 5: correct refusals."""
    groups: dict[str, list[AnswerResult]] = defaultdict(list)
    for r in results:
        groups[str(r.category)].append(r)
        if r.category != 5:
            groups["overall"].append(r)
    out: dict[str, dict[str, float]] = {}
    for name, rows in groups.items():
        entry: dict[str, float] = {"n": len(rows)}
        if name == "5":
            entry["refusal_rate"] = sum(r.refused for r in rows) / len(rows)
        else:
            for metric in ("f1", "bleu1", "judge"):
                vals = [getattr(r, metric) for r in rows if getattr(r, metric) is not None]
                entry[metric] = sum(vals) / len(vals) if vals else float("nan")
        entry["seconds_mean"] = sum(r.seconds for r in rows) / len(rows)
        entry["tokens_mean"] = sum(r.tokens for r in rows) / len(rows)
        out[name] = entry
    return out
