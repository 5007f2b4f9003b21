"""Fixed and recursive chunking with the real MiniLM tokenizer; ingestion of documents."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from localmem.chunking import (
    CountTokenizer,
    chunk_id,
    fixed_chunks,
    recursive_chunks,
    tokenizer_for,
)
from localmem.cli import main
from localmem.errors import InputError
from localmem.ingest import CHUNKERS, ingest_file

PARAGRAPHS = [
    "Blood Falls is an outflow of iron-rich saltwater from the tongue of Taylor Glacier. "
    "The water is red because the iron oxidises when it meets the air. "
    "Microbes live in the brine without light or oxygen.",
    "Lake Nyos is a crater lake in Cameroon. In 1986 it released a large cloud of carbon "
    "dioxide that killed people and livestock in nearby villages.",
    "Catatumbo lightning occurs over the mouth of the Catatumbo River where it empties into "
    "Lake Maracaibo. It happens on many nights a year.",
]
DOC = "\n\n".join(PARAGRAPHS * 6)


def test_fixed_windows_respect_size_and_overlap(embedder) -> None:
    tok = tokenizer_for(embedder)
    chunks = fixed_chunks(DOC, 60, 15, embedder)
    assert len(chunks) > 5
    for c in chunks:
        assert DOC[c.start : c.end] == c.text  # an exact slice of the document
        assert c.tokens <= 60
        assert tok(c.text) <= 60  # the real tokenizer agrees: windows end on word boundaries
    for a, b in itertools.pairwise(chunks):
        assert b.start < a.end  # neighbours overlap...
        shared = tok(DOC[b.start : a.end])
        assert 10 <= shared <= 20  # ...by about 15 tokens (snapped to word starts)
    assert chunks[0].start == 0 and chunks[-1].end == len(DOC.rstrip())


def test_fixed_without_overlap_tiles_the_document(embedder) -> None:
    chunks = fixed_chunks(DOC, 40, 0, embedder)
    for a, b in itertools.pairwise(chunks):
        assert a.end <= b.start
        assert DOC[a.end : b.start].strip() == ""  # nothing between two chunks is lost


def test_recursive_prefers_paragraphs_then_sentences(embedder) -> None:
    tok = tokenizer_for(embedder)
    para_tokens = max(tok(p) for p in PARAGRAPHS)
    chunks = recursive_chunks(DOC, para_tokens + 2, 0, embedder)
    # every paragraph fits: chunks are whole paragraphs (never two merged over the limit)
    assert {c.text for c in chunks} <= set(PARAGRAPHS)
    small = recursive_chunks(DOC, 30, 0, embedder)
    for c in small:
        assert c.tokens <= 30 and tok(c.text) <= 30
        assert c.text.endswith((".", "villages", "year")) or c.text[-1].isalnum()
    # a sentence of fewer than 30 tokens is never cut in two
    sentence = "The water is red because the iron oxidises when it meets the air."
    assert any(sentence in c.text for c in small)


def test_recursive_overlap_repeats_the_tail(embedder) -> None:
    chunks = recursive_chunks(DOC, 80, 20, embedder)
    tok = tokenizer_for(embedder)
    overlaps = [a.end - b.start for a, b in itertools.pairwise(chunks)]
    assert any(o > 0 for o in overlaps)
    for a, b in itertools.pairwise(chunks):
        if b.start < a.end:
            assert tok(DOC[b.start : a.end]) <= 20


def test_chunking_is_deterministic(embedder) -> None:
    for fn in (fixed_chunks, recursive_chunks):
        first = fn(DOC, 50, 10, embedder)
        assert first == fn(DOC, 50, 10, embedder)
    assert chunk_id("a.txt", "fixed:50:10", 0, "x") == chunk_id("a.txt", "fixed:50:10", 0, "x")
    assert chunk_id("a.txt", "fixed:50:10", 0, "x") != chunk_id("a.txt", "fixed:50:10", 1, "x")


def test_one_huge_line_chunks(embedder) -> None:
    line = "x" * 200_000  # one "word": a WordPiece tokenizer makes it a single unknown token
    chunks = fixed_chunks(line, 64, 8, embedder)
    assert len(chunks) > 10 and all(len(c.text) <= 64 * 50 for c in chunks)
    assert "".join(c.text for c in recursive_chunks(line, 64, 0, embedder)) == line
    words = "alpha beta gamma " * 20_000  # one line of words, no newline, no sentence end
    rec = recursive_chunks(words, 100, 10, embedder)
    assert all(c.tokens <= 100 for c in rec) and len(rec) > 100


def test_count_function_fallback() -> None:
    def words(text: str) -> int:
        return len(text.split())

    chunks = fixed_chunks("one two three four five six seven", 3, 1, CountTokenizer(words))
    assert [c.text for c in chunks] == ["one two three", "three four five", "five six seven"]
    assert [c.text for c in recursive_chunks("a b. c d. e f.", 2, 0, words)] == [
        "a b.",
        "c d.",
        "e f.",
    ]


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (10, 10), (10, -1), (5, 7)])
def test_bad_sizes(embedder, size: int, overlap: int) -> None:
    with pytest.raises(InputError):
        fixed_chunks(DOC, size, overlap, embedder)
    with pytest.raises(InputError):
        recursive_chunks(DOC, size, overlap, embedder)


def test_registered_for_ingest() -> None:
    assert {"fixed", "recursive", "paragraph"} <= set(CHUNKERS)


# -- ingestion ---------------------------------------------------------------------------------
def _write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def test_ingest_fixed_stores_chunks_with_ids(memory, tmp_path: Path) -> None:
    path = _write(tmp_path, "doc.md", DOC)
    report = ingest_file(memory, path, chunker="fixed", chunk_tokens=64, overlap_tokens=16)
    chunks = sorted(memory.list(kind="chunk", limit=1000), key=lambda m: m.metadata["chunk"])
    assert report.memories == len(chunks) > 3
    meta = chunks[0].metadata
    assert meta["chunker"] == "fixed" and meta["chunk_tokens"] == 64
    assert DOC[meta["start"] : meta["end"]] == chunks[0].content
    ids = [c.metadata["chunk_id"] for c in chunks]
    assert len(set(ids)) == len(ids)
    # the same file the same way again: same ids, nothing new stored
    again = ingest_file(memory, path, chunker="fixed", chunk_tokens=64, overlap_tokens=16)
    assert again.memories == 0 and again.skipped == len(ids)
    assert memory.count() == len(ids)
    hit = memory.search("why is the water red", k=1, kinds=["chunk"]).hits[0]
    assert "red" in hit.memory.content


def test_ingest_bad_input_stores_nothing(memory, tmp_path: Path) -> None:
    empty = _write(tmp_path, "empty.txt", "  \n\n ")
    binary = _write(tmp_path, "blob.txt", b"\x00\x01\x02binary\x00")
    good = _write(tmp_path, "good.txt", DOC)
    with pytest.raises(InputError, match="empty"):
        ingest_file(memory, empty, chunker="fixed")
    with pytest.raises(InputError, match="binary"):
        ingest_file(memory, binary, chunker="recursive")
    with pytest.raises(InputError, match="unknown chunking strategy 'semantic'; known:"):
        ingest_file(memory, good, chunker="semantic")
    with pytest.raises(InputError, match="overlap"):
        ingest_file(memory, good, chunker="fixed", chunk_tokens=10, overlap_tokens=10)
    assert memory.count() == 0


def test_ingest_chunk_over_the_store_limit_is_refused_whole(open_memory, tmp_path: Path) -> None:
    from localmem.config import Config

    config = Config().with_updates(store={"max_content_chars": 2000})
    mem = open_memory(tmp_path / "small", config=config)
    path = _write(tmp_path, "line.txt", "y" * 50_000)
    with pytest.raises(InputError, match="smaller --chunk-tokens"):
        ingest_file(mem, path, chunker="fixed", chunk_tokens=512)
    assert mem.count() == 0
    report = ingest_file(mem, path, chunker="fixed", chunk_tokens=32)  # 32 x 50 chars fit
    assert report.memories == mem.count() > 0


def test_cli_ingest_recursive(tmp_path: Path, capsys, embedder) -> None:
    path = _write(tmp_path, "doc.txt", DOC)
    store = str(tmp_path / "cli-store")
    code = main(
        ["ingest", "--store", store, "--chunker", "recursive", "--chunk-tokens", "80",
         "--overlap-tokens", "10", str(path)]
    )  # fmt: skip
    assert code == 0
    assert "memories stored" in capsys.readouterr().out
    code = main(["ingest", "--store", store, "--chunker", "nope", str(path)])
    err = capsys.readouterr().err
    assert code == 1 and "unknown chunking strategy 'nope'" in err and "Traceback" not in err
