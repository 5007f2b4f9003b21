"""What keeps a large store fast: the label index, index saves that scale, cheap cache checks."""

from __future__ import annotations

from localmem import Config
from localmem.store import records


def test_hits_are_read_back_through_a_label_index(memory):
    indexes = memory.store.db.fetchall(
        "SELECT index_name FROM duckdb_indexes() WHERE table_name = 'memories'"
    )
    assert ("memories_label",) in indexes
    items = memory.add_many([f"note number {i}" for i in range(5)])
    got = records.fetch_by_labels(memory.store.db, [items[3].label, items[0].label])
    assert {x.content for x in got.values()} == {"note number 3", "note number 0"}
    assert records.fetch_by_labels(memory.store.db, [10**9]) == {}


def _saves(open_memory, path, monkeypatch, *, fraction: float) -> int:
    config = Config().with_updates(store={"save_every": 5, "save_every_fraction": fraction})
    mem = open_memory(path, config=config)
    count = {"n": 0}
    real = mem.store.save_index

    def counting():
        count["n"] += 1
        real()

    monkeypatch.setattr(mem.store, "save_index", counting)
    for i in range(40):
        mem.add(f"memory number {i} about the garden")
    return count["n"]


def test_index_saves_thin_out_as_the_index_grows(open_memory, tmp_path, monkeypatch):
    fixed = _saves(open_memory, tmp_path / "a", monkeypatch, fraction=0.0)
    scaled = _saves(open_memory, tmp_path / "b", monkeypatch, fraction=0.5)
    assert fixed == 8  # every 5 changes
    # every max(5, half the index): after 5, 10, 19 and 37 memories
    assert scaled == 4


def test_a_known_text_is_not_embedded_again(memory, monkeypatch):
    memory.add("Melanie paints sunrises")
    calls = []
    real = memory.embedder.embed_batch

    def counting(texts):
        calls.append(list(texts))
        return real(texts)

    monkeypatch.setattr(memory.embedder, "embed_batch", counting)
    memory.add_many(["Melanie paints sunrises", "A new text"])
    assert calls == [["A new text"]]
