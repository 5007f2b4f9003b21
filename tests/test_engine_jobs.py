"""Background jobs, `localmem mine` and `localmem serve` when the model host crashes (issue 29).

The engine is the tiny GGUF in the crash host (tests/engine_hosts/crash_host.py), chosen for
every process through ``LOCALMEM_ENGINE_HOST_COMMAND``: a memory whose text holds
``[[host:SIGSEGV]]`` kills the host, for real, whenever a model is asked about it.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from localmem.attributes import rows as attribute_rows
from localmem.cli import main
from localmem.config import Config
from localmem.llm.tasks import max_output_bytes

CRASH_HOST = [sys.executable, str(Path(__file__).parent / "engine_hosts" / "crash_host.py")]
POISON = "[[host:SIGSEGV]] The deploy script kills the worker."
FINE = ("The rate limiter drops bursts at the gateway.", "Index the orders table by customer.")


@pytest.fixture
def crash_host(monkeypatch):
    """Every engine of this test (and of its child processes) runs in the crash host."""
    monkeypatch.setenv("LOCALMEM_ENGINE_HOST_COMMAND", shlex.join(CRASH_HOST))


def engine_config(gguf: Path, *, miner: str, mine_on_add: str = "deferred") -> Config:
    limit = max_output_bytes("attributes", {"text": "x"}) + 8  # a byte-level model's room
    return Config().with_updates(
        engine={"model_path": str(gguf), "n_ctx": 16384, "n_threads": 1},
        attributes={"miner": miner, "max_tokens": limit, "mine_on_add": mine_on_add},
    )


def mined_by(mem, ids) -> dict[str, str]:
    found = attribute_rows.read(mem.store.db, list(ids))
    return {i: found[i].mined.miner for i in ids if i in found}


@pytest.mark.slow
def test_a_job_on_auto_that_meets_a_crash_completes_model_free(
    crash_host, open_memory, store_path, tiny_gguf
):
    mem = open_memory(store_path, config=engine_config(tiny_gguf, miner="auto"))
    fine = mem.add(FINE[0])
    poison = mem.add(POISON)
    host = mem.kernel.engine.supervisor
    crashes = host.crashes
    report = mem.run_jobs()
    assert (report.done, report.failed) == (2, 0)
    assert mined_by(mem, [fine.id, poison.id]) == {fine.id: "llama:tiny", poison.id: "model-free"}
    assert host.crashes == crashes + 1  # auto does not retry: the text went model-free at once
    assert mem.search("deploy worker", k=2)  # the store goes on


@pytest.mark.slow
def test_a_job_that_asked_for_the_engine_fails_after_two_attempts_and_stays_failed(
    crash_host, open_memory, store_path, tiny_gguf
):
    mem = open_memory(store_path, config=engine_config(tiny_gguf, miner="engine"))
    poison = mem.add(POISON)
    host = mem.kernel.engine.supervisor
    crashes = host.crashes
    report = mem.run_jobs()
    assert (report.done, report.failed) == (0, 1)
    status, error = mem.store.db.fetchone("SELECT status, error FROM jobs WHERE kind = 'mine'")
    assert status == "failed" and "EngineCrashedError" in error and "SIGSEGV" in error
    assert host.crashes == crashes + 2  # the first attempt and one retry in a fresh host
    assert mem.run_jobs().failed == 0 and host.crashes == crashes + 2  # not retried
    assert mined_by(mem, [poison.id]) == {}
    assert mem.store.jobs.retry_failed(["mine"]) == 1  # `localmem jobs retry` still can
    fine = mem.add(FINE[1], mine="off")
    assert mem.get(fine.id)  # adds go on whatever the engine does


def test_mine_runs_the_jobs_already_queued_at_add(capsys, tmp_path):
    store = str(tmp_path / "s")
    for text in FINE:
        assert main(["add", text, "--store", store, "--mine", "deferred"]) == 0
    capsys.readouterr()
    assert main(["mine", "--store", store, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["done"] == 2 and report["failed"] == 0
    assert main(["jobs", "--store", store, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"mine": {"done": 2}}


def test_mine_runs_the_jobs_a_crash_left_pending(capsys, tmp_path):
    store = tmp_path / "s"
    for text in FINE:
        assert main(["add", text, "--store", str(store), "--mine", "deferred"]) == 0
    # a process dies in the middle of a mine job: the job is left `running` in the file
    died = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, sys; from localmem import Memory\n"
            "mem = Memory.open(sys.argv[1])\n"
            "job = mem.store.jobs.claim(['mine'])\n"
            "assert job is not None\n"
            "os._exit(3)",
            str(store),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert died.returncode == 3, died.stderr
    capsys.readouterr()
    assert main(["mine", "--store", str(store), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["done"] == 2 and report["failed"] == 0


@pytest.mark.slow
@pytest.mark.timeout(1200)  # two model loads and three calls: minutes on a crowded machine
def test_mine_mines_memories_with_gemma_quietly(tmp_path, real_gguf):
    """`localmem mine` with the Gemma GGUF mines memories through the host, and llama.cpp's
    chatter goes to the engine log, not to the terminal (its time: scripts/bench_engine.py)."""
    store = tmp_path / "s"
    home = tmp_path / "home"
    env = {**os.environ, "LOCALMEM_HOME": str(home)}
    config = Config().with_updates(engine={"model_path": str(real_gguf), "n_threads": 1})
    from localmem import Memory

    with Memory.open(store, config=config) as mem:
        for i in range(3):
            mem.add(f"Note {i}: the cache in front of the orders service expires hourly.")
    done = subprocess.run(
        [sys.executable, "-m", "localmem", "mine", "--store", str(store), "--miner", "engine"],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "3 mined, 0 failed" in done.stdout
    assert "llama_" not in done.stderr and "ggml" not in done.stderr
    assert "llama_" in (home / "logs" / "engine.log").read_text()
    verify = ["models", "verify", str(real_gguf), "--load"]
    verbose = subprocess.run(
        [sys.executable, "-m", "localmem", "--verbose", *verify],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert verbose.returncode == 0, verbose.stderr
    assert "llama_" in verbose.stderr  # asked for: llama.cpp's own log on the terminal


@pytest.mark.slow
@pytest.mark.timeout(1200)  # a server, several host restarts: minutes on a crowded machine
def test_a_served_store_keeps_answering_while_the_host_crashes(crash_host, tmp_path, tiny_gguf):
    from test_serve import start_server, stop_server

    from localmem import Memory, connect

    store = tmp_path / "store"
    with Memory.open(store, config=engine_config(tiny_gguf, miner="auto")):
        pass  # the store's config: the tiny GGUF, auto mining of every add in the background
    proc = start_server(store)
    try:
        with connect(store) as client:
            added = [client.add(POISON)]
            for round_ in range(3):
                added.append(client.add(f"{FINE[round_ % 2]} (round {round_})"))
                added.append(client.add(f"[[host:SIGILL]] round {round_}: the CPU faults."))
                assert client.search("orders gateway", k=3)  # answered during the crashes
            deadline = time.monotonic() + 900
            while client.stats()["jobs_pending"] and time.monotonic() < deadline:
                assert client.search("rate limiter", k=2)
                time.sleep(0.5)
            assert client.stats()["jobs_pending"] == 0
            assert client.count() == len(added)
            assert proc.poll() is None  # the server lives
            status = client.status()
            host = next(r["engine_info"]["host"] for r in status["engines"])
            assert host["crashes"] >= 2
    finally:
        log = stop_server(proc)
    assert proc.returncode == 0
    assert "SIGSEGV" in log and "SIGILL" in log  # `serve` says what happened
    with Memory.open(store) as mem:
        miners = mined_by(mem, [a.id for a in added])
    assert len(miners) == len(added)  # every memory mined...
    for item in added:  # ...the poisoned ones model-free, recorded
        if "[[host:" in item.content:
            assert miners[item.id] == "model-free"


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_jobs_run_goes_on_and_says_what_happened(crash_host, tmp_path, tiny_gguf):
    from localmem import Memory

    store = tmp_path / "s"
    with Memory.open(store, config=engine_config(tiny_gguf, miner="engine")) as mem:
        mem.add(POISON)
        mem.add(FINE[0], mine="off")
    done = subprocess.run(
        [sys.executable, "-m", "localmem", "jobs", "run", "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 1  # a failed job, said; not a signal
    assert "0 done, 1 failed" in done.stdout
    assert "SIGSEGV" in done.stderr and "fix:" in done.stderr
