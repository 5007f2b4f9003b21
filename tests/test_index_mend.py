"""What a search found out of step with the table is mended by the next unit of writing
(``Store.suspects``, ``Write.mend``): on a real DuckDB file and hnswlib index. A search that
merely raced a delete leaves nothing to mend and says nothing; an index entry really missing or
left behind is put right, counted and logged."""

from __future__ import annotations

import logging

from localmem.store import repair


def _drift(memory):
    return repair.drift(memory.kernel.store)


def test_a_search_that_raced_a_delete_mends_nothing_and_says_nothing(memory, caplog):
    kept = memory.add("Ana waters the tomatoes on Sundays")
    gone = memory.add("Ana sold the old greenhouse")
    memory.delete(gone.id)
    store = memory.kernel.store
    store.suspects.add(gone.label)  # what a search that read it just before the delete leaves
    with caplog.at_level(logging.WARNING, logger="localmem"):
        memory.add("Ana bought seeds")
    assert not store.suspects
    assert not [r for r in caplog.records if "out of step" in r.getMessage()]
    assert _drift(memory) == repair.Drift(0, 0, 0, 0)
    assert memory.search("tomatoes", k=3).hits[0].memory.id == kept.id


def test_a_vector_missing_from_the_index_is_found_by_a_search_and_put_back(memory, caplog):
    memory.add_many([f"garden note {i} about beans" for i in range(20)])
    lost = memory.add("Ana keeps bees behind the shed")
    store = memory.kernel.store
    store.vector_index.mark_deleted([lost.label])  # the index loses it; the table does not
    assert _drift(memory).vectors_missing == 1
    hits = memory.search("bees behind the shed", k=5).hits  # BM25 finds it, the vector is gone
    assert hits[0].memory.id == lost.id
    assert lost.label in store.suspects
    with caplog.at_level(logging.WARNING, logger="localmem"):
        memory.add("a note that opens a unit")
    assert [r for r in caplog.records if "repaired 1 index entries" in r.getMessage()]
    assert _drift(memory) == repair.Drift(0, 0, 0, 0)
    dense = memory.search("bees behind the shed", k=1, mode="dense").hits
    assert dense[0].memory.id == lost.id


def test_a_deleted_memory_left_in_both_indexes_is_taken_out(memory):
    memory.add_many([f"garden note {i} about beans" for i in range(5)])
    left = memory.add("the shed roof leaks")
    store = memory.kernel.store
    # the table says deleted, the indexes were never told (a crash between the two)
    store.db.execute("UPDATE memories SET deleted = true WHERE label = ?", [left.label])
    assert _drift(memory).lexical_stale == 1 and _drift(memory).vectors_stale == 1
    with memory.kernel.writing() as write:
        assert write.mend([left.label]) == 1  # its posting and its vector, counted once
    assert _drift(memory) == repair.Drift(0, 0, 0, 0)
