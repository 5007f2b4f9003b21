"""The model host: llama.cpp in a supervised child, real signals, real timeouts (issue 29).

The crash host (tests/engine_hosts/crash_host.py) is the real host on the tiny GGUF that kills
itself in the middle of a generation when the prompt asks it to, with a real signal.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from localmem.errors import (
    EngineCrashedError,
    EngineTimeoutError,
    EngineUnavailableError,
    EngineUnhealthyError,
)
from localmem.llm.host import HostEngine
from localmem.llm.host.supervisor import Bounds, clear_unhealthy
from localmem.llm.tasks import get_task, run_task

CRASH_HOST = [sys.executable, str(Path(__file__).parent / "engine_hosts" / "crash_host.py")]


class Short(BaseModel):
    answer: str = Field(max_length=20)
    ok: bool


def ask(engine: HostEngine, text: str = "Say something."):
    return engine.generate_json([{"role": "user", "content": text}], Short, max_tokens=120)


def crash_engine(tiny_gguf: Path, **options) -> HostEngine:
    options.setdefault("bounds", Bounds(backoff_s=0.3, limit=3, window_s=60))
    engine = HostEngine(tiny_gguf, n_ctx=16384, n_threads=1, command=CRASH_HOST, **options)
    engine.supervisor.reset()  # engines with equal settings share a host: start from none
    return engine


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize(
    ("mark", "signal_name", "words"),
    [
        ("SIGILL", "SIGILL", "does not allow"),
        ("SIGSEGV", "SIGSEGV", "memory it does not own"),
        ("abort", "SIGABRT", "GGML_ASSERT"),
    ],
)
def test_a_native_death_mid_request_is_a_typed_error_and_a_fresh_host_serves_next(
    tiny_gguf, mark, signal_name, words
):
    engine = crash_engine(tiny_gguf)
    first = ask(engine)
    pid = engine.supervisor.pid
    assert pid is not None and pid != os.getpid()
    with pytest.raises(EngineCrashedError) as caught:
        ask(engine, f"[[host:{mark}]] Say something.")
    error = caught.value
    assert isinstance(error, EngineUnavailableError)  # callers that handle "unavailable" still do
    assert error.signal == signal_name and error.in_flight
    message = str(error)
    assert signal_name in message and words in message and "fix:" in message
    assert "\n" not in message  # one line for a person
    assert not _alive(pid)
    assert engine.describe()["host"]["state"] == "crashed"
    again = ask(engine)  # the first failure restarts at once
    assert again.value == first.value
    assert engine.supervisor.pid not in (None, pid)
    assert engine.describe()["host"]["state"] == "running"


def test_a_hung_request_times_out_on_time_and_the_next_gets_a_fresh_host(tiny_gguf):
    engine = crash_engine(tiny_gguf, timeout_s=3.0)
    ask(engine)  # started and loaded: the timeout below is the request's alone
    pid = engine.supervisor.pid
    start = time.monotonic()
    with pytest.raises(EngineTimeoutError, match="no answer within 3 s"):
        ask(engine, "[[host:hang]]")
    waited = time.monotonic() - start
    assert 3.0 <= waited <= 3.3 * 1.1  # the fit request before it takes a little
    assert not _alive(pid)
    ask(engine)
    assert engine.supervisor.pid not in (None, pid)


def test_a_host_past_its_memory_cap_is_stopped_with_a_timeout_error(tiny_gguf):
    engine = crash_engine(tiny_gguf, memory_mb=600, timeout_s=60)
    with pytest.raises(EngineTimeoutError, match="host_memory_mb = 600 MB"):
        ask(engine, "[[host:grow]]")
    assert engine.supervisor.pid is None
    ask(engine)


def test_back_off_then_unhealthy_then_doctor_clears_it(tiny_gguf):
    engine = crash_engine(tiny_gguf, bounds=Bounds(backoff_s=0.5, limit=3, window_s=60))
    with pytest.raises(EngineCrashedError) as first:
        ask(engine, "[[host:SIGSEGV]]")
    assert first.value.retry_after == 0  # one crash is an accident: restart at once
    with pytest.raises(EngineCrashedError) as second:
        ask(engine, "[[host:SIGSEGV]]")
    assert second.value.retry_after == pytest.approx(0.5)
    with pytest.raises(EngineCrashedError, match="starts again in") as refused:
        ask(engine)  # during the back-off: refused at once, never sent
    assert not refused.value.in_flight
    time.sleep(refused.value.retry_after)
    with pytest.raises(EngineCrashedError, match="unhealthy until `localmem doctor`"):
        ask(engine, "[[host:SIGSEGV]]")
    with pytest.raises(EngineUnhealthyError, match="localmem doctor"):
        ask(engine)
    assert engine.describe()["host"]["state"] == "unhealthy"
    starts = engine.supervisor.starts
    assert starts == 3  # no crash loop: nothing started while unhealthy
    clear_unhealthy()  # what `localmem doctor` does, seen through LOCALMEM_HOME
    assert ask(engine).value
    assert engine.supervisor.starts == starts + 1


def test_a_task_on_auto_falls_back_to_model_free_and_says_so(tiny_gguf, embedder):
    from localmem.llm.tasks import TaskContext

    engine = crash_engine(tiny_gguf)
    spec = get_task("attributes")
    inputs = spec.example().model_copy(update={"text": "[[host:SIGILL]] cache misses"})
    context = TaskContext(embedder=embedder)
    result = run_task(spec, inputs, engine=engine, context=context)
    assert result.served_by == "model-free"
    assert "SIGILL" in result.warnings[0] and "served model-free" in result.warnings[0]
    with pytest.raises(EngineCrashedError):
        run_task(spec, inputs, engine=engine, context=context, implementation="model")


def test_engines_with_the_same_settings_share_one_host(tiny_gguf):
    a = HostEngine(tiny_gguf, n_ctx=1024, n_threads=1)
    b = HostEngine(tiny_gguf, n_ctx=1024, n_threads=1)
    assert a.supervisor is b.supervisor
    assert a.count_tokens("hello") == b.count_tokens("hello") == 5
    assert HostEngine(tiny_gguf, n_ctx=1024, n_threads=1).describe()["host"]["pid"] is not None


def test_an_unused_host_is_stopped_with_its_last_engine(tiny_gguf):
    engine = HostEngine(tiny_gguf, n_ctx=768, n_threads=1)
    engine.count_tokens("x")
    pid = engine.supervisor.pid
    del engine
    import gc

    gc.collect()
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def test_errors_raised_in_the_host_arrive_typed(tiny_gguf):
    from localmem.errors import InputError

    engine = HostEngine(tiny_gguf, n_ctx=300, n_threads=1)
    with pytest.raises(InputError, match="shorten"):
        engine.generate_json([{"role": "user", "content": "x" * 1000}], Short, max_tokens=50)
    assert engine.describe()["host"]["state"] == "running"  # a typed error is no crash


def test_a_test_run_that_meets_a_native_crash_still_ends_with_its_summary(tiny_gguf, tmp_path):
    """What broke `pytest -q` on an AMX VM: a model crash now fails the test that met it."""
    test = tmp_path / "test_meets_a_crash.py"
    test.write_text(
        "import pytest\n"
        "from localmem.errors import EngineCrashedError\n"
        "from localmem.llm.host import HostEngine\n"
        f"ENGINE = HostEngine({str(tiny_gguf)!r}, n_ctx=1024, command={CRASH_HOST!r})\n"
        "def test_crash():\n"
        "    ENGINE.generate_text([{'role': 'user', 'content': '[[host:SIGILL]]'}], max_tokens=4)\n"
        "def test_after():\n"
        "    assert ENGINE.generate_text([{'role': 'user', 'content': 'hi'}], max_tokens=4)\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "EngineCrashedError" in done.stdout and "SIGILL" in done.stdout
    assert "1 failed, 1 passed" in done.stdout.splitlines()[-1]


def test_the_callers_process_never_imports_llama_cpp(tiny_gguf):
    """Only the host and the probe load llama.cpp (it becomes an optional extra)."""
    code = (
        "import sys\n"
        "import localmem, localmem.mechanisms\n"
        "from localmem.llm import make_engine\n"
        "from localmem.config import EngineConfig\n"
        f"engine = make_engine(EngineConfig(model_path={str(tiny_gguf)!r}, n_ctx=1024))\n"
        "assert engine.count_tokens('hello') == 5\n"
        "assert 'llama_cpp' not in sys.modules, 'llama_cpp imported in the caller'\n"
        "print(engine.describe()['host']['state'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "running"


def test_a_host_killed_between_calls_is_counted_and_replaced(tiny_gguf):
    import signal

    engine = crash_engine(tiny_gguf)
    first = ask(engine)
    pid = engine.supervisor.pid
    os.kill(pid, signal.SIGKILL)  # the OOM killer, while the host waits for work
    engine.supervisor._children[0].proc.wait(timeout=30)  # dead (not yet noticed)
    assert ask(engine).value == first.value  # served by a fresh host, no error
    assert engine.supervisor.crashes == 1 and engine.supervisor.pid != pid
    assert "SIGKILL" in engine.describe()["host"]["reason"]


def test_a_file_llama_cpp_refuses_is_the_same_typed_error_on_every_call(tmp_path, tiny_gguf):
    from localmem.errors import ModelError

    alien = tmp_path / "alien.gguf"
    alien.write_bytes(tiny_gguf.read_bytes().replace(b"llama", b"zzzzz", 1))
    engine = HostEngine(alien, n_threads=1, chat_template="chatml")
    for _ in range(2):
        with pytest.raises(ModelError, match="could not load"):
            engine.generate_text([{"role": "user", "content": "hi"}], max_tokens=2)
    assert engine.supervisor.crashes == 0 and engine.supervisor.pid is None
