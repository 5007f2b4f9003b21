"""The HTTP engine against a real llama_cpp.server running the tiny GGUF on 127.0.0.1.

Bad servers (garbage, errors, silence) are small stdlib servers in a thread: the real server
cannot be made to misbehave on demand.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import BaseModel, Field

from localmem.errors import EngineUnavailableError, InputError, ModelError, SchemaError
from localmem.llm.http import HttpEngine
from localmem.llm.tasks import all_tasks, max_output_bytes, run_task, task_schema


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server_url(tiny_gguf, tmp_path_factory):
    port = _free_port()
    log = (tmp_path_factory.mktemp("server") / "server.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(tiny_gguf),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "16384",
            "--n_threads",
            "1",
            "--verbose",
            "False",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/v1/models", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"llama_cpp.server did not start (exit {proc.poll()})")
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def http_engine(server_url):
    return HttpEngine(server_url, n_ctx=16384, timeout_s=60)


@pytest.mark.parametrize("spec", all_tasks(), ids=lambda s: s.name)
def test_every_task_runs_against_the_real_server(spec, http_engine):
    inputs = spec.example()
    result = run_task(
        spec.name, inputs, engine=http_engine, max_tokens=max_output_bytes(spec.name, inputs) + 8
    )
    assert result.served_by == "http:127.0.0.1"
    assert isinstance(result.value, task_schema(spec.name, inputs))
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0


def test_server_and_local_engine_agree(http_engine, tiny_engine):
    """Same GGUF, same template, same grammar, greedy: the same answer either way."""
    inputs = all_tasks()[0].example()
    name = all_tasks()[0].name
    limit = max_output_bytes(name, inputs) + 8
    local = run_task(name, inputs, engine=tiny_engine, max_tokens=limit)
    remote = run_task(name, inputs, engine=http_engine, max_tokens=limit)
    assert local.value == remote.value


def test_models_text_and_token_counts_from_the_server(http_engine):
    assert http_engine.ping() != []
    assert http_engine.count_tokens("hello") == 5  # the server's own tokenizer: bytes
    got = http_engine.generate_text([{"role": "user", "content": "hi"}], max_tokens=8)
    assert got.engine == "http:127.0.0.1" and got.usage.completion_tokens <= 8 + 3


def test_max_tokens_hit_is_a_schema_error(http_engine):
    class Long(BaseModel):
        text: str = Field(min_length=50, max_length=100)

    with pytest.raises(SchemaError, match="max_tokens=4"):
        http_engine.generate_json([{"role": "user", "content": "go"}], Long, max_tokens=4)


def test_server_down_is_engine_unavailable():
    engine = HttpEngine(f"http://127.0.0.1:{_free_port()}", timeout_s=5)
    with pytest.raises(EngineUnavailableError, match="cannot reach"):
        engine.generate_text([{"role": "user", "content": "hi"}])


class _Bad(BaseHTTPRequestHandler):
    mode = "garbage"

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.server.mode == "silent":
            time.sleep(3)
            return
        status, body = {
            "garbage": (200, b"<html>not json</html>"),
            "wrong-shape": (200, json.dumps({"result": "hello"}).encode()),
            "error": (400, json.dumps({"error": {"message": "context too long"}}).encode()),
            "bad-json-content": (
                200,
                json.dumps(
                    {
                        "choices": [
                            {"message": {"content": "not json at all"}, "finish_reason": "stop"}
                        ]
                    }
                ).encode(),
            ),
        }[self.server.mode]
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST


@pytest.fixture
def bad_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Bad)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def make(mode: str) -> str:
        server.mode = mode
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield make
    server.shutdown()
    server.server_close()


class Small(BaseModel):
    answer: str = Field(max_length=10)


@pytest.mark.parametrize(
    ("mode", "error", "message"),
    [
        ("garbage", ModelError, "not JSON"),
        ("wrong-shape", ModelError, "not a chat completion"),
        ("error", ModelError, "400: context too long"),
        ("bad-json-content", SchemaError, "after 2 attempts"),
    ],
)
def test_bad_answers_are_typed_errors(bad_server, mode, error, message):
    engine = HttpEngine(bad_server(mode), timeout_s=5, constraint="none")
    with pytest.raises(error, match=message):
        engine.generate_json([{"role": "user", "content": "hi"}], Small, max_tokens=20)


def test_a_silent_server_times_out(bad_server):
    engine = HttpEngine(bad_server("silent"), timeout_s=0.5)
    start = time.monotonic()
    with pytest.raises(EngineUnavailableError, match=r"within 0\.5 s"):
        engine.generate_text([{"role": "user", "content": "hi"}])
    assert time.monotonic() - start < 3


def test_token_counts_fall_back_to_an_estimate(bad_server):
    engine = HttpEngine(bad_server("error"), timeout_s=5)
    assert engine.count_tokens("x" * 30) == 10


def test_url_is_checked_and_normalised():
    assert HttpEngine("http://127.0.0.1:8080/").base == "http://127.0.0.1:8080/v1"
    assert HttpEngine("http://127.0.0.1:8080/v1").base == "http://127.0.0.1:8080/v1"
    with pytest.raises(InputError):
        HttpEngine("localhost:8080")
