"""Forgetting one user entirely: purge_all(user_id=...) erases their memories, what their
sessions say and the procedures abstracted from them, and leaves everyone else's alone. Checked
by reading every table of the real DuckDB file, not through the code under test."""

from __future__ import annotations

import duckdb

from localmem import Memory

SECRET = "Zanzibarquux"  # a word nobody else says


def _work_session(mem: Memory, user: str, word: str) -> None:
    session = mem.start_session(f"Fix the {word} deploy for {user}", user_id=user)
    mem.add_thought(session.id, f"Reproduce the {word} failure with a clean cache")
    mem.add_thought(session.id, f"Pin the {word} version and redeploy")
    mem.complete_session(session.id, outcome="success", abstract=True)


def _rows_holding(path, word: str) -> list[str]:
    con = duckdb.connect(str(path / "localmem.duckdb"), read_only=True)
    try:
        tables = [
            t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        ]
        found = []
        for table in tables:
            columns = [
                c for (c,) in con.execute(f"SELECT column_name FROM (DESCRIBE {table})").fetchall()
            ]
            text = " || ' ' || ".join(f"coalesce(CAST({c} AS VARCHAR), '')" for c in columns)
            n = con.execute(f"SELECT count(*) FROM {table} WHERE ({text}) ILIKE ?", [f"%{word}%"])
            if n.fetchone()[0]:
                found.append(table)
        return found
    finally:
        con.close()


def test_purging_a_user_leaves_nothing_they_said(tmp_path):
    path = tmp_path / "store"
    with Memory.open(path) as mem:
        mem.add(f"My locker code is {SECRET}", user_id="ana", kind="fact")
        _work_session(mem, "ana", SECRET)
        _work_session(mem, "ben", "Rotterdam")
        mem.add("Ben likes tea", user_id="ben", kind="fact")
        assert mem.procedures.list(), "the sessions were abstracted into procedures"
        purged = mem.purge_all(user_id="ana")
        assert purged >= 4  # the fact, two thoughts, the procedure's trigger
        assert all(m.user_id != "ana" for m in mem.list(limit=100))
        titles = {s.user_id: s.title for s in mem.sessions()}
        assert titles["ana"] == "" and "Rotterdam" in titles["ben"]
        assert "Ben likes tea" in [h.memory.content for h in mem.search("tea", user_id="ben")]
    # lex_terms, BM25's vocabulary, keeps the bare words of purged memories (one word each, no
    # sentence, no memory it belongs to): a known limit, docs/python.md says so
    assert _rows_holding(path, SECRET) in ([], ["lex_terms"])
    assert _rows_holding(path, "Rotterdam")  # the other user's work is all there


def test_a_purged_procedure_trigger_takes_the_procedure_text_with_it(tmp_path):
    with Memory.open(tmp_path / "store") as mem:
        _work_session(mem, "ana", SECRET)
        (procedure,) = mem.procedures.list()
        mem.purge(procedure.memory_id)
        after = mem.procedures.get(procedure.id)
        assert after.status == "retired" and after.trigger == "" and not after.steps
    held = set(_rows_holding(tmp_path / "store", SECRET))
    # the session and its thoughts are the user's other memories: not purged by this one
    assert not held & {"procedures", "procedure_versions", "procedure_events"}
