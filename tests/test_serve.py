"""`localmem serve`: one process owns a store; clients (Python, CLI, MCP) go through it.

Every test runs a real server process on a real store and talks to it over real loopback
HTTP; the contract tests run the same API checks in-process and served.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import pytest
from test_mcp import check_tool_schemas

import localmem
from localmem.discovery import DISCOVERY_FILE, TOKEN_FILE, find_server, proof
from localmem.errors import InputError, LocalMemError, NotFoundError, StoreError
from localmem.remote import RemoteMemory

pytestmark = pytest.mark.slow


def start_server(store: Path, *options: str, env: dict | None = None) -> subprocess.Popen:
    """`localmem serve STORE [OPTIONS]` in a child process, returned once it is found."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "localmem", "serve", str(store), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 120
    while find_server(store) is None:
        if proc.poll() is not None:
            raise AssertionError(f"serve exited: {proc.stderr.read()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("serve did not start")
        time.sleep(0.1)
    return proc


def stop_server(proc: subprocess.Popen) -> str:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.stderr.read() if proc.stderr else ""


@pytest.fixture
def served(tmp_path):
    store = tmp_path / "store"
    proc = start_server(store, "--ingest-dir", str(tmp_path))
    yield store, proc
    stop_server(proc)


def raw(store: Path, method: str, body: bytes, token: str | None = "store") -> tuple[int, dict]:
    """One request as any HTTP client would send it."""
    info = find_server(store)
    parts = urlsplit(info.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {info.token if token == 'store' else token}"
    conn.request("POST", f"/v1/{method}", body=body, headers=headers)
    response = conn.getresponse()
    data = json.loads(response.read())
    conn.close()
    return response.status, data


# -- the contract: the same API checks in-process and served ---------------------------------
@pytest.fixture(params=["in-process", "served"])
def api(request, tmp_path, embedder):
    store = tmp_path / "store"
    if request.param == "in-process":
        mem = localmem.Memory.open(store, embedder=embedder)
        yield mem
        mem.close()
    else:
        proc = start_server(store)
        with localmem.Memory.connect(store) as mem:
            yield mem
        stop_server(proc)


def test_the_memory_api_behaves_the_same_served(api):
    first = api.add(
        "Caroline went to a support group",
        kind="message",
        user_id="caroline",
        event_time="2023-05-07T12:00:00+00:00",
        metadata={"source": "chat"},
    )
    assert first.event_time.year == 2023 and first.metadata == {"source": "chat"}
    many = api.add_many(["Melanie paints sunrises", {"content": "The deploy runs on Fridays"}])
    assert len(many) == 2 and api.count() == 3
    assert api.get(first.id) == first
    changed = api.update(many[0].id, content="Melanie paints sunsets")
    assert changed.content == "Melanie paints sunsets"
    assert [e.event for e in api.history(many[0].id)] == ["ADD", "UPDATE"]
    result = api.search("who paints?", k=2)
    assert result[0].memory.id == many[0].id and result.stages and "total" in result.explain()
    scoped = api.search("support", user_id="caroline")
    assert [h.memory.id for h in scoped] == [first.id]
    assert api.delete(first.id).deleted and api.count() == 2
    assert not api.restore(first.id).deleted
    assert {m.id for m in api.list(limit=10)} == {first.id, *(m.id for m in many)}

    session = api.start_session("Debug a 500 on a null user field")
    api.add_thought(session.id, "Reproduce with a null user field")
    api.add_thought(session.id, "Add a null check and return 400")
    assert [t.number for t in api.thoughts(session.id)] == [1, 2]
    done = api.complete_session(session.id, abstract=True)
    assert done.status == "completed" and done.metadata["procedure_id"]
    match = api.procedures.find("Debug a 500 when the email is null")
    assert match is not None and "null check" in api.procedures.render(match).lower()

    with pytest.raises(InputError):
        api.add("   ")
    with pytest.raises(NotFoundError):
        api.get("nosuchid")
    with pytest.raises(InputError):
        api.search("x", mode="psychic")
    api.purge(many[1].id)
    assert api.get(many[1].id, include_deleted=True).content != "The deploy runs on Fridays"


# -- the server itself -------------------------------------------------------------------------
def test_discovery_token_and_loopback(served):
    store, proc = served
    info = find_server(store)
    assert info.pid == proc.pid and urlsplit(info.url).hostname == "127.0.0.1"
    for name in (DISCOVERY_FILE, TOKEN_FILE):
        assert stat.S_IMODE((store / name).stat().st_mode) == 0o600
    assert raw(store, "count", b"{}", token=None)[0] == 401
    status, body = raw(store, "count", b"{}", token="not-the-token")
    assert status == 401 and body["error"]["type"] == "LocalMemError"
    assert raw(store, "count", b"{}") == (200, {"result": 0})
    with pytest.raises(LocalMemError, match="token"):
        RemoteMemory(info.url, "wrong").count()


def test_bad_requests_get_typed_errors_and_the_server_keeps_serving(served):
    store, _ = served
    cases = {
        b"{not json": (400, "InputError"),
        b"[1, 2]": (400, "InputError"),
        b'{"content": 5}': (400, "InputError"),
        b'{"content": "x", "colour": "red"}': (400, "InputError"),
        b'{"content": "x", "progress": 1}': (400, "InputError"),
    }
    for body, (status, kind) in cases.items():
        got_status, got = raw(store, "add", body)
        assert (got_status, got["error"]["type"]) == (status, kind), body
        assert "Traceback" not in got["error"]["message"]
    assert raw(store, "drop_everything", b"{}")[0] == 404
    huge = json.dumps({"content": "x" * (33 * 1024 * 1024)}).encode()
    assert raw(store, "add", huge)[0] == 413
    status, body = raw(store, "add", b'{"content": "still serving"}')
    assert status == 200 and body["result"]["content"] == "still serving"


def test_a_second_server_names_the_first(served):
    store, proc = served
    second = subprocess.run(
        [sys.executable, "-m", "localmem", "serve", str(store)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert second.returncode == 1
    assert f"served by process {proc.pid}" in second.stderr
    assert len(second.stderr.strip().splitlines()) == 1


def test_a_non_loopback_address_is_refused(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "localmem", "serve", str(tmp_path / "s"), "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "loopback" in proc.stderr
    assert not (tmp_path / "s").exists()  # refused before the store was made


def test_cli_python_and_mcp_clients_share_a_served_store(served):
    """Several processes write at once; every acknowledged write is there, counts add up."""
    store, _ = served
    cli_adds = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys\nfrom localmem.cli import main\n"
                f"for i in range(8): assert main(['add', f'cli {{sys.argv[1]}} note {{i}}', "
                f"'--store', {str(store)!r}]) == 0",
                str(n),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    acknowledged = []
    with localmem.connect(store) as mem:
        for i in range(10):
            acknowledged.append(mem.add(f"python note {i}").id)
            mem.search("note", k=3)
    for proc in cli_adds:
        _out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-2000:]

    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def through_mcp():
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "localmem", "mcp", str(store)], env={**os.environ}
        )
        async with stdio_client(params) as streams, ClientSession(*streams) as session:
            await session.initialize()
            result = await session.call_tool("add_memory", {"content": "added over MCP"})
            assert not result.is_error, result.content[0].text
            return json.loads(result.content[0].text)["id"]

    mcp_id = anyio.run(through_mcp)  # `localmem mcp` finds the server and goes through it
    with localmem.connect(store) as mem:
        assert mem.count() == 10 + 16 + 1
        assert all(mem.get(i) for i in [*acknowledged, mcp_id])


def test_mcp_over_the_servers_http_endpoint(served):
    store, _ = served
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    info = find_server(store)

    async def scenario(token):
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as client,
            streamable_http_client(f"{info.url}/mcp", http_client=client) as streams,
            ClientSession(*streams[:2]) as session,
        ):
            init = await session.initialize()
            assert init.server_info.version == localmem.__version__
            tools = await session.list_tools()
            check_tool_schemas(tools.tools)  # what stdio shows (tests/test_mcp.py)
            result = await session.call_tool("add_memory", {"content": "over streamable HTTP"})
            assert not result.is_error
            found = await session.call_tool("search_memories", {"query": "streamable", "k": 3})
            hit = json.loads(found.content[0].text)["hits"][0]
            assert set(hit) == {"id", "content", "score", "relevance", "kind", "time", "source"}
            bad = await session.call_tool("search_memories", {"query": "x", "k": "many"})
            assert bad.is_error and bad.content[0].text.startswith("InputError: search_memories")
            resource = await session.read_resource(f"memory://{hit['id']}")
            assert resource.contents[0].mime_type == "application/json"

    anyio.run(scenario, info.token)
    with localmem.connect(store) as mem:
        assert [m.content for m in mem.list()] == ["over streamable HTTP"]


def test_a_killed_server_loses_no_acknowledged_write(tmp_path, embedder):
    store = tmp_path / "store"
    proc = start_server(store)
    acknowledged: list[str] = []
    failures: list[Exception] = []

    def writer():
        with localmem.connect(store) as mem:
            for i in range(10_000):
                try:
                    acknowledged.append(mem.add(f"note {i} before the kill").id)
                except StoreError as exc:  # the server died mid-request: a clear error
                    failures.append(exc)
                    return

    thread = threading.Thread(target=writer)
    thread.start()
    while len(acknowledged) < 20:
        time.sleep(0.05)
    proc.kill()  # SIGKILL, no cleanup
    proc.wait()
    thread.join(timeout=120)
    assert failures and "did not answer" in str(failures[0])
    assert find_server(store) is None  # the stale discovery file is ignored
    with localmem.Memory.open(store, embedder=embedder) as mem:
        for memory_id in acknowledged:
            assert mem.get(memory_id)
    restarted = start_server(store)  # and it can be served again
    try:
        with localmem.connect(store) as mem:
            assert mem.count() >= len(acknowledged)
    finally:
        stop_server(restarted)
    assert not (store / DISCOVERY_FILE).exists()  # a clean stop removes the discovery file


def test_the_server_runs_deferred_jobs_itself(served):
    store, _ = served
    with localmem.connect(store) as mem:
        item = mem.add("Caroline adopted a rescue dog named Biscuit in Portland", mine="deferred")
        deadline = time.monotonic() + 60
        while not mem.attributes_of([item.id]) and time.monotonic() < deadline:
            time.sleep(0.2)  # nobody runs the job here: the server's worker does
        mined = mem.attributes_of([item.id])[item.id].mined
        assert mined.attributes and any(a.axis == "entities" for a in mined.attributes)


def test_a_stale_discovery_file_is_never_trusted(tmp_path, embedder):
    """After a crash the pid (here: this test's own, alive) and the port may belong to another
    program; the instance name the file holds is what a client checks before the token."""
    store = tmp_path / "store"
    with localmem.Memory.open(store, embedder=embedder) as mem:
        mem.add("written before the crash")
    (store / TOKEN_FILE).write_text("stolen-if-sent")
    (store / DISCOVERY_FILE).write_text(
        json.dumps({"pid": os.getpid(), "url": "http://127.0.0.1:9"})
    )
    assert find_server(store) is None
    from localmem.cli import main

    assert main(["search", "crash", "--store", str(store)]) == 0  # in-process, as if unserved
    proc = start_server(store)  # a new server replaces the stale files
    try:
        info = find_server(store)
        assert info.pid == proc.pid and info.token != "stolen-if-sent"
        assert "stolen" not in repr(info)
    finally:
        stop_server(proc)


def test_paths_and_parts_that_are_not_the_api(served):
    store, _ = served
    info = find_server(store)
    parts = urlsplit(info.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.request("GET", "/v1/health")  # the one answer without the token: a proof, if asked
    health = conn.getresponse()
    assert health.status == 200 and json.loads(health.read())["result"] == {}
    conn.request("GET", "/v1/health?challenge=00ff")
    answer = json.loads(conn.getresponse().read())["result"]["proof"]
    assert answer == proof(info.token, "00ff") and info.token not in answer
    conn.request("GET", "/v1/health?challenge=not-hex")
    refused = conn.getresponse()
    assert refused.status == 400 and json.loads(refused.read())["error"]["type"] == "InputError"
    auth = {"Authorization": f"Bearer {info.token}"}
    for method, path, status in (("GET", "/v1/add", 404), ("POST", "/nowhere", 404)):
        conn.request(method, path, headers=auth)
        response = conn.getresponse()
        assert response.status == status
        assert json.loads(response.read())["error"]["type"] in ("InputError", "NotFoundError")
    conn.request("POST", "/mcp", body=b"{}", headers={"Content-Type": "application/json"})
    assert conn.getresponse().status == 401  # MCP over HTTP wants the token too
    conn.close()
    with pytest.raises(InputError, match="loopback"):
        localmem.connect("http://192.0.2.1:8000", token=info.token)

    with localmem.connect(store) as mem:
        assert mem.run_jobs().remaining == 0  # the same JobsReport as in-process
        assert not hasattr(mem, "embedder")  # an in-process part: absent, and says why
        with pytest.raises(StoreError, match="needs the store in this process"):
            mem.kernel  # noqa: B018
        with pytest.raises(InputError):
            mem.thought_of(5)
        with pytest.raises(InputError):
            mem.attributes_of("not-a-list")
        with pytest.raises(InputError):
            mem.search("x", stages=["candidates"])


def test_a_served_add_many_goes_in_batches_with_progress(served):
    store, _ = served
    seen: list[int] = []
    with localmem.connect(store) as mem:
        items = [f"note {i} of a long import" for i in range(7)] + ["  "]
        with pytest.raises(InputError):
            mem.add_many(items, batch_size=3, progress=seen.append)
        assert seen == [3, 6]  # the batches before the bad one are stored, as in-process
        assert mem.count() == 6


def test_ingest_goes_through_the_server(served, tmp_path, monkeypatch):
    store, _ = served
    notes = tmp_path / "notes.md"
    notes.write_text("# Deploys\n\nThe deploy runs on Fridays.\n\nRollbacks need two people.\n")
    lines = tmp_path / "lines.jsonl"
    lines.write_text('{"content": "Caroline went to a support group"}\n{"content": "hi"}\n')
    from localmem.cli import main

    monkeypatch.chdir(tmp_path)  # a relative path is the client's, not the server's
    assert main(["ingest", "notes.md", "lines.jsonl", "--store", str(store)]) == 0
    with localmem.connect(store) as mem:
        first = mem.count()
        assert first >= 3
        assert main(["ingest", "notes.md", "lines.jsonl", "--store", str(store)]) == 0
        assert mem.count() == first  # a rerun adds nothing, served or not


def test_inference_and_as_of_behave_the_same_served(api):
    old = api.add("Ann lives in Paris.", user_id="u", event_time="2021-01-01T00:00:00+00:00")
    (applied,) = api.infer(
        "Ann moved to Rome.", user_id="u", event_time="2023-01-01T00:00:00+00:00"
    )
    assert applied.event == "INVALIDATE" and applied.target.id == old.id
    assert api.get(old.id).superseded_by == applied.memory.id
    now = api.search("where does Ann live", user_id="u").hits
    assert [h.memory.id for h in now] == [applied.memory.id]
    then = api.search("where does Ann live", user_id="u", as_of="2022-01-01T00:00:00+00:00")
    assert [h.memory.id for h in then.hits] == [old.id]
    again = api.add("Ann moved to Rome.", user_id="u", infer=True)
    assert again.id == applied.memory.id and api.count() == 2


def test_a_client_cannot_forge_history(served):
    """Issue 30 item 8: `event`, `actor` and `info` are not arguments a client may give; a
    served change is recorded as the server's."""
    store, _ = served
    with localmem.connect(store) as mem:
        item = mem.add("The backup runs at 2 am")
        forged = {"memory_id": item.id, "content": "x", "event": "PURGE", "actor": "system:admin"}
        status, body = raw(store, "update", json.dumps(forged).encode())
        assert status == 400 and body["error"]["type"] == "InputError"
        status, body = raw(
            store, "delete", json.dumps({"memory_id": item.id, "actor": "x"}).encode()
        )
        assert status == 400 and body["error"]["type"] == "InputError"
        with pytest.raises(TypeError):
            mem.update(item.id, content="x", info={"reason": "forged"})
        mem.update(item.id, content="The backup runs at 3 am")
        mem.delete(item.id)
        events = [(e.event, e.actor) for e in mem.history(item.id)]
        assert events[1:] == [("UPDATE", "server"), ("DELETE", "server")]
        assert mem.get(item.id, include_deleted=True).content == "The backup runs at 3 am"


def test_every_bad_request_of_the_fuzzing_list_is_typed(served):
    """Issue 30 item 7: each of these was an untyped 500 (one with SQL in its text); each is
    a typed 4xx now (503 when a model was asked for and none is configured), naming the field,
    with no SQL, and the server keeps serving."""
    store, _ = served
    with localmem.connect(store) as mem:  # something to rerank, so the reranker runs
        mem.add("The deploy runs on Fridays")
    surrogate = "\ud800"
    cases = [
        ("add", b"[" * 200_000, 400, "nests too deeply"),
        ("procedures.get", {"procedure_id": surrogate}, 400, "procedure_id"),
        ("procedures.versions", {"procedure_id": surrogate}, 400, "procedure_id"),
        ("search", {"query": "x", "kinds": [surrogate]}, 400, "kinds[0]"),
        ("run_jobs", {"job_ids": [surrogate]}, 400, "job_ids[0]"),
        ("run_jobs", {"job_ids": ["x"]}, 400, "job_ids[0]"),
        ("run_jobs", {"kinds": [surrogate]}, 400, "kinds[0]"),
        ("sources_of", {"memory_ids": [surrogate]}, 400, "memory_ids[0]"),
        ("list", {"session_id": surrogate}, 400, "session_id"),
        ("count", {"user_id": ["a", "b"]}, 400, "user_id"),
        ("infer", {"content": "I like tea", "speaker": 5}, 400, "speaker"),
        ("search", {"query": "deploy", "rerank": "engine"}, 503, "no engine"),
        ("search", {"query": "deploy", "expand": "engine"}, 503, "no engine"),
        ("add", {"content": "x", "user_id": "u\x00"}, 400, "user_id"),
        ("get", {"memory_id": "abcd\x00"}, 400, "memory id"),
    ]
    for method, args, status, field_named in cases:
        body = args if isinstance(args, bytes) else json.dumps(args).encode()
        got_status, got = raw(store, method, body)
        message = got["error"]["message"]
        assert got_status == status, (method, args, got)
        assert got["error"]["type"] != "LocalMemError" and field_named in message, message
        assert "SELECT" not in message and "FROM" not in message
    status, body = raw(
        store, "infer", json.dumps({"content": "I like tea", "speaker": "D\\u"}).encode()
    )
    assert status == 200 and body["result"][0]["memory"]["content"] == "D\\u likes tea"


def test_a_replaying_stranger_on_the_old_port_gets_no_token_and_no_request(tmp_path):
    """Issue 30 item 5: after a crash, a local program on the old port (its pid reused) that
    recorded what the live server said without the token replays it. The client sends a
    fresh challenge first; the stranger cannot answer it, and sees neither the token nor a
    request, whether the client came through the discovery file or a URL."""
    import http.server

    seen: list[tuple[str, str, str]] = []
    recorded = {"instance": "a1b2", "proof": proof("the-token", "00" * 16)}

    class Stranger(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            seen.append((self.command, self.path, self.headers.get("Authorization", "")))
            body = json.dumps({"result": recorded}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args) -> None:
            pass

    stranger = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stranger)
    threading.Thread(target=stranger.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{stranger.server_address[1]}"
    store = tmp_path / "store"
    store.mkdir()
    (store / TOKEN_FILE).write_text("the-token")
    (store / DISCOVERY_FILE).write_text(json.dumps({"pid": os.getpid(), "url": url, **recorded}))
    try:
        assert find_server(store) is None
        with pytest.raises(StoreError, match="did not prove"):
            RemoteMemory(url, "the-token").count()
    finally:
        stranger.shutdown()
    assert seen and all(method == "GET" and auth == "" for method, _, auth in seen)
    assert all(path.startswith("/v1/health?challenge=") for _, path, _ in seen)


def test_ingest_through_the_server_reads_only_the_named_folders(tmp_path):
    """Issue 30 item 6: a client could have the server read any file its user can (key files
    with no extension, /etc/shadow as root). By default it reads files under the home folder
    only, never hidden ones (links resolved first); --ingest-dir names others instead;
    --no-ingest reads none."""
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (home / ".ssh").mkdir()
    (home / "notes" / "deploys.md").write_text("The deploy runs on Fridays.\n")
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (home / "notes" / "key.md").symlink_to(home / ".ssh" / "id_ed25519")
    (home / "notes" / ".env").write_text("TOKEN=secret\n")
    outside = tmp_path / "outside.md"
    outside.write_text("Not under the home folder.\n")
    env = {**os.environ, "HOME": str(home)}

    def ingest(store: Path, path: Path) -> str | None:
        with localmem.connect(store) as mem:
            try:
                mem.ingest_file(str(path))
            except InputError as exc:
                return str(exc)
        return None

    store = tmp_path / "store"
    proc = start_server(store, env=env)  # the default: the home folder
    try:
        assert ingest(store, home / "notes" / "deploys.md") is None
        assert "hidden" in ingest(store, home / ".ssh" / "id_ed25519")
        assert "hidden" in ingest(store, home / "notes" / "key.md")  # a link into .ssh
        assert "hidden" in ingest(store, home / "notes" / ".env")
        assert "only under" in ingest(store, outside)
        with localmem.connect(store) as mem:
            contents = " ".join(m.content for m in mem.list(limit=100))
        assert "Fridays" in contents and "PRIVATE KEY" not in contents and "secret" not in contents
    finally:
        stop_server(proc)
    proc = start_server(store, "--ingest-dir", str(tmp_path / "home" / "notes"), env=env)
    try:
        assert ingest(store, outside) is not None
        assert ingest(store, home / "notes" / "deploys.md") is None  # already stored: nothing new
    finally:
        stop_server(proc)
    proc = start_server(store, "--no-ingest", env=env)
    try:
        assert "reads no files" in ingest(store, home / "notes" / "deploys.md")
    finally:
        stop_server(proc)


def test_mcp_answers_on_any_loopback_address_and_still_refuses_strangers(tmp_path):
    """Issue 30 item 11: `serve --host 127.1.2.3` was accepted, then every /mcp request got
    421 (the SDK's allow-list knew 127.0.0.1, localhost and ::1 only). A foreign Host or
    Origin is still refused."""
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    store = tmp_path / "store"
    proc = start_server(store, "--host", "127.1.2.3")
    try:
        info = find_server(store)
        assert urlsplit(info.url).hostname == "127.1.2.3"

        async def scenario():
            headers = {"Authorization": f"Bearer {info.token}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=60) as client,
                streamable_http_client(f"{info.url}/mcp", http_client=client) as streams,
                ClientSession(*streams[:2]) as session,
            ):
                await session.initialize()
                result = await session.call_tool("add_memory", {"content": "on 127.1.2.3"})
                assert not result.is_error, result.content[0].text

        anyio.run(scenario)
        parts = urlsplit(info.url)
        hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
        for extra, status in (({"Host": "evil.example"}, 421), ({"Origin": "http://evil"}, 403)):
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
            headers = {
                "Authorization": f"Bearer {info.token}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **extra,
            }
            conn.request("POST", "/mcp", body=hello, headers=headers)
            assert conn.getresponse().status == status, extra
            conn.close()
    finally:
        stop_server(proc)


def test_a_slow_header_sender_is_cut_off_and_others_are_served(served):
    """Issue 30 item 11: connections that send their headers a byte at a time were held for as
    long as they kept sending; now a request's headers have 10 s."""
    import socket

    store, _ = served
    parts = urlsplit(find_server(store).url)
    slow = []
    for _ in range(10):
        sock = socket.create_connection((parts.hostname, parts.port), timeout=60)
        sock.sendall(b"POST /v1/count HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        slow.append(sock)
    started = time.monotonic()
    cut = set()
    while len(cut) < len(slow) and time.monotonic() - started < 40:
        for i, sock in enumerate(slow):
            if i in cut:
                continue
            try:
                sock.sendall(b"X")  # one more header byte, now and then
            except OSError:
                cut.add(i)
        assert raw(store, "count", b"{}")[0] == 200  # the server keeps serving
        time.sleep(1)
    elapsed = time.monotonic() - started
    for sock in slow:
        sock.close()
    assert len(cut) == len(slow) and elapsed < 30, (len(cut), elapsed)
