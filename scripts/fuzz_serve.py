"""Fuzzing a served store (issue 30): the HTTP API, and MCP over stdio and streamable HTTP.

Usage:
    python scripts/fuzz_serve.py [--http-minutes 10] [--mcp-minutes 10] [--timeout 30]
        [--docs docs/benchmarks.md]

A real `localmem serve` on a real store (seeded with memories, a session and a procedure)
answers requests that hypothesis draws from the declared API (localmem/api): each operation's
parameters with values of their declared types, of the wrong types, hostile texts (lone
surrogates, NUL, 5,000 characters), huge and negative numbers, deep JSON, unknown parameters,
ids of real memories, and bodies that are not JSON at all. MCP gets the same over stdio (a raw
pipe client, so nothing is cleaned by a client library) and over the server's /mcp endpoint:
tool calls with arguments drawn from each tool's input schema and hostile ones, unknown tools,
and lines that are not JSON. `--mcp-minutes` is split between the two transports.

What counts as a failure: an HTTP 500, a 2xx/4xx whose body is not the typed JSON error, an MCP
answer that says the tool failed unexpectedly, a JSON-RPC internal error (-32603), and any
request not answered within `--timeout` seconds (hung). Every failure is printed with its
request; the counts go to the `fuzz-serve` section of `--docs`.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import types
import typing
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin
from urllib.parse import urlsplit

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent

from localmem import Memory  # noqa: E402
from localmem.api import served  # noqa: E402
from localmem.discovery import find_server  # noqa: E402

#: HTTP statuses a typed answer may have
TYPED = {200, 400, 401, 404, 409, 413, 503}
#: how an MCP error text starts when it is typed
MCP_TYPED = (
    "InputError:",
    "NotFoundError:",
    "StoreError:",
    "StoreReadOnlyError:",
    "EngineUnavailableError:",
    "ModelError:",
    "SchemaError:",
)

# -- values -------------------------------------------------------------------------------------
ANY_CHAR = st.characters(exclude_categories=())  # lone surrogates included
HOSTILE_TEXT = st.sampled_from(
    ["", "   ", "a\x00b", "\ud800", "ok \udcff", "x" * 5000, "DOMAIN\\user", "'; DROP TABLE x;--"]
)
texts = st.one_of(st.text(ANY_CHAR, max_size=30), HOSTILE_TEXT, st.sampled_from(["deploy"]))
numbers = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, -1, 10**6, 2**63]),
    st.floats(allow_nan=True, allow_infinity=True),
)
times = st.one_of(
    st.sampled_from(
        [
            "2024-05-01T09:30:00+00:00",
            "2023-05-07",
            "9999-12-31T23:59:59-12:00",
            "Z",
            "nan",
            "2023-13-45T00:00:00Z",
        ]
    ),
    numbers,
)
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
json_like = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(ANY_CHAR, max_size=6), inner)
    ),
    max_leaves=8,
)


def deep(levels: int) -> Any:
    """A list nested ``levels`` deep."""
    value: Any = []
    for _ in range(levels):
        value = [value]
    return value


def of_type(kind: Any, ids: Sequence[str]) -> st.SearchStrategy:
    """Values of a declared type (mostly well-formed, so calls reach the store)."""
    origin, args = get_origin(kind), get_args(kind)
    if kind is Any:
        return json_like
    if kind is type(None):
        return st.none()
    if origin in (Union, types.UnionType):
        if datetime in args:
            return st.one_of(times, st.none()) if type(None) in args else times
        return st.one_of(*(of_type(a, ids) for a in args))
    if origin is Literal:
        return st.sampled_from(args)
    if kind is str:
        return st.one_of(st.sampled_from(list(ids) or ["x"]), texts)
    if kind is bool:
        return st.booleans()
    if kind is int:
        return st.one_of(st.integers(-5, 50), st.sampled_from([10**6, 2**63, -(2**63)]))
    if kind is float:
        return st.one_of(st.floats(-2, 2), numbers)
    if origin in (list, tuple, Sequence, typing.Sequence) or kind in (list, tuple):
        item = args[0] if args else Any
        return st.lists(of_type(item, ids), max_size=4)
    if origin in (dict, Mapping, typing.Mapping):
        return st.dictionaries(st.text(ANY_CHAR, max_size=6), json_like, max_size=3)
    if origin is Callable or kind is Callable:
        return st.none()
    return json_like


def hostile() -> st.SearchStrategy:
    return st.one_of(json_like, st.sampled_from([deep(40), {"a": deep(40)}, [[]] * 50]))


# -- the server ---------------------------------------------------------------------------------
class Server:
    """`localmem serve` on a seeded store, in a child process."""

    def __init__(self, work: Path) -> None:
        self.store = work / "store"
        self.files = work / "files"
        self.files.mkdir(parents=True)
        (self.files / "notes.md").write_text("# Deploys\n\nThe deploy runs on Fridays.\n")
        (self.files / "lines.jsonl").write_text('{"content": "a line"}\n{"content": "\\ud800"}\n')
        with Memory.open(self.store) as mem:
            for i in range(20):
                mem.add(f"note {i}: the deploy window is day {i}", user_id=f"u{i % 3}")
            session = mem.start_session("Debug a 500 on a null user field")
            mem.add_thought(session.id, "Reproduce with a null user field")
            mem.add_thought(session.id, "Add a null check and return 400")
            mem.complete_session(session.id, abstract=True)
            self.ids = [m.id for m in mem.list(limit=30)] + [session.id]
            self.ids += [p.id for p in mem.procedures.list()]
        self.proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "localmem", "serve"),
                str(self.store),
                "--ingest-dir",
                str(self.files),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 180
        while (info := find_server(self.store)) is None:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"serve did not start: {self.proc.stderr.read()[-2000:]}")
            time.sleep(0.2)
        self.url, self.token = info.url, info.token
        parts = urlsplit(self.url)
        self.host, self.port = parts.hostname, parts.port

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        return self.proc.stderr.read()


class Tally:
    """Requests and failures by kind, and the first failures in full."""

    def __init__(self, name: str) -> None:
        self.name, self.requests, self.failures = name, 0, Counter()
        self.statuses: Counter = Counter()
        self.examples: list[str] = []

    def fail(self, kind: str, what: str) -> None:
        self.failures[kind] += 1
        if len(self.examples) < 20:
            self.examples.append(f"{kind}: {what[:300]}")
            print(f"[{self.name}] {kind}: {what[:300]}", file=sys.stderr, flush=True)


def _run_for(minutes: float, test: Callable[[], None]) -> None:
    """Run a hypothesis test again and again (new seeds) until the time is up."""
    deadline = time.monotonic() + minutes * 60
    while time.monotonic() < deadline:
        test()


_SETTINGS = settings(
    max_examples=100,
    deadline=None,
    database=None,
    phases=[Phase.generate],  # a failure is counted, not shrunk
    suppress_health_check=list(HealthCheck),
)


# -- HTTP ---------------------------------------------------------------------------------------
def fuzz_http(server: Server, minutes: float, timeout: float) -> Tally:
    tally = Tally("http")
    ops = served()
    names = sorted(ops)

    def send(path: str, body: bytes) -> None:
        tally.requests += 1
        conn = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
        try:
            headers = {"Authorization": f"Bearer {server.token}"}
            conn.request("POST", path, body=body, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        except TimeoutError:
            tally.fail("hung", f"{path} {body[:200]!r}")
            return
        except (OSError, http.client.HTTPException) as exc:
            tally.fail("no answer", f"{path} {body[:200]!r}: {exc}")
            return
        finally:
            conn.close()
        tally.statuses[response.status] += 1
        if response.status not in TYPED:
            tally.fail(f"HTTP {response.status}", f"{path} {body[:200]!r} -> {raw[:300]!r}")
            return
        try:
            data = json.loads(raw)
            ok = "result" in data or isinstance(data["error"]["type"], str)
        except (ValueError, KeyError, TypeError):
            ok = False
        if not ok:
            tally.fail("untyped", f"{path} {body[:200]!r} -> {raw[:300]!r}")

    @_SETTINGS
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        how = data.draw(st.sampled_from(["call"] * 8 + ["body", "unknown"]))
        if how == "body":
            body = data.draw(
                st.one_of(
                    st.binary(max_size=40),
                    st.sampled_from([b"[" * 200_000, b"{" * 5000, b"null", b"[1]", b'"x"']),
                )
            )
            send(f"/v1/{data.draw(st.sampled_from(names))}", body)
            return
        if how == "unknown":
            name = data.draw(
                st.one_of(
                    st.sampled_from(["_kernel", "kernel", "..%2Fetc", "procedures.__init__"]),
                    st.from_regex(r"[a-z_.%]{1,20}", fullmatch=True),
                )
            )
            send(f"/v1/{name}", b"{}")
            return
        op = ops[data.draw(st.sampled_from(names))]
        params = [p for p in op.params if not p.local and p.kind.name != "VAR_KEYWORD"]
        chosen = (
            data.draw(st.lists(st.sampled_from(params), unique_by=lambda p: p.name))
            if params
            else []
        )
        required = [p for p in params if p.required]
        args: dict[str, Any] = {}
        for p in {*required, *chosen}:
            bad = data.draw(st.integers(0, 9)) == 0
            args[p.name] = data.draw(hostile() if bad else of_type(p.type, server.ids))
        if data.draw(st.integers(0, 19)) == 0:
            args[data.draw(st.text(ANY_CHAR, max_size=8))] = data.draw(json_like)
        try:
            body = json.dumps(args).encode()
        except (ValueError, RecursionError):
            return
        send(f"/v1/{op.name}", body)

    _run_for(minutes, one)
    return tally


# -- MCP ----------------------------------------------------------------------------------------
def tool_arguments(schema: dict[str, Any], data: st.DataObject, ids: Sequence[str]) -> dict:
    """Arguments for a tool from its JSON schema, some of them of the wrong kind."""
    out: dict[str, Any] = {}
    props = schema.get("properties", {})
    required = set(schema.get("required", ()))
    for name, prop in props.items():
        if name not in required and data.draw(st.booleans()):
            continue
        if data.draw(st.integers(0, 7)) == 0:
            out[name] = data.draw(hostile())
            continue
        out[name] = data.draw(_from_schema(prop, ids))
    return out


def _from_schema(prop: dict[str, Any], ids: Sequence[str]) -> st.SearchStrategy:
    if "anyOf" in prop:
        return st.one_of(*(_from_schema(p, ids) for p in prop["anyOf"]))
    if "enum" in prop:
        return st.sampled_from(prop["enum"])
    kind = prop.get("type")
    if kind == "string":
        return st.one_of(st.sampled_from(list(ids)), texts, times)
    if kind == "integer":
        return st.one_of(st.integers(-5, 50), st.sampled_from([10**6, 2**63]))
    if kind == "number":
        return numbers
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(_from_schema(prop.get("items", {}), ids), max_size=4)
    if kind == "object":
        return st.dictionaries(st.text(ANY_CHAR, max_size=6), json_like, max_size=3)
    if kind == "null":
        return st.none()
    return json_like


def _mcp_check(tally: Tally, request: str, answer: dict | None) -> None:
    if answer is None:
        tally.fail("hung", request)
        return
    if "error" in answer:
        code = answer["error"].get("code")
        tally.statuses[f"jsonrpc {code}"] += 1
        if code == -32603:
            tally.fail("internal error", f"{request} -> {answer}")
        return
    result = answer.get("result", {})
    if result.get("isError"):
        text = result["content"][0]["text"] if result.get("content") else ""
        tally.statuses["tool error"] += 1
        if not text.startswith(MCP_TYPED):
            tally.fail("untyped tool error", f"{request} -> {text[:300]}")
    else:
        tally.statuses["ok"] += 1


class Stdio:
    """`localmem mcp` through the server (it finds it), driven line by line."""

    def __init__(self, server: Server, timeout: float) -> None:
        self.timeout = timeout
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "localmem", "mcp", str(server.store)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
        hello["clientInfo"] = {"name": "fuzz", "version": "0"}
        self.ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}, 180)
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        listed = self.ask({"jsonrpc": "2.0", "id": 0, "method": "tools/list"})
        self.tools = listed["result"]["tools"]

    def send(self, line: str) -> None:
        self.proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float, ident: Any = None) -> dict | None:
        """The next answer (to ``ident``, when given: a late answer to an earlier request that
        hung is skipped), or None after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if not ready:
                return None
            answer = json.loads(self.proc.stdout.readline())
            if ident is None or answer.get("id") == ident:
                return answer
        return None

    def ask(self, message: dict, timeout: float | None = None) -> dict | None:
        self.send(json.dumps(message))
        return self.receive(timeout or self.timeout)

    def close(self) -> int:
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return -9


class StreamableHttp:
    """The server's /mcp endpoint, one JSON-RPC request per POST."""

    def __init__(self, server: Server, timeout: float) -> None:
        self.server, self.timeout = server, timeout
        self.session = ""
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
        hello["clientInfo"] = {"name": "fuzz", "version": "0"}
        self.ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
        self.post(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())
        listed = self.ask({"jsonrpc": "2.0", "id": 0, "method": "tools/list"})
        self.tools = listed["result"]["tools"]

    def post(self, body: bytes) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection(self.server.host, self.server.port, timeout=self.timeout)
        headers = {
            "Authorization": f"Bearer {self.server.token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if self.session:
            headers["mcp-session-id"] = self.session
        try:
            conn.request("POST", "/mcp", body=body, headers=headers)
            response = conn.getresponse()
            raw = response.read()
            self.session = response.getheader("mcp-session-id") or self.session
            return response.status, raw
        finally:
            conn.close()

    def ask(self, message: dict) -> dict | None:
        status, raw = self.post(json.dumps(message).encode())
        return self.answer(status, raw)

    @staticmethod
    def answer(status: int, raw: bytes) -> dict | None:
        for line in raw.decode("utf-8", "replace").split("\n"):  # not splitlines: U+2028
            if line.startswith("data:"):
                return json.loads(line[5:].rstrip("\r"))
        try:
            return json.loads(raw)
        except ValueError:
            text = raw[:200].decode("utf-8", "replace")
            return {"error": {"code": f"HTTP {status}", "message": text}}


def fuzz_mcp(server: Server, minutes: float, timeout: float, transport: str) -> Tally:
    tally = Tally(f"mcp-{transport}")
    client: Any = (
        Stdio(server, timeout) if transport == "stdio" else StreamableHttp(server, timeout)
    )
    tools = {t["name"]: t for t in client.tools}
    counter = iter(range(1, 10**9))

    @_SETTINGS
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        ident = next(counter)
        how = data.draw(st.sampled_from(["call"] * 8 + ["unknown", "raw"]))
        if how == "raw":
            line = data.draw(
                st.one_of(
                    st.text(ANY_CHAR, max_size=40),
                    st.sampled_from(
                        [
                            "{",
                            "[1,2]",
                            f'{{"jsonrpc": "2.0", "id": {ident}, "method": "tools/call", '
                            '"params": {"name": "add_memory", "arguments": {"content": '
                            '"a\\ud800"}}}',
                        ]
                    ),
                )
            ).replace("\n", " ")
            expects = f'"id": {ident}' in line
            tally.requests += 1
            if transport == "stdio":
                client.send(line)
                if expects:
                    _mcp_check(tally, line, client.receive(timeout, ident))
            else:
                try:
                    status, raw = client.post(line.encode("utf-8", "surrogatepass"))
                except TimeoutError:
                    tally.fail("hung", line)
                    return
                if status >= 500:
                    tally.fail(f"HTTP {status}", f"{line} -> {raw[:200]!r}")
            return
        name = data.draw(st.sampled_from(sorted(tools))) if how == "call" else data.draw(texts)
        schema = tools[name]["inputSchema"] if name in tools else {}
        arguments = tool_arguments(schema, data, server.ids)
        message = {"jsonrpc": "2.0", "id": ident, "method": "tools/call"}
        message["params"] = {"name": name, "arguments": arguments}
        try:
            text = json.dumps(message)
        except (ValueError, RecursionError):
            return
        tally.requests += 1
        if transport == "stdio":
            client.send(text)
            answer = client.receive(timeout, ident)
        else:
            try:
                answer = client.answer(*client.post(text.encode()))
            except TimeoutError:
                answer = None
        _mcp_check(tally, text[:300], answer)

    _run_for(minutes, one)
    if transport == "stdio":
        code = client.close()
        if code != 0:
            tally.fail("mcp exit", f"localmem mcp exited {code}")
    return tally


# -- the report ---------------------------------------------------------------------------------
def report(tallies: list[Tally], minutes: dict[str, float], load: tuple, rss_mb: float) -> str:
    lines = [
        "## Fuzzing the served store (issue 30): `fuzz-serve`",
        "",
        f"`python scripts/fuzz_serve.py --http-minutes {minutes['http']:g} --mcp-minutes "
        f"{minutes['mcp']:g}` on {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at "
        f"the start, {time.strftime('%Y-%m-%d')}. Requests drawn by hypothesis from the declared "
        "API (localmem/api) and the MCP tools' schemas: valid, mistyped and hostile values, "
        "unknown names, bodies that are not JSON. A failure is a 500, an untyped answer, an "
        "MCP 'failed unexpectedly' or internal error, or no answer within the timeout.",
        "",
        "| surface | minutes | requests | failures (500s, untyped, hung) | answers |",
        "|---|---|---|---|---|",
    ]
    for t in tallies:
        spent = minutes["http"] if t.name == "http" else minutes["mcp"] / 2
        answers = ", ".join(f"{k}: {v}" for k, v in sorted(t.statuses.items(), key=str))
        failures = sum(t.failures.values())
        kinds = f" ({', '.join(f'{k} {v}' for k, v in t.failures.items())})" if failures else ""
        lines.append(f"| {t.name} | {spent:g} | {t.requests:,} | {failures}{kinds} | {answers} |")
    lines += ["", f"The server's resident memory afterwards: {rss_mb:.0f} MB."]
    examples = [e for t in tallies for e in t.examples]
    if examples:
        lines += ["", "First failures:", ""] + [f"- `{e}`" for e in examples[:20]]
    return "\n".join(lines) + "\n"


def write_section(docs: Path, text: str) -> None:
    body = docs.read_text(encoding="utf-8") if docs.exists() else ""
    head = text.splitlines()[0]
    if head in body:
        start = body.index(head)
        nxt = body.find("\n## ", start + len(head))
        body = body[:start] + text + (body[nxt + 1 :] if nxt != -1 else "")
    else:
        body = body.rstrip() + "\n\n" + text
    docs.write_text(body, encoding="utf-8")


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--http-minutes", type=float, default=10)
    ap.add_argument("--mcp-minutes", type=float, default=10, help="split: stdio, then HTTP")
    ap.add_argument("--timeout", type=float, default=30, help="seconds before a request hangs")
    ap.add_argument("--docs", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = ap.parse_args()
    load = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="fuzz-serve-"))
    os.environ.setdefault("LOCALMEM_HOME", str(work / "home"))
    server = Server(work)
    tallies = []
    try:
        tallies.append(fuzz_http(server, args.http_minutes, args.timeout))
        for transport in ("stdio", "http"):
            tallies.append(fuzz_mcp(server, args.mcp_minutes / 2, args.timeout, transport))
        for t in tallies:
            if not server.alive():
                t.fail("server died", "")
        rss = _rss_mb(server.proc.pid)
    finally:
        log = server.stop()
        shutil.rmtree(work, ignore_errors=True)
    if "Traceback" in log:
        print(log[-4000:], file=sys.stderr)
    text = report(tallies, {"http": args.http_minutes, "mcp": args.mcp_minutes}, load, rss)
    print(text)
    if str(args.docs) not in ("", "."):  # --docs "" prints only
        write_section(args.docs, text)
    return 1 if any(t.failures for t in tallies) else 0


if __name__ == "__main__":
    raise SystemExit(main())
