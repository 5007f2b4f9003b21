"""`localmem mcp` against a real MCP client session over stdio (the official SDK's client)."""

from __future__ import annotations

import json
import os
import sys
import time

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TOOLS = {
    "add_memory",
    "search_memories",
    "get_memory",
    "update_memory",
    "delete_memory",
    "restore_memory",
    "memory_history",
    "list_memories",
    "start_session",
    "add_thought",
    "complete_session",
    "find_procedure",
    "record_procedure",
    "consolidate",
}


def _payload(result) -> object:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def _session(store, scenario):
    """Run ``scenario(session)`` against `localmem mcp STORE` in a child process."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "localmem", "mcp", str(store)],
        env={**os.environ},
    )

    async def main():
        async with stdio_client(params) as streams, ClientSession(*streams) as session:
            await session.initialize()
            return await scenario(session)

    return anyio.run(main)


@pytest.mark.slow
def test_an_mcp_client_adds_searches_and_keeps_a_procedure(tmp_path):
    store = tmp_path / "store"

    async def scenario(s: ClientSession):
        listed = await s.list_tools()
        names = {t.name for t in listed.tools}
        assert names >= TOOLS
        add = next(t for t in listed.tools if t.name == "add_memory")
        assert add.description and add.input_schema["required"] == ["content"]

        added = _payload(
            await s.call_tool(
                "add_memory",
                {
                    "content": "Caroline went to the LGBTQ support group on 7 May 2023",
                    "kind": "message",
                    "user_id": "caroline",
                    "event_time": "2023-05-07T12:00:00+00:00",
                    "metadata": {"source": "chat"},
                },
            )
        )
        other = _payload(
            await s.call_tool("add_memory", {"content": "Melanie paints sunrises by the lake"})
        )
        found = _payload(
            await s.call_tool(
                "search_memories", {"query": "when did Caroline go to the support group", "k": 2}
            )
        )
        assert found["hits"][0]["id"] == added["id"]
        # compact hits by default, no explanation (issue 33 item 16)
        assert set(found["hits"][0]) == {
            "id",
            "content",
            "score",
            "relevance",
            "kind",
            "time",
            "source",
        }
        assert 0 <= found["hits"][0]["relevance"] <= 1
        assert found["hits"][0]["time"] == "2023-05-07T12:00:00+00:00"
        assert "stages" not in found
        scoped = _payload(
            await s.call_tool(
                "search_memories",
                {
                    "query": "paints",
                    "user_id": "caroline",
                    "temporal": True,
                    "full": True,
                    "min_relevance": 0,  # the default floor would leave out her unrelated memory
                },
            )
        )
        assert scoped["hits"] and all(h["user_id"] == "caroline" for h in scoped["hits"])
        floored = _payload(
            await s.call_tool("search_memories", {"query": "paints", "user_id": "caroline"})
        )
        assert floored["hits"] == []  # below the agents' floor: clearly unrelated
        explained = _payload(
            await s.call_tool("search_memories", {"query": "paints", "explain": True})
        )
        assert explained["stages"][0]["stage"] == "candidates"

        changed = _payload(
            await s.call_tool(
                "update_memory", {"memory_id": other["id"], "content": "Melanie paints sunsets"}
            )
        )
        assert changed["content"] == "Melanie paints sunsets"
        history = _payload(await s.call_tool("memory_history", {"memory_id": other["id"]}))
        assert [e["event"] for e in history["events"]][-1] == "UPDATE"
        assert _payload(await s.call_tool("delete_memory", {"memory_id": other["id"]}))["deleted"]
        recent = _payload(await s.call_tool("list_memories", {"limit": 10}))
        assert [m["id"] for m in recent["memories"]] == [added["id"]]

        session = _payload(
            await s.call_tool("start_session", {"title": "Debug a 500 on a null user field"})
        )
        for step in ("Reproduce with a null user field", "Add a null check and return 400"):
            await s.call_tool("add_thought", {"session_id": session["id"], "content": step})
        done = _payload(
            await s.call_tool("complete_session", {"session_id": session["id"], "abstract": True})
        )
        assert done["status"] == "completed" and done["metadata"]["procedure_id"]
        match = _payload(
            await s.call_tool("find_procedure", {"task": "Debug a 500 when the email is null"})
        )
        assert match["found"] and "null check" in match["prompt"].lower()
        recorded = _payload(
            await s.call_tool(
                "record_procedure",
                {"procedure_id": done["metadata"]["procedure_id"], "success": True},
            )
        )
        assert recorded["procedure"]["use_count"] == 1

        resource = await s.read_resource(f"memory://{added['id']}")
        assert json.loads(resource.contents[0].text)["id"] == added["id"]
        assert resource.contents[0].mime_type == "application/json"
        return added["id"]

    added_id = _session(store, scenario)

    from localmem import Memory

    with Memory.open(store) as mem:  # everything the client was told is stored
        assert mem.get(added_id).metadata == {"source": "chat"}


@pytest.mark.slow
def test_bad_calls_get_typed_errors_and_the_server_keeps_serving(tmp_path):
    async def scenario(s: ClientSession):
        errors = {}
        for name, args in {
            "empty": ("add_memory", {"content": "   "}),
            "unknown id": ("get_memory", {"memory_id": "nosuchid"}),
            "bad kind": ("add_memory", {"content": "x", "kind": "poem"}),
            "wrong type": ("search_memories", {"query": "x", "k": "many"}),
            "bad mode": ("search_memories", {"query": "x", "mode": "psychic"}),
            "unknown tool": ("drop_everything", {}),
            "missing argument": ("add_thought", {"session_id": "s_nothing"}),
            "unknown session": ("add_thought", {"session_id": "s_nothing", "content": "hm"}),
        }.items():
            result = await s.call_tool(*args)
            assert result.is_error, name
            errors[name] = result.content[0].text
        # one typed sentence each (issue 33 item 16): the class, then what is wrong
        assert errors["empty"] == "InputError: content is empty"
        assert errors["unknown id"].startswith("NotFoundError: ")
        assert errors["bad kind"].startswith("InputError: add_memory: kind must be ")
        assert errors["wrong type"].startswith("InputError: search_memories: k must be ")
        assert errors["bad mode"].startswith("InputError: search_memories: mode must be ")
        assert errors["missing argument"] == "InputError: add_thought: content is required"
        assert errors["unknown session"].startswith("NotFoundError: ")
        assert errors["unknown tool"].startswith("NotFoundError: no tool 'drop_everything'")
        for text in errors.values():
            assert "\n" not in text and "pydantic" not in text and "http" not in text, text
        ok = _payload(await s.call_tool("add_memory", {"content": "still serving"}))
        return ok["id"]

    assert _session(tmp_path / "store", scenario)


def test_an_empty_store_path_is_refused_not_the_default_store(capsys, isolated_home):
    from localmem.cli import main

    assert main(["mcp", "--store", ""]) == 1
    assert main(["serve", ""]) == 1
    assert capsys.readouterr().err.count("the store path is empty") == 2
    assert not (isolated_home / "default").exists()


@pytest.mark.slow
def test_an_mcp_client_adds_with_inference_and_asks_about_the_past(tmp_path):
    async def scenario(s: ClientSession):
        first = _payload(
            await s.call_tool(
                "add_memory",
                {
                    "content": "Ann: I live in Paris.",
                    "user_id": "ann",
                    "event_time": "2022-03-01T00:00:00+00:00",
                    "infer": True,
                },
            )
        )
        moved = _payload(
            await s.call_tool(
                "add_memory",
                {
                    "content": "Ann: I moved to Berlin.",
                    "user_id": "ann",
                    "event_time": "2024-05-01T00:00:00+00:00",
                    "infer": True,
                },
            )
        )
        query = {"query": "where does Ann live", "user_id": "ann", "k": 5}
        now = _payload(await s.call_tool("search_memories", query))
        then = _payload(
            await s.call_tool("search_memories", {**query, "as_of": "2023-01-01T00:00:00+00:00"})
        )
        return first, moved, now, then

    first, moved, now, then = _session(tmp_path / "store", scenario)
    assert [d["event"] for d in first["decisions"]] == ["ADD"]
    assert [d["event"] for d in moved["decisions"]] == ["INVALIDATE"]
    assert moved["decisions"][0]["target"]["id"] == first["id"]
    # the superseded home is left out of now, but answers for 2023
    assert [h["id"] for h in now["hits"]] == [moved["id"]]
    assert [h["id"] for h in then["hits"]] == [first["id"]]


@pytest.mark.slow
def test_the_tools_tell_an_agent_what_to_send(tmp_path):
    """Issue 33 item 16: the server says its version; every parameter is described; allowed
    values are enums; time parameters state their format; a bad memory:// read keeps its
    class, in one line."""

    async def scenario(s: ClientSession):
        listed = await s.list_tools()
        bad = None
        try:
            await s.read_resource("memory://nosuchid")
        except Exception as exc:  # the SDK raises the server's JSON-RPC error
            bad = str(exc)
        return listed, bad

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "localmem", "mcp", str(tmp_path / "store")]
    )

    async def main():
        async with stdio_client(params) as streams, ClientSession(*streams) as session:
            init = await session.initialize()
            return init, *(await scenario(session))

    init, listed, bad = anyio.run(main)
    from localmem import __version__

    assert init.server_info.name == "localmem" and init.server_info.version == __version__
    check_tool_schemas(listed.tools)
    assert bad is not None and bad.startswith("NotFoundError: ") and "\n" not in bad


def check_tool_schemas(tools) -> None:
    """What every tool listing must show (stdio and streamable HTTP alike)."""
    assert {t.name for t in tools} >= TOOLS
    for tool in tools:
        assert tool.description, tool.name
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), f"{tool.name}({name}) has no description"
            if name in ("since", "until", "as_of", "event_time"):
                assert "ISO 8601" in schema["description"], f"{tool.name}({name})"
    by_name = {t.name: t for t in tools}
    kinds = by_name["search_memories"].input_schema["properties"]["kinds"]["anyOf"][0]
    assert kinds["items"]["enum"] == [
        "thought",
        "message",
        "chunk",
        "fact",
        "procedure",
        "summary",
        "note",
    ]
    kind = by_name["add_memory"].input_schema["properties"]["kind"]
    assert "note" in kind["enum"] and kind["default"] == "note"
    assert by_name["search_memories"].annotations.read_only_hint is True
    assert by_name["delete_memory"].annotations.read_only_hint is False


class RawStdio:
    """`localmem mcp` driven line by line, as a client that can send anything (the SDK's client
    cannot send a lone surrogate) and can die."""

    def __init__(self, store) -> None:
        import subprocess

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "localmem", "mcp", str(store)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
        hello["clientInfo"] = {"name": "raw", "version": "0"}
        self.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}))
        assert self.receive(120)["id"] == 1
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send(self, line: str) -> None:
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 60) -> dict | None:
        import select

        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return json.loads(self.proc.stdout.readline()) if ready else None

    def call(self, ident: int, tool: str, arguments: str) -> str:
        params = f'{{"name": "{tool}", "arguments": {arguments}}}'
        return f'{{"jsonrpc": "2.0", "id": {ident}, "method": "tools/call", "params": {params}}}'

    def end(self) -> tuple[int, str]:
        for pipe in (self.proc.stdin, self.proc.stdout):
            pipe.close()
        code = self.proc.wait(timeout=60)
        return code, self.proc.stderr.read().decode()


@pytest.mark.slow
def test_a_lone_surrogate_over_stdio_gets_an_answer(tmp_path):
    """Issue 30 item 9: the SDK's parser refused the line and nobody answered; the client
    waited forever. Now it is a JSON-RPC parse error for that request, as over HTTP."""
    raw = RawStdio(tmp_path / "store")
    raw.send(raw.call(2, "add_memory", '{"content": "a\\ud800"}'))
    answer = raw.receive(30)
    assert answer is not None, "no answer"
    assert answer["id"] == 2 and answer["error"]["code"] == -32700
    assert "surrogate" in answer["error"]["message"]
    raw.send(raw.call(3, "add_memory", '{"content": "still serving"}'))
    assert raw.receive(60)["result"]["isError"] is False
    assert raw.end()[0] == 0


@pytest.mark.slow
def test_a_client_that_dies_ends_the_server_quietly(tmp_path):
    """Issue 30 item 11: a client killed while a call was running made the server exit 1 with
    "unexpected ExceptionGroup" (its answer met a closed pipe). That is the end of a session."""
    raw = RawStdio(tmp_path / "store")
    raw.send(raw.call(2, "search_memories", '{"query": "anything"}'))
    raw.proc.stdout.close()  # nobody reads the answer any more
    time.sleep(3)
    raw.proc.stdin.close()
    code = raw.proc.wait(timeout=60)
    assert code == 0 and raw.proc.stderr.read().decode().strip() == ""
