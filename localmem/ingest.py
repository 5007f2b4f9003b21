"""Ingesting files: JSONL records as memories, text and markdown documents as chunks.

One document is all or nothing: its chunks are embedded first and written in one transaction,
so an error never leaves half a document in the store.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localmem import validate
from localmem.chunking import (
    TextChunk,
    check_sizes,
    chunk_id,
    fixed_chunks,
    recursive_chunks,
    tokenizer_for,
)
from localmem.errors import InputError
from localmem.files import MAX_FILE_BYTES, decode_text, read_file_bytes
from localmem.store import memories, records
from localmem.text import content_hash
from localmem.types import IngestReport

if TYPE_CHECKING:
    from localmem.memory import Memory

TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".rst", ".text", ""}
JSONL_SUFFIXES = {".jsonl", ".ndjson"}

#: a chunker turns a document into chunks: chunker(text, size_tokens, overlap_tokens, count),
#: where ``count`` counts tokens (a :class:`localmem.chunking.Tokenizer`, which also knows where
#: the tokens are); it returns texts, or :class:`TextChunk` objects that keep their offsets
Chunker = Callable[[str, int, int, Callable[[str], int]], list[str] | list[TextChunk]]


def paragraph_chunks(text: str, size: int, overlap: int, count: Callable[[str], int]) -> list[str]:
    """Blank-line paragraphs, merged while they fit ``size`` tokens (no overlap)."""
    del overlap  # paragraphs are natural boundaries; nothing is repeated
    paragraphs = [p.strip() for p in text.replace("\r\n", "\n").split("\n\n") if p.strip()]
    chunks: list[str] = []
    current: list[str] = []
    used = 0
    for para in paragraphs:
        n = count(para)
        if current and used + n > size:
            chunks.append("\n\n".join(current))
            current, used = [], 0
        current.append(para)
        used += n
    if current:
        chunks.append("\n\n".join(current))
    return chunks


#: chunking strategies by name (fixed and recursive: see localmem.chunking)
CHUNKERS: dict[str, Chunker] = {
    "paragraph": paragraph_chunks,
    "fixed": fixed_chunks,
    "recursive": recursive_chunks,
}


def register_chunker(name: str, chunker: Chunker) -> None:
    """Add a chunking strategy; a name can be registered once."""
    if name in CHUNKERS:
        raise ValueError(f"chunker {name!r} is already registered")
    CHUNKERS[name] = chunker


def _infers(memory: Memory, infer: bool | None, records: list, defaults: dict) -> bool:
    """Whether JSONL lines are inferred: as asked; by default for a conversation (every line
    a message: turns inference on where it is the point), else the store's
    ``infer.on_add``."""
    if infer is not None:
        return memory.infers(infer)
    kinds = {(r.get("kind") if isinstance(r, dict) else None) or defaults["kind"] for r in records}
    return kinds == {"message"} or memory.infers(None)


def _ingest_inferred(memory: Memory, records: list, defaults: dict, report, progress) -> None:
    """Each line through :meth:`Memory.infer`, in order (a later line sees the earlier)."""
    counts: dict[str, int] = {}
    for n, record in enumerate(records, 1):
        fields = {**defaults, **(record if isinstance(record, dict) else {"content": record})}
        content = fields.pop("content")
        for applied in memory.infer(content, **fields):
            counts[applied.event] = counts.get(applied.event, 0) + 1
        if progress:
            progress(n, len(records))
    report.documents, report.inferred = 1, counts
    report.memories = counts.get("ADD", 0) + counts.get("INVALIDATE", 0)
    report.duplicates = counts.get("NONE", 0)


def ingest_file(
    memory: Memory,
    path: str | Path,
    *,
    chunker: str = "paragraph",
    chunk_tokens: int = 256,
    overlap_tokens: int = 0,
    progress: Callable[[int, int], None] | None = None,
    allow_duplicates: bool = False,
    max_bytes: int = MAX_FILE_BYTES,
    infer: bool | None = None,
    **defaults: Any,
) -> IngestReport:
    """Store a file's contents: JSONL lines as memories, a text document as chunks.

    ``defaults`` (kind, user_id, session_id, ...) apply to every memory written. ``progress`` is
    called with (done, total) units of work. Only regular files of at most ``max_bytes`` are
    read (a symbolic link is followed; the report names the file read). Ingesting the same
    file again stores nothing new: a JSON line that duplicates a live memory (same text, kind,
    scope and event time, :meth:`localmem.Memory.add` ``dedupe``) or a chunk already stored is
    skipped and counted, unless ``allow_duplicates``. JSONL lines are inferred
    (:meth:`localmem.Memory.infer`: facts extracted and reconciled) when ``infer`` is true, and
    by default when every line is a message (a conversation); ``report.inferred`` then counts
    the decisions.
    """
    path = Path(path).expanduser()
    if chunker not in CHUNKERS:
        raise InputError(f"unknown chunking strategy {chunker!r}; known: {', '.join(CHUNKERS)}")
    check_sizes(chunk_tokens, overlap_tokens)
    validate.positive_int(max_bytes, "max_bytes", maximum=2**40)
    report = IngestReport(str(path), errors=[])
    raw, resolved = read_file_bytes(path, max_bytes=max_bytes)
    if path.is_symlink():
        report.resolved = str(resolved)
    text = decode_text(path, raw)
    if not text.strip():
        raise InputError(f"{path} is empty")
    if path.suffix.lower() in JSONL_SUFFIXES:
        defaults.setdefault("kind", "note")  # a line's own "kind" still wins
        records = []
        for number, record in _jsonl_records(text, report):
            try:
                memories.prepare(memory.kernel, record, defaults)  # validate each line alone
            except InputError as exc:
                report.skipped += 1
                _note(report, f"line {number}: {exc}")
                continue
            records.append(record)
        if not records:
            raise InputError(f"{path} holds no usable JSON lines ({report.skipped} skipped)")
        if _infers(memory, infer, records, defaults):
            _ingest_inferred(memory, records, defaults, report, progress)
            return report
        stored = memory.add_many(
            records,
            progress=(lambda n: progress(n, len(records))) if progress else None,
            dedupe=not allow_duplicates,
            **defaults,
        )
        report.documents, report.memories = 1, len(stored)
        if len(stored) < len(records):
            report.duplicates = len(records) - len(stored)
            report.skipped += report.duplicates
            _note(report, f"{report.duplicates} line(s) already stored")
        return report
    if path.suffix.lower() not in TEXT_SUFFIXES:
        raise InputError(
            f"cannot ingest {path.suffix} files; give text (.txt, .md) or JSON lines (.jsonl)"
        )

    def moved(old: str, doc: str) -> bool:  # the text stored from ``old`` has left it
        try:
            raw, _ = read_file_bytes(Path(old), max_bytes=max_bytes)
            return content_hash(decode_text(Path(old), raw))[:16] != doc
        except InputError:
            return True

    # a file is its resolved path (any spelling of it, a link to it, the server's absolute
    # path: one file) and its text (ingest_document says what happens when either changed)
    ingest_document(
        memory,
        text,
        source=str(resolved),
        moved_from=moved,
        chunker=chunker,
        chunk_tokens=chunk_tokens,
        overlap_tokens=overlap_tokens,
        progress=progress,
        report=report,
        allow_duplicates=allow_duplicates,
        **defaults,
    )
    return report


def ingest_document(
    memory: Memory,
    text: str,
    *,
    source: str,
    chunker: str = "paragraph",
    chunk_tokens: int = 256,
    overlap_tokens: int = 0,
    progress: Callable[[int, int], None] | None = None,
    report: IngestReport | None = None,
    title: str | None = None,
    allow_duplicates: bool = False,
    moved_from: Callable[[str, str], bool] | None = None,
    **defaults: Any,
) -> list:
    """Chunk one document and store its chunks in a single unit (all or nothing).

    A document is identified by its ``source`` (a file's resolved path) and its text. Its
    chunks' metadata hold the source, the document's text hash (``doc``), the chunk's place
    (``chunk``, ``line``, and the markdown ``heading`` it falls under) and a ``chunk_id`` made of
    the text hash, the chunking and the chunk (never the path). So:

    - the same source with the same text, chunked the same way, stores nothing new;
    - the same source with another text (an edited file) or chunked another way replaces its
      chunks: the new ones are stored and the old ones deleted (soft: in their history, with the
      reason) in the same unit;
    - a source not stored yet whose text is stored under another source that ``moved_from``
      says it came from (a file renamed or moved, its old path gone) is the same document: its
      chunks' source is updated, nothing is stored. Without ``moved_from`` (text not from a
      file) and for a copy (both paths hold the text), the document is stored as its own.

    ``allow_duplicates`` stores the chunks again whatever is stored.
    """
    pieces = _pieces(memory, text, source, chunker, chunk_tokens, overlap_tokens)
    kind = defaults.pop("kind", None) or "chunk"
    records_ = _chunk_records(
        text, pieces, source, kind, chunker, chunk_tokens, overlap_tokens, title
    )
    doc_id = records_[0]["metadata"]["doc"]
    report = report if report is not None else IngestReport(source, errors=[])
    report.errors = report.errors if report.errors is not None else []
    report.documents += 1
    if allow_duplicates:
        return _store_chunks(memory, records_, [], source, progress, report, defaults)
    wanted = {r["metadata"]["chunk_id"] for r in records_}
    held = stored_chunks(memory, source=source)
    if held and {c.chunk_id for c in held} == wanted:
        _already(report, len(records_), f"{len(records_)} chunk(s) of {source} already stored")
        return []
    if not held and moved_from is not None:
        for old in {c.source for c in stored_chunks(memory, doc=doc_id)}:
            if old != source and moved_from(old, doc_id):
                moved = _move(memory, stored_chunks(memory, source=old), source)
                _already(report, len(records_), f"{source} was {old}: {moved} chunk(s) moved")
                report.moved_from = old
                return []
    stale = [c for c in held if c.chunk_id not in wanted]
    todo = [r for r in records_ if r["metadata"]["chunk_id"] not in {c.chunk_id for c in held}]
    if len(todo) < len(records_):
        _already(report, len(records_) - len(todo), "")
    return _store_chunks(memory, todo, stale, source, progress, report, defaults)


def _pieces(
    memory: Memory, text: str, source: str, chunker: str, chunk_tokens: int, overlap_tokens: int
) -> list[TextChunk]:
    """The document's chunks, each within the store's size limit (else an InputError)."""
    try:
        split = CHUNKERS[chunker]
    except KeyError:
        raise InputError(
            f"unknown chunking strategy {chunker!r}; known: {', '.join(CHUNKERS)}"
        ) from None
    if not text.strip():
        raise InputError(f"document {source} is empty")
    check_sizes(chunk_tokens, overlap_tokens)
    limit = memory.config.store.max_content_chars
    if chunker == "paragraph":  # a paragraph is one chunk at least: check before tokenising it
        longest = max(len(p.strip()) for p in text.replace("\r\n", "\n").split("\n\n"))
        if longest > limit:
            raise InputError(
                f"{source} has a paragraph of {longest:,} characters, more than the limit of "
                f"{limit:,}; use --chunker recursive or fixed"
            )
    tokenizer = tokenizer_for(memory.embedder)
    pieces = [
        c if isinstance(c, TextChunk) else TextChunk(c, -1, -1, tokenizer(c))
        for c in split(text, chunk_tokens, overlap_tokens, tokenizer)
    ]
    pieces = [c for c in pieces if c.text.strip()]
    if not pieces:
        raise InputError(f"document {source} has no text to store")
    too_long = next((c for c in pieces if len(c.text) > limit), None)
    if too_long is not None:
        raise InputError(
            f"a chunk of {source} has {len(too_long.text):,} characters, more than the limit of "
            f"{limit:,}; use a smaller --chunk-tokens"
        )
    return pieces


def _chunk_records(
    text: str,
    pieces: list[TextChunk],
    source: str,
    kind: str,
    chunker: str,
    chunk_tokens: int,
    overlap_tokens: int,
    title: str | None,
) -> list[dict[str, Any]]:
    """The memories of a document's chunks, each with its place and identity in metadata."""
    strategy = f"{chunker}:{chunk_tokens}:{overlap_tokens}"
    doc_id = content_hash(text)[:16]
    places = chunk_places(text, pieces)
    records_ = []
    for i, (chunk, (line, heading)) in enumerate(zip(pieces, places, strict=True)):
        meta: dict[str, Any] = {
            "source": source,
            "doc": doc_id,
            "chunk": i,
            "chunk_id": chunk_id(doc_id, strategy, i, chunk.text),
            "chunker": chunker,
            "chunk_tokens": chunk_tokens,
            "overlap_tokens": overlap_tokens,
            "tokens": chunk.tokens,
            "line": line,
        }
        if heading:
            meta["heading"] = heading
        if chunk.start >= 0:
            meta.update(start=chunk.start, end=chunk.end)
        if title:
            meta["title"] = title
        records_.append({"content": chunk.text, "kind": kind, "metadata": meta})
    return records_


def _note(report: IngestReport, note: str) -> None:
    """Add a line to the report's account of what was skipped or replaced."""
    if report.errors is None:  # a report handed in by the caller may hold no list yet
        report.errors = []
    report.errors.append(note)


def _already(report: IngestReport, n: int, note: str) -> None:
    report.skipped += n
    report.duplicates += n
    if note:
        _note(report, note)


@dataclass(frozen=True)
class StoredChunk:
    """A live chunk of an ingested document, as ingestion sees it."""

    id: str
    label: int
    source: str
    doc: str | None
    chunk_id: str | None


def stored_chunks(
    memory: Memory, *, source: str | None = None, doc: str | None = None
) -> list[StoredChunk]:
    """The live chunks of one source, or of one document text (``doc``: its hash)."""
    where = {"source": source} if source is not None else {"doc": str(doc)}
    rows = records.metadata_rows(
        memory.kernel.db, ("source", "doc", "chunk_id"), where=where, with_label=True
    )
    return [StoredChunk(r[0], r[1], r[2] or "", r[3], r[4]) for r in rows]


def _store_chunks(memory, todo, stale, source, progress, report, defaults) -> list:
    """Store the new chunks and delete the stale ones (an earlier version) in one unit."""
    if not todo and not stale:
        return []
    reason = {"reason": f"replaced by a new version of {source}"}

    def retire(write, _rows) -> None:
        for chunk in stale:
            write.soft_delete(chunk.id, chunk.label, actor="ingest", info=reason)

    rows = [memories.prepare(memory.kernel, r, defaults) for r in todo]
    stored = memories.add(memory.kernel, rows, jobs=memory.jobs_for_add(), extra=retire)
    if progress:
        progress(len(todo), len(todo))
    report.memories += len(stored)
    if stale:
        report.replaced += len(stale)
        _note(report, f"{len(stale)} chunk(s) of an earlier version of {source} deleted")
    return stored


def _move(memory: Memory, chunks: list[StoredChunk], source: str) -> int:
    """Point the chunks of a moved file at its new path (one unit, recorded in history)."""
    items = memories.by_ids(memory.kernel, [c.id for c in chunks])
    with memory.kernel.writing() as write:
        for item in items.values():
            old = item.metadata.get("source")
            new = {**item.metadata, "source": source}
            write.update_fields(
                item,
                {"metadata": (item.metadata, new)},
                None,
                item.text_for_embedding,
                actor="ingest",
                event="UPDATE",
                info={"reason": f"{old} moved to {source}"},
            )
    return len(items)


_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def chunk_places(text: str, pieces: list[TextChunk]) -> list[tuple[int, str | None]]:
    """Where each chunk starts in ``text``: its line (1-based) and the markdown heading it falls
    under (None before the first one). Chunks are found in order; a chunk without offsets is
    found by its first line (pure)."""
    headings = [(m.start(), m.group(2).strip()) for m in _HEADING.finditer(text)]
    starts = [h[0] for h in headings]
    out: list[tuple[int, str | None]] = []
    cursor = 0
    for chunk in pieces:
        at = chunk.start
        if at < 0:
            first = chunk.text.strip().split("\n", 1)[0]
            found = text.find(first, cursor)
            at = found if found >= 0 else cursor
        cursor = max(cursor, at)
        under = bisect.bisect_right(starts, at) - 1
        out.append((text.count("\n", 0, at) + 1, headings[under][1] if under >= 0 else None))
    return out


_RECORD_FIELDS = {
    "content",
    "kind",
    "user_id",
    "agent_id",
    "session_id",
    "event_time",
    "context",
    "level",
    "metadata",
}


def _jsonl_records(text: str, report: IngestReport) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for every usable line; other fields go into the metadata."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            report.skipped += 1
            _note(report, f"line {number}: not JSON ({exc.msg})")
            continue
        except (ValueError, RecursionError) as exc:  # a 5,000-digit number, [[[[... too deep
            report.skipped += 1
            _note(report, f"line {number}: unusable JSON ({type(exc).__name__})")
            continue
        if isinstance(obj, str):
            obj = {"content": obj}
        if not isinstance(obj, dict):
            report.skipped += 1
            _note(report, f"line {number}: not an object")
            continue
        if "content" not in obj and "text" in obj:
            obj = {**obj, "content": obj.pop("text")}
        content = obj.get("content")
        if not isinstance(content, str) or not content.strip():
            report.skipped += 1
            _note(report, f"line {number}: no text")
            continue
        record = {k: v for k, v in obj.items() if k in _RECORD_FIELDS}
        extra = {k: v for k, v in obj.items() if k not in _RECORD_FIELDS}
        if extra:
            meta = record.get("metadata")
            record["metadata"] = {**extra, **meta} if isinstance(meta, dict) else extra
        yield number, record
