"""Token-based document chunking: fixed windows with overlap, and recursive splitting.

Both strategies work on character offsets into the original text, so a chunk is always an exact
slice of the document (its ``start``/``end`` are kept, e.g. to cite or to score overlap), and on
token offsets from a local tokenizer (the embedder's own, through the ``tokenizers`` library;
tiktoken would download its vocabulary). The token positions of a document are computed once;
counting the tokens of any slice is then a binary search.

- **fixed**: windows of ``size`` tokens; the next window starts ``overlap`` tokens before the end
  of the previous one. A window ends at a word boundary when there is one in its second half, so
  a chunk does not stop mid-word.
- **recursive**: split on ``"\\n\\n"``, then ``"\\n"``, then ``". "``, then ``" "`` until every
  piece fits, then merge neighbouring pieces up to ``size`` tokens, repeating the last pieces of
  a chunk (up to ``overlap`` tokens) at the start of the next. Text with no separator at all
  falls back to fixed windows.

A "token" never stands for more than :data:`MAX_TOKEN_CHARS` characters: a line without spaces
(which a WordPiece tokenizer turns into one unknown token) still chunks into bounded pieces.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from localmem.errors import InputError

MAX_TOKEN_CHARS = 50
SEPARATORS: tuple[str, ...] = ("\n\n", "\n", ". ", " ")


@dataclass(frozen=True)
class TextChunk:
    """One chunk: its text and where it sits in the document (character offsets)."""

    text: str
    start: int
    end: int
    tokens: int


@runtime_checkable
class Tokenizer(Protocol):
    """Where the tokens of a text are: ``spans(text)`` gives (start, end) character offsets."""

    name: str

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character offsets of every token, in order."""

    def __call__(self, text: str) -> int:
        """How many tokens ``text`` has."""


class HFTokenizer:
    """A ``tokenizers`` tokenizer read from a ``tokenizer.json`` (no torch, no network)."""

    def __init__(self, file: str | Path) -> None:
        from tokenizers import Tokenizer as _Tokenizer

        self._tok = _Tokenizer.from_file(str(file))
        self._tok.no_padding()  # model files pad and truncate for batching; counting needs neither
        self._tok.no_truncation()
        self.name = f"tokenizers:{Path(file).parent.name}"

    def spans(self, text: str) -> list[tuple[int, int]]:
        enc = self._tok.encode(text, add_special_tokens=False)
        return [(s, e) for s, e in enc.offsets if e > s]

    def __call__(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)


class CountTokenizer:
    """Token positions from any counting function: each word holds as many tokens as it counts.

    Used when no tokenizer with offsets is at hand (e.g. an embedder without ``tokenizer.json``).
    """

    _WORD = re.compile(r"\S+")

    def __init__(self, count: Callable[[str], int], *, name: str = "count") -> None:
        self._count = count
        self.name = name

    def spans(self, text: str) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for m in self._WORD.finditer(text):
            s, e = m.span()
            n = max(1, min(int(self._count(m.group())), e - s))
            step = (e - s) / n
            out += [(s + round(i * step), s + round((i + 1) * step)) for i in range(n)]
        return out

    def __call__(self, text: str) -> int:
        return int(self._count(text))


@lru_cache(maxsize=8)
def _hf_tokenizer(file: str) -> HFTokenizer:
    return HFTokenizer(file)


def tokenizer_for(source: Any) -> Tokenizer:
    """A tokenizer for chunking: a :class:`Tokenizer` as is, an embedder's own tokenizer, or a
    counting function (``memory.embedder.count_tokens``) wrapped in :class:`CountTokenizer`."""
    if isinstance(source, Tokenizer):
        return source
    path = getattr(source, "path", None)
    if path is not None and (Path(path) / "tokenizer.json").is_file():
        return _hf_tokenizer(str(Path(path) / "tokenizer.json"))
    count = getattr(source, "count_tokens", None) or source
    if not callable(count):
        raise InputError(f"cannot count tokens with {type(source).__name__}")
    return CountTokenizer(count)


class TokenIndex:
    """The token positions of one document, to count the tokens of any slice quickly."""

    def __init__(self, text: str, tokenizer: Tokenizer) -> None:
        spans: list[tuple[int, int]] = []
        for s, e in tokenizer.spans(text):
            while e - s > MAX_TOKEN_CHARS:  # bound what one "token" may stand for
                spans.append((s, s + MAX_TOKEN_CHARS))
                s += MAX_TOKEN_CHARS
            spans.append((s, e))
        self.text = text
        self.starts = [s for s, _ in spans]
        self.ends = [e for _, e in spans]

    def __len__(self) -> int:
        return len(self.starts)

    def count(self, start: int, end: int) -> int:
        """Tokens lying wholly inside ``text[start:end]``."""
        return max(0, bisect.bisect_right(self.ends, end) - bisect.bisect_left(self.starts, start))

    def word_start(self, i: int) -> bool:
        """Whether token ``i`` begins a word (whitespace before it), so a cut there is clean."""
        return i == 0 or self.text[self.starts[i] - 1].isspace()

    def chunk(self, start: int, end: int) -> TextChunk | None:
        """The chunk ``text[start:end]`` without surrounding whitespace (None when blank)."""
        raw = self.text[start:end]
        stripped = raw.strip()
        if not stripped:
            return None
        start += len(raw) - len(raw.lstrip())
        end = start + len(stripped)
        return TextChunk(stripped, start, end, self.count(start, end))


def check_sizes(size: int, overlap: int) -> None:
    """A chunk size of at least one token and an overlap smaller than it."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise InputError(f"chunk size must be a positive number of tokens, not {size!r}")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 0:
        raise InputError(f"chunk overlap must be zero or more tokens, not {overlap!r}")
    if overlap >= size:
        raise InputError(f"chunk overlap ({overlap}) must be smaller than the chunk size ({size})")


def fixed_chunks(text: str, size: int, overlap: int, tokenizer: Any) -> list[TextChunk]:
    """Windows of at most ``size`` tokens, each repeating the last ``overlap`` of the one before.

    Args:
        text: The document.
        size: Tokens per chunk.
        overlap: Tokens shared by neighbouring chunks (fewer than ``size``).
        tokenizer: A :class:`Tokenizer`, an embedder or a counting function.
    """
    check_sizes(size, overlap)
    idx = TokenIndex(text, tokenizer_for(tokenizer))
    return [c for s, e in _windows(idx, 0, len(idx), size, overlap) if (c := idx.chunk(s, e))]


def _windows(idx: TokenIndex, lo: int, hi: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Character ranges of token windows over tokens ``lo..hi``."""
    out: list[tuple[int, int]] = []
    i = lo
    while i < hi:
        j = min(hi, i + size)
        if j < hi:
            j = _snap(idx, j, floor=i + max(1, size // 2))
        out.append((idx.starts[i], idx.ends[j - 1]))
        if j >= hi:
            break
        i = _snap(idx, max(i + 1, j - overlap), floor=i + 1) if overlap else j
    return out


def _snap(idx: TokenIndex, j: int, *, floor: int) -> int:
    """The nearest token position at or before ``j`` (not below ``floor``) that begins a word."""
    for k in range(j, floor - 1, -1):
        if idx.word_start(k):
            return k
    return j


def recursive_chunks(
    text: str,
    size: int,
    overlap: int,
    tokenizer: Any,
    *,
    separators: Sequence[str] = SEPARATORS,
) -> list[TextChunk]:
    """Split on paragraphs, lines, sentences, words until pieces fit; merge them up to ``size``.

    Args:
        text: The document.
        size: Most tokens per chunk.
        overlap: At most this many tokens of whole pieces are repeated from the chunk before.
        tokenizer: A :class:`Tokenizer`, an embedder or a counting function.
        separators: Split points, coarsest first.
    """
    check_sizes(size, overlap)
    idx = TokenIndex(text, tokenizer_for(tokenizer))
    pieces = _split(idx, 0, len(text), size, tuple(separators))
    return [c for s, e in _merge(idx, pieces, size, overlap) if (c := idx.chunk(s, e))]


def _split(
    idx: TokenIndex, start: int, end: int, size: int, seps: tuple[str, ...]
) -> list[tuple[int, int]]:
    """Ranges covering ``text[start:end]`` in order, each of at most ``size`` tokens."""
    if idx.count(start, end) <= size:
        return [(start, end)]
    text = idx.text
    for k, sep in enumerate(seps):
        cuts = [m.end() for m in re.finditer(re.escape(sep), text[start:end])]
        bounds = [start, *(start + c for c in cuts if start + c < end), end]
        if len(bounds) <= 2:
            continue  # this separator does not occur here: try the next, finer one
        out: list[tuple[int, int]] = []
        for s, e in itertools.pairwise(bounds):
            out += _split(idx, s, e, size, seps[k + 1 :])
        return out
    lo = bisect.bisect_left(idx.starts, start)
    hi = bisect.bisect_right(idx.ends, end)
    return _windows(idx, lo, hi, size, 0) if hi > lo else [(start, end)]


def _merge(
    idx: TokenIndex, pieces: list[tuple[int, int]], size: int, overlap: int
) -> list[tuple[int, int]]:
    """Neighbouring pieces joined up to ``size`` tokens; each chunk after the first starts with
    up to ``overlap`` tokens of the one before (from a sentence start when possible)."""
    chunks: list[tuple[int, int]] = []
    start = end = -1
    for s, e in pieces:
        if start < 0 or idx.count(start, e) <= size:
            start = s if start < 0 else start
            end = e
            continue
        chunks.append((start, end))
        start, end = _overlap_start(idx, start, end, s, e, overlap, size), e
    if start >= 0:
        chunks.append((start, end))
    return chunks


_SENTENCE_END = (". ", "! ", "? ", "\n")


def _overlap_start(
    idx: TokenIndex, start: int, end: int, s: int, e: int, overlap: int, size: int
) -> int:
    """Where the chunk after ``text[start:end]`` begins so it repeats at most ``overlap`` tokens
    of it and still fits the piece ``text[s:e]``: the earliest sentence start in that tail, else
    the earliest word start, else ``s`` (no overlap)."""
    if overlap <= 0:
        return s
    first = bisect.bisect_left(idx.starts, start)
    last = bisect.bisect_right(idx.ends, end)  # tokens first..last-1 belong to the chunk
    lo = max(first + 1, last - overlap)
    candidates = [t for t in range(lo, last) if idx.count(idx.starts[t], e) <= size]
    text = idx.text
    for t in candidates:
        before = text[max(0, idx.starts[t] - 2) : idx.starts[t]]
        if before.endswith(_SENTENCE_END) or before == "\n":
            return idx.starts[t]
    for t in candidates:
        if idx.word_start(t):
            return idx.starts[t]
    return s


def chunk_id(source: str, strategy: str, index: int, text: str) -> str:
    """A stable id for a chunk: the same document chunked the same way gets the same ids."""
    key = "\x1f".join((source, strategy, str(index), text))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]
