"""A memory that holds the query verbatim is never lost by fusion or reranking."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from localmem.retrieval.exact import contains_phrase, is_exact
from localmem.retrieval.fusion import RankedList, minmax, zscore

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "service",
    "cache",
    "deploy",
    "limiter",
    "window",
    "queue",
    "worker",
    "index",
]


def _lines(n: int) -> list[str]:
    rng = random.Random(1)
    return [
        f"line{i:04d} token{i:04d}x " + " ".join(rng.choice(WORDS) for _ in range(8))
        for i in range(n)
    ]


@pytest.fixture
def lines_store(memory):
    memory.add_many(_lines(300))
    return memory


def test_phrase_rule():
    text = ["the", "deploy", "runs", "on", "fridays"]
    assert contains_phrase(text, ["runs", "on"])
    assert contains_phrase(text, text)
    assert not contains_phrase(text, ["on", "runs"])
    assert not contains_phrase(text, [*text, "again"])
    assert not contains_phrase(text, [])
    assert is_exact(text, ["deploy", "runs"])
    assert not is_exact(text, ["deploy"])  # one shared word is BM25's business, not a match
    assert is_exact(["deploy"], ["deploy"])
    rng = random.Random(7)
    for _ in range(200):  # any slice of a text is found in it
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 12))]
        i = rng.randrange(len(words))
        j = rng.randint(i + 1, len(words))
        assert contains_phrase(words, words[i:j])


def test_a_list_of_one_hit_still_counts_in_fusion():
    dense = RankedList("dense", np.array([1, 2, 3]), np.array([0.9, 0.8, 0.8]))
    single = RankedList("bm25", np.array([3]), np.array([12.0]))
    for fuse in (zscore, minmax):
        fused = fuse([dense, single])
        # labels 2 and 3 tie on dense; 3 is the only lexical hit, so it must come first (a
        # list of one used to standardise to zeros: its hit counted as much as a miss)
        assert fused[3] > fused[2], fuse.__name__


@pytest.mark.parametrize("i", [42, 7, 299])
def test_the_exact_line_comes_first_in_every_pipeline(lines_store, i):
    query = f"line{i:04d} token{i:04d}x"
    for options in ({}, {"rerank": "model-free", "temporal": True}, {"mode": "lexical"}):
        result = lines_store.search(query, k=3, **options)
        assert result[0].memory.content.startswith(query + " "), (options, result.explain())
        assert "exact" in result[0].flags
    assert re.search(r"^exact +words ", lines_store.search(query, k=3).explain(), re.MULTILINE)


def test_a_phrase_from_the_middle_counts_and_a_deleted_memory_does_not(memory):
    memory.add_many(_lines(120))
    target = memory.add("The deploy pipeline runs every Friday at noon, said Melanie")
    memory.add("Melanie said the pipeline deploys on Fridays")
    result = memory.search("pipeline runs every friday", k=3)
    assert result[0].memory.id == target.id and "exact" in result[0].flags
    memory.delete(target.id)
    result = memory.search("pipeline runs every friday", k=3)
    assert all(h.memory.id != target.id for h in result)
    assert all("exact" not in h.flags for h in result)


def test_dense_only_and_one_word_queries_are_left_alone(lines_store):
    assert all(
        "exact" not in h.flags for h in lines_store.search("line0042 token0042x", mode="dense")
    )
    assert all("exact" not in h.flags for h in lines_store.search("deploy", k=5))


def test_a_written_speaker_counts_when_the_metadata_has_none():
    from localmem.retrieval.speakers import speaker_of
    from localmem.types import MemoryItem

    def item(text, **meta):
        return MemoryItem(
            "i", "message", text, None, "episodic", None, None, None, None, None, None, meta, "h"
        )

    assert speaker_of(item("Caroline: I went to the support group")) == "Caroline"
    assert speaker_of(item("Mary Ann: hello")) == "Mary Ann"
    assert speaker_of(item("Caroline: hi", speaker="Melanie")) == "Melanie"  # the field wins
    assert speaker_of(item("the deploy: runs on Fridays")) is None
    assert speaker_of(item("see http://example.org: it is down")) is None
