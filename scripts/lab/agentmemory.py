"""The agentmemory data of seed 003: corpus, questions, published chunks and results, relevance.

The folder (given by the caller, never shipped) holds ``corpus/*.json`` (title, url, content),
``evaluation_dataset.json`` (question, reference_answer, gold_articles, gold_chunk_ids per
chunking), ``chunks_<chunking>.jsonl`` (the exact chunks the gold ids name) and
``published_results.json``.

Relevance of a retrieved chunk:

- for the published chunks, by id: the chunk is one of the question's gold chunk ids;
- for any other chunking, by overlap: the chunk and a gold chunk of the same article share at
  least half of the shorter of the two (in characters of the article), as the data README
  suggests (the original tokenizer cannot be loaded offline, so its chunks cannot be remade).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localmem.config import Config, ConversationConfig, EmbedderConfig, EngineConfig
from localmem.errors import InputError

PUBLISHED_CHUNKINGS = ("fixed_256", "fixed_1024", "recursive_512")
MIN_OVERLAP = 0.5


@dataclass(frozen=True)
class Article:
    """One corpus document."""

    title: str
    url: str
    content: str
    file: str


@dataclass(frozen=True)
class EvalQuestion:
    """A question with its reference answer and gold evidence."""

    question: str
    reference_answer: str
    gold_articles: tuple[str, ...]
    gold_chunk_ids: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class Span:
    """Where a chunk sits: its article and character range in the article's content."""

    title: str
    start: int
    end: int

    def overlap(self, other: Span) -> int:
        """Characters the two spans share (0 for different articles)."""
        if self.title != other.title:
            return 0
        return max(0, min(self.end, other.end) - max(self.start, other.start))


@dataclass(frozen=True)
class PublishedChunk:
    """A chunk of the original experiment, located in its article."""

    id: str
    title: str
    text: str
    span: Span


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path} is missing (is this the agentmemory data folder?)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from None


def load_corpus(folder: str | Path) -> list[Article]:
    """The articles of ``folder/corpus``, by title."""
    corpus = Path(folder).expanduser() / "corpus"
    files = sorted(corpus.glob("*.json"))
    if not files:
        raise InputError(f"no articles in {corpus} (is this the agentmemory data folder?)")
    out = []
    for f in files:
        d = _read_json(f)
        if not isinstance(d, dict) or not str(d.get("content", "")).strip():
            raise InputError(f"{f} is not an article (title, url, content)")
        out.append(
            Article(str(d.get("title") or f.stem), str(d.get("url", "")), d["content"], f.stem)
        )
    return sorted(out, key=lambda a: a.title)


def load_questions(folder: str | Path) -> list[EvalQuestion]:
    """The evaluation questions."""
    path = Path(folder).expanduser() / "evaluation_dataset.json"
    data = _read_json(path)
    if not isinstance(data, list) or not data:
        raise InputError(f"{path} holds no questions")
    try:
        return [
            EvalQuestion(
                q["question"],
                q["reference_answer"],
                tuple(q.get("gold_articles", ())),
                {k: tuple(v) for k, v in q.get("gold_chunk_ids", {}).items()},
            )
            for q in data
        ]
    except (KeyError, TypeError) as exc:
        raise InputError(f"{path}: a question lacks {exc}") from None


def load_published_chunks(
    folder: str | Path, chunking: str, articles: Sequence[Article]
) -> list[PublishedChunk]:
    """The exact chunks of one published chunking, each located in its article."""
    path = Path(folder).expanduser() / f"chunks_{chunking}.jsonl"
    if not path.exists():
        raise InputError(f"{path} is missing; known chunkings: {', '.join(PUBLISHED_CHUNKINGS)}")
    by_title = {a.title: a.content for a in articles}
    out = []
    cursor: dict[str, int] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            cid, title, text = row["id"], row["title"], row["text"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise InputError(f"{path} line {number}: not a chunk ({exc})") from None
        content = by_title.get(title, "")
        # chunks come in article order: search after the previous one, so repeats resolve
        start = content.find(text, cursor.get(title, 0))
        if start < 0:
            start = content.find(text)
        span = Span(title, start, start + len(text)) if start >= 0 else Span(title, -1, -1)
        if start >= 0:
            cursor[title] = start + 1
        out.append(PublishedChunk(cid, title, text, span))
    return out


def load_published_results(folder: str | Path) -> dict[str, dict[str, Any]]:
    """The original experiment's aggregates by configuration name."""
    path = Path(folder).expanduser() / "published_results.json"
    data = _read_json(path)
    try:
        return {r["config_name"]: r for r in data}
    except (KeyError, TypeError) as exc:
        raise InputError(f"{path}: a result lacks {exc}") from None


def gold_spans(
    question: EvalQuestion, chunking: str, chunks: dict[str, PublishedChunk]
) -> list[Span]:
    """Where the question's gold chunks (of one published chunking) sit in the articles."""
    return [chunks[c].span for c in question.gold_chunk_ids.get(chunking, ()) if c in chunks]


def relevant_by_overlap(span: Span, gold: Sequence[Span], *, min_share: float = MIN_OVERLAP):
    """Whether a chunk shares at least ``min_share`` of the shorter of it and a gold chunk."""
    for g in gold:
        shared = span.overlap(g)
        shorter = min(span.end - span.start, g.end - g.start)
        if shorter > 0 and shared >= min_share * shorter:
            return True
    return False


def first_relevant(flags: Sequence[bool]) -> int | None:
    """1-based rank of the first relevant item, or None."""
    return next((i for i, f in enumerate(flags, 1) if f), None)


def hit_rate(flags: Sequence[bool], k: int) -> float:
    """1 when a relevant item is among the first ``k``."""
    return 1.0 if any(flags[:k]) else 0.0


def reciprocal_rank(flags: Sequence[bool], k: int) -> float:
    """1/rank of the first relevant item within the first ``k`` (0 when none)."""
    rank = first_relevant(flags[:k])
    return 1.0 / rank if rank else 0.0


def build_store(
    folder: Path,
    source: str,
    cfg: Any,
    articles: Sequence[Article],
    published: Sequence[PublishedChunk],
    embedder: Any,
) -> Any:
    """A store of the corpus: the published chunks as they are (``source="published"``), or
    the articles chunked with ``cfg``'s strategy, size and overlap (``"ours"``)."""
    from localmem.ingest import ingest_document
    from localmem.memory import Memory

    config = Config(
        embedder=EmbedderConfig(model=embedder.config.model)
        if hasattr(embedder, "config")
        else EmbedderConfig(),
        engine=EngineConfig(kind="none"),  # the experiment passes its engine to the agent
        conversation=ConversationConfig(phenomena=tuple(a.title for a in articles)),
    )
    mem = Memory.open(folder, config=config, embedder=embedder)
    if source == "published":
        mem.add_many(
            [
                {
                    "content": c.text,
                    "kind": "chunk",
                    "metadata": {
                        "chunk_id": c.id,
                        "title": c.title,
                        "source": c.title,
                        "start": c.span.start,
                        "end": c.span.end,
                        "tokens": mem.embedder.count_tokens(c.text),
                    },
                }
                for c in published
            ]
        )
        return mem
    for art in articles:
        ingest_document(
            mem,
            art.content,
            source=art.file,
            chunker=cfg.strategy,
            chunk_tokens=cfg.size,
            overlap_tokens=cfg.overlap,
            title=art.title,
        )
    return mem
