"""The PostgreSQL store's address, its secrets and its faults, against a real server: chosen
by ``postgresql://`` in the API and the CLI, the password never shown, a wrong password, a
connection dropped under an open store, the server restarted in the middle of writes, two
processes migrating a new database at once, two workers on one job queue."""

from __future__ import annotations

import threading
from urllib.parse import urlsplit

import psycopg
import pytest
from pg_server import SECRET_PASSWORD, SECRET_USER
from store_helpers import run

from localmem import Memory
from localmem.errors import StoreConnectionError
from localmem.store.address import is_postgres, redact
from localmem.store.postgres.db import PgDatabase
from localmem.store.postgres.store import PgJobQueue

pytestmark = pytest.mark.postgres


@pytest.fixture
def secret_url(pg_server) -> str:
    """A new database, addressed as the role that logs in with a password."""
    name = urlsplit(pg_server.new_database()).path.lstrip("/")
    return pg_server.url(name, user=SECRET_USER, password=SECRET_PASSWORD)


def _terminate_others(url: str) -> int:
    """Kill every other backend of the database (what a server restart or a network cut does
    to a client's connection)."""
    with psycopg.connect(url, autocommit=True) as con:
        rows = con.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


def test_addresses_and_redaction():
    url = "postgresql://me:hunter2@db.example:5432/mem?sslmode=require&password=hunter2"
    assert is_postgres(url) and is_postgres("postgres://h/db") and not is_postgres("/tmp/x")
    assert "hunter2" not in redact(url)
    assert redact(url).startswith("postgresql://me:***@db.example:5432/mem")
    assert redact("/a/folder") == "/a/folder"


def test_cli_on_postgres_never_prints_the_password(secret_url, capsys):
    code, _, err = run(capsys, "add", "The deploy runs on Fridays", "--store", secret_url)
    assert code == 0, err
    code, out, err = run(capsys, "search", "when do we deploy", "--store", secret_url)
    assert code == 0 and "Fridays" in out
    code, out, err = run(capsys, "stats", "--store", secret_url, "--json")
    assert code == 0 and '"memories": 1' in out
    code, out2, err2 = run(capsys, "doctor", "--store", secret_url)
    assert "1 live memory" in out2
    for text in (out, err, out2, err2):
        assert SECRET_PASSWORD not in text
    assert f"{SECRET_USER}:***@" in out


def test_a_wrong_password_is_one_line_without_the_secret(pg_server, capsys):
    bad = pg_server.url(user=SECRET_USER, password="not-the-" + SECRET_PASSWORD)
    code, out, err = run(capsys, "stats", "--store", bad)
    assert code != 0 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert "password authentication failed" in err
    assert SECRET_PASSWORD not in err and "not-the-" not in err
    with pytest.raises(StoreConnectionError) as info:
        Memory.open(bad)
    assert "not-the-" not in str(info.value) and "***" in str(info.value)


def test_a_connection_dropped_while_idle_is_replaced_without_an_error(pg_url, embedder):
    with Memory.open(pg_url, embedder=embedder) as mem:
        first = mem.add("kept before the cut")
        assert _terminate_others(pg_url) >= 1  # every pooled connection is dead now
        second = mem.add("written after the cut")  # the pool checks, drops, and reconnects
        assert [h.memory.id for h in mem.search("kept before the cut", k=1)] == [first.id]
        assert mem.get(second.id).content == "written after the cut"
        assert mem.store.check()["lexical_in_step"]


def test_a_connection_dropped_mid_write_is_a_clear_error_and_a_retry_works(pg_url, embedder):
    with Memory.open(pg_url, embedder=embedder) as mem:
        first = mem.add("kept before the cut")
        db = mem.store.db
        # the add joins the open transaction, on its connection
        with pytest.raises(StoreConnectionError, match="lost the connection"), db.transaction():
            db.execute("SELECT 1")
            assert _terminate_others(pg_url) >= 1
            mem.add("written while the connection was gone")
        again = mem.add("written after reconnecting")  # the retry gets a new connection
        assert [h.memory.id for h in mem.search("kept before the cut", k=1)] == [first.id]
        assert mem.get(again.id).content == "written after reconnecting"
        assert mem.stats()["memories"] == 2  # nothing of the lost unit was stored
        assert mem.store.check()["lexical_in_step"]


def test_threads_of_one_process_read_side_by_side_on_the_pool(pg_url, embedder):
    """Searches from several threads each borrow a connection (the pool holds more than one),
    and a thread's transaction keeps its own connection while others read."""
    with Memory.open(pg_url, embedder=embedder) as mem:
        ids = [m.id for m in mem.add_many([f"note {i} about topic {i % 7}" for i in range(40)])]
        db = mem.store.db
        seen: list[int] = []
        errors: list[BaseException] = []
        barrier = threading.Barrier(4)

        def reader(i: int) -> None:
            try:
                barrier.wait(10)
                with db.transaction():  # hold a connection while the others take theirs
                    seen.append(int(db.scalar("SELECT pg_backend_pid()")))
                    barrier.wait(10)
                    hits = mem.search(f"note {i} about topic {i % 7}", k=3)
                    assert hits and hits[0].memory.id == ids[i]
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=reader, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert not errors, errors
        assert len(set(seen)) == 4  # four connections at once, one per thread


def test_acknowledged_writes_survive_a_server_restart_mid_write(pg_server, pg_url, embedder):
    acked: list[str] = []
    errors: list[Exception] = []
    stop = threading.Event()
    with Memory.open(pg_url, embedder=embedder) as mem:

        def writer():
            i = 0
            while not stop.is_set():
                try:
                    acked.append(mem.add(f"note {i} about the release").id)
                except StoreConnectionError as exc:  # the server went away: try again
                    errors.append(exc)
                    if len(errors) > 200:  # a retry that can never work: stop, the test fails
                        return
                    stop.wait(0.05)
                i += 1

        thread = threading.Thread(target=writer)
        thread.start()
        try:
            while len(acked) < 5:
                stop.wait(0.05)
            pg_server.restart()  # immediate: no checkpoint, as a crash
            n_at_restart = len(acked)
            while len(acked) < n_at_restart + 5 and thread.is_alive():
                stop.wait(0.05)
        finally:  # never leave the writer running (it would retry for ever)
            stop.set()
            thread.join(30)
        assert len(acked) >= n_at_restart + 5, "the writer did not get going again"
        # a write in flight when the server died: "lost the connection ... try again"; one
        # starting while it is down waits for the pool to reconnect, or "cannot connect"
        assert len(errors) <= 200, errors[-3:]
        assert all("try again" in str(e) or "cannot connect" in str(e) for e in errors), errors
    with Memory.open(pg_url, embedder=embedder) as mem:
        stored = {m.id for m in mem.list(limit=10_000)}
        assert set(acked) <= stored
        facts = mem.store.check()
        assert facts["lexical_in_step"] and facts["vectors_in_step"]


def test_two_processes_migrating_a_new_database_at_once(pg_url):
    results, errors = [], []

    def migrate():
        try:
            db = PgDatabase(pg_url)
            results.append(db.migrate(["localmem.evolution.migrations"]))
            db.close()
        except Exception as exc:  # pragma: no cover - what the test is for
            errors.append(exc)

    threads = [threading.Thread(target=migrate) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    applied = sorted(results, key=len)
    assert applied[0] == [] and applied[1] == []  # the others found it done
    assert applied[2][0] == "0001_initial" and "0020_evolution" in applied[2]
    db = PgDatabase(pg_url)
    names = [r[0] for r in db.fetchall("SELECT name FROM schema_migrations")]
    db.close()
    assert len(names) == len(set(names)) == len(applied[2])


def test_two_workers_never_take_the_same_job(pg_url):
    db = PgDatabase(pg_url)
    db.migrate()
    queue = PgJobQueue(db)
    with db.transaction():
        ids = [queue.enqueue("mine", f"m{i}") for i in range(40)]
    taken: list[list[int]] = [[], []]

    def work(slot: int):
        own = PgJobQueue(PgDatabase(pg_url))
        while (job := own.claim(["mine"])) is not None:
            taken[slot].append(job.id)
            own.done(job.id)
        own.db.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(taken[0] + taken[1]) == sorted(ids)  # every job once, none twice
    assert not set(taken[0]) & set(taken[1])
    db.close()


def test_read_only_on_postgres_searches_and_refuses_writes(pg_url, embedder):
    from localmem.errors import StoreReadOnlyError

    with Memory.open(pg_url, embedder=embedder) as mem:
        kept = mem.add("the archive keeps the 2019 budget")
    with Memory.open(pg_url, embedder=embedder, read_only=True) as mem:
        assert mem.store.read_only
        assert mem.search("2019 budget", k=1)[0].memory.id == kept.id
        with pytest.raises(StoreReadOnlyError):
            mem.add("not written")
        with pytest.raises(StoreReadOnlyError):
            mem.store.db.execute("DELETE FROM memories")
    with Memory.open(pg_url, embedder=embedder) as mem:
        assert mem.stats()["memories"] == 1


def test_a_role_that_may_not_create_the_tables_gets_a_store_error(pg_server, capsys):
    name = urlsplit(pg_server.new_database()).path.lstrip("/")
    pg_server.server.psql(
        "DO $$ BEGIN CREATE ROLE lm_plain LOGIN; EXCEPTION WHEN OTHERS THEN NULL; END $$;"
    )
    code, out, err = run(capsys, "add", "a note", "--store", pg_server.url(name, user="lm_plain"))
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and "cannot set up the store" in err, err


def test_the_password_is_in_nothing_a_memory_shows(secret_url, embedder):
    with Memory.open(secret_url, embedder=embedder) as mem:
        mem.add("a note")
        shown = [repr(mem), repr(mem.store), repr(mem.store.db), str(mem.path)]
        shown += [str(mem.stats()), str(mem.status()), str(mem.store.check())]
        assert all(SECRET_PASSWORD not in text for text in shown)
        assert mem.stats()["path"] == redact(secret_url)


def test_settings_of_a_postgresql_store_come_from_its_local_folder(pg_url, embedder):
    """A PostgreSQL store has no folder of its own: its config.json on this machine sits in
    $LOCALMEM_HOME/postgres/<hash>/ (beside serve's discovery file), e.g. the pool's size."""
    from localmem.store.postgres.store import local_folder

    folder = local_folder(redact(pg_url))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"store": {"pg_pool_size": 2}}', encoding="utf-8")
    with Memory.open(pg_url, embedder=embedder) as mem:
        assert mem.store.config.pg_pool_size == 2
        assert mem.store.db.pool.max_size == 2


def test_a_streamed_read_left_open_neither_holds_nor_undoes_the_threads_writes(pg_url):
    """``arrow_batches`` streams through a server-side cursor on a connection of its own: a
    write the thread makes while the stream is suspended commits on its own, and is kept when
    the stream is abandoned; two streams at once on one thread work."""
    db = PgDatabase(pg_url)
    try:
        db.migrate()  # the store's tables (meta among them)
        db.execute("CREATE TABLE numbers (n INTEGER)")
        db.execute("INSERT INTO numbers SELECT generate_series(1, 10)")
        first = db.arrow_batches("SELECT n FROM numbers ORDER BY n", rows=3)
        second = db.arrow_batches("SELECT n FROM numbers ORDER BY n DESC", rows=3)
        assert next(first).column(0).to_pylist() == [1, 2, 3]
        assert next(second).column(0).to_pylist() == [10, 9, 8]
        db.set_meta("written_while_streaming", "yes")
        first.close()  # abandoned mid-way
        del second
        assert db.get_meta("written_while_streaming") == "yes"
        with db.transaction():  # the thread's own transactions still work as before
            db.set_meta("after", "1")
        other = PgDatabase(pg_url)
        assert other.get_meta("after") == "1"
        other.close()
    finally:
        db.close()


# -- issue 30 items 1 and 2: racing writers in two processes' worth of stores ------------------
def test_two_stores_racing_update_and_delete_keep_the_postings_in_step(pg_url, embedder):
    """Two open stores on one database (as two processes): an update racing a delete of one
    memory waits for the delete's row lock and sees it (FOR UPDATE), so no posting is left for
    a deleted memory and the update is a NotFoundError."""
    from test_races import call, race

    from localmem import NotFoundError

    with Memory.open(pg_url, embedder=embedder) as a, Memory.open(pg_url, embedder=embedder) as b:
        ids = [m.id for m in a.add_many([f"memory {i} about apples" for i in range(20)])]
        for n, memory_id in enumerate(ids):
            upd, dele = race(call(a, "update", memory_id, n), call(b, "delete", memory_id, n))
            assert not isinstance(dele, BaseException), dele
            assert not isinstance(upd, BaseException) or isinstance(upd, NotFoundError), upd
        assert a.count() == 0
        db = a.store.db
        assert db.scalar("SELECT count(*) FROM lex_docs") == 0
        assert db.scalar("SELECT count(DISTINCT label) FROM lex_postings") == 0
        assert a.search("bananas", k=5).hits == []


def test_two_stores_racing_infer_take_turns_through_the_database(pg_url, embedder):
    """Inferences of one scope in two open stores (as two processes) take turns under a
    PostgreSQL advisory lock: one current home after the race."""
    from test_races import CITIES, current_homes, race

    with Memory.open(pg_url, embedder=embedder) as a, Memory.open(pg_url, embedder=embedder) as b:
        results = race(
            *(
                (lambda m=m, city=city: m.infer(f"I live in {city}", user_id="ann", speaker="Ann"))
                for m, city in zip([a, b] * 4, CITIES[:8], strict=True)
            )
        )
        assert all(not isinstance(r, BaseException) for r in results), results
        assert len(current_homes(a, "ann")) == 1, current_homes(a, "ann")


def test_doctor_finds_and_repairs_postings_of_a_deleted_memory(pg_url, embedder, capsys):
    """What the race used to leave (postings and a document of a deleted memory), written here
    directly: doctor says BAD, doctor --repair mends it (on PostgreSQL, where other processes
    may be writing, opening does not)."""
    with Memory.open(pg_url, embedder=embedder) as mem:
        items = mem.add_many([f"memory {i} about kiwis" for i in range(5)])
        mem.delete(items[0].id)
        mem.store.db.execute("INSERT INTO lex_docs VALUES (?, 3)", [items[0].label])
    code, out, _ = run(capsys, "doctor", "--store", pg_url)
    assert code == 1 and "BAD  lexical index" in out and "1 of memories not live" in out, out
    code, out, _ = run(capsys, "doctor", "--store", pg_url, "--repair")
    assert code == 0 and "lexical index: repaired 1" in out, out
    code, out, _ = run(capsys, "doctor", "--store", pg_url)
    assert code == 0, out
    with Memory.open(pg_url, embedder=embedder) as mem:
        assert mem.store.db.fetchone("SELECT docs FROM lex_stats") == (4,)
