"""A store written by an earlier release opens, searches and takes writes with today's code.

The fixture (tests/fixtures/upgrade/store-0.1.0.tar.gz) was written by localmem 0.1.0 (main at
c546aca) with tests/fixtures/upgrade/make_store.py; expected.json beside it says what it holds.
Every later commit runs this test: a migration, a renamed column, a new embedder default or a
changed index format that strands yesterday's store fails here.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from localmem import Memory
from localmem.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "upgrade"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))

pytestmark = pytest.mark.slow


@pytest.fixture
def old_store(tmp_path: Path) -> Path:
    """A fresh copy of the 0.1.0 store (the committed archive is never opened in place)."""
    with tarfile.open(FIXTURES / "store-0.1.0.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / "store"


def test_the_old_store_opens_with_what_it_held(old_store: Path):
    with Memory.open(old_store) as mem:
        # its vectors keep their embedder: never mixed with another model's
        assert mem.embedder.name == EXPECTED["embedder"] == mem.store.model
        assert not mem.store.notices  # the index file was read as it is, not rebuilt
        check = mem.store.check()
        assert check["vectors_in_step"] and check["lexical_in_step"]
        stats = mem.stats()
        assert stats["memories"] == EXPECTED["memories"]
        assert stats["deleted"] == EXPECTED["deleted"]
        assert stats["links"] == EXPECTED["links"]
        assert stats["jobs_pending"] == EXPECTED["jobs_pending"]

        events = [e.event for e in mem.history(EXPECTED["updated"])]
        assert events[:2] == ["ADD", "UPDATE"]
        assert mem.get(EXPECTED["deleted_id"], include_deleted=True).deleted
        assert not mem.get(EXPECTED["restored"]).deleted
        assert "PURGE" in [e.event for e in mem.history(EXPECTED["purged"])]
        assert mem.attributes_of([EXPECTED["index_note"]])[EXPECTED["index_note"]]

        old = mem.get(EXPECTED["superseded"])
        assert old.superseded_by == EXPECTED["superseding"] and old.valid_to is not None
        past = mem.search("where does Ann live", k=1, as_of="2023-06-01T00:00:00+00:00")
        assert past.hits[0].memory.id == EXPECTED["superseded"]

        assert len(mem.thoughts(EXPECTED["session"])) == 3
        assert (
            mem.get_session(EXPECTED["session"]).metadata["procedure_id"] == EXPECTED["procedure"]
        )
        assert mem.procedures.get(EXPECTED["procedure"]).id == EXPECTED["procedure"]
        assert mem.procedures.find("Debug a 500 when the user is null") is not None
        for semantic in EXPECTED["semantic"]:
            assert mem.get(semantic).level == "semantic"

        for query, content in EXPECTED["searches"].items():
            assert mem.search(query, k=1).hits[0].memory.content == content, query


def test_the_old_store_takes_writes_and_runs_its_pending_jobs(old_store: Path):
    with Memory.open(old_store) as mem:
        report = mem.run_jobs()
        assert report.done == EXPECTED["jobs_pending"] and report.failed == 0
        assert mem.attributes_of([EXPECTED["pending_job_memory"]])[EXPECTED["pending_job_memory"]]
        new = mem.add("Written after the upgrade: the deploy runs on Fridays.", kind="fact")
        mem.update(EXPECTED["index_note"], content="A composite index on orders fixed the query.")
        mem.delete(EXPECTED["chunk"])
        session = mem.start_session("after the upgrade")
        mem.add_thought(session.id, "A thought written by the new code.")
        mem.complete_session(session.id, outcome="success")
        (applied,) = mem.infer(
            "Ann moved to Lisbon.", user_id="ann", event_time="2025-01-01T12:00:00+00:00"
        )
        assert mem.get(EXPECTED["superseding"]).superseded_by == applied.memory.id
    with Memory.open(old_store) as mem:  # and everything written is there after a reopen
        assert mem.search("when does the deploy run", k=1).hits[0].memory.id == new.id
        assert mem.search("composite index orders", k=1).hits[0].memory.id == EXPECTED["index_note"]
        assert mem.get(EXPECTED["chunk"], include_deleted=True).deleted
        # live memories: + the fact, the thought and Lisbon, - the deleted chunk
        assert mem.stats()["memories"] == EXPECTED["memories"] + 3 - 1
        assert mem.store.check()["vectors_in_step"]


def test_doctor_and_search_from_the_command_line(old_store: Path, capsys):
    assert main(["doctor", "--store", str(old_store)]) == 0
    capsys.readouterr()
    query = "sliding window rate limiter"
    assert main(["search", query, "--store", str(old_store), "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits[0]["content"] == EXPECTED["searches"][query]
