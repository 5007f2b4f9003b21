"""``localmem migrate-store``: a store copied from a folder to PostgreSQL and back, every table
and a sample of searches the same on both sides."""

from __future__ import annotations

import json

import pytest
from store_helpers import TEXTS, run

from localmem import Memory
from localmem.store.postgres.vectors import index_name

pytestmark = pytest.mark.postgres


def _fill(path, embedder) -> dict:
    with Memory.open(path, embedder=embedder) as mem:
        mem.add_many(TEXTS[:80], user_id="u1", metadata={"source": "notes"})
        session = mem.start_session("Debug the release")
        mem.add_thought(session.id, "Reproduce the failing build")
        mem.add_thought(session.id, "Pin the compiler and rebuild")
        evolved = mem.add("the plan of project 3 moved to May", evolve=True)
        gone = mem.add("a memory that is deleted")
        mem.delete(gone.id)
        mem.update(evolved.id, content="the plan of project 3 moved to June")
        return {"evolved": evolved.id, "gone": gone.id, "stats": mem.stats()}


def test_folder_to_postgres_and_back(tmp_path, pg_url, embedder, capsys):
    src, back = tmp_path / "src", tmp_path / "back"
    facts = _fill(src, embedder)
    with Memory.open(src, embedder=embedder) as mem:
        assert mem.store.lexical.terms_current()  # a new store's postings: this tokeniser's
    code, out, err = run(capsys, "migrate-store", str(src), pg_url, "--json")
    assert code == 0, err
    there = json.loads(out)
    assert there["tables_differ"] == [] and there["rows"]["memories"] == 84
    assert there["same_results"] == {m: there["searches"] for m in ("lexical", "dense", "hybrid")}
    code, out, err = run(capsys, "migrate-store", pg_url, str(back), "--json")
    assert code == 0, err
    home = json.loads(out)
    assert home["rows"] == there["rows"]
    with Memory.open(back, embedder=embedder) as mem, Memory.open(pg_url, embedder=embedder) as pg:
        for other in (mem, pg):
            assert other.history(facts["evolved"])[-1].new_value.endswith("June")
            assert other.get(facts["gone"], include_deleted=True).deleted
            stats = other.stats()
            for key in ("memories", "deleted", "by_kind", "sessions", "links"):
                assert stats[key] == facts["stats"][key]
        # the tokeniser version of the postings: PostgreSQL records none (other versions may
        # write there), so the copy back records none either and its reranker tokenises
        assert not pg.store.lexical.terms_current()
        assert not mem.store.lexical.terms_current()
        assert mem.store.lexical.held_terms([0], ["plan"]) is None
        # the copy built PostgreSQL's HNSW index once, after its rows, and it is usable
        assert pg.store.db.scalar(
            "SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass(?)",
            [index_name(embedder.dim)],
        )
        # the copies go on numbering after the copied rows
        new = mem.add("written after the copy")
        newer = pg.add("written after the copy, on PostgreSQL")
        assert new.label == newer.label == max(m.label for m in mem.list(limit=500))
        assert mem.search("written after the copy", k=1)[0].memory.id == new.id


def test_a_destination_that_is_not_empty_is_refused(tmp_path, pg_url, embedder, capsys):
    _fill(tmp_path / "src", embedder)
    with Memory.open(pg_url, embedder=embedder) as mem:
        mem.add("already here")
    code, _, err = run(capsys, "migrate-store", str(tmp_path / "src"), pg_url)
    assert code == 1 and "not empty" in err and len(err.strip().splitlines()) == 1
    with Memory.open(pg_url, embedder=embedder) as mem:
        assert mem.stats()["memories"] == 1
