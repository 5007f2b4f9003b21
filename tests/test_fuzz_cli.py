"""Property-based tests over the command line (issue 16): whatever the arguments, ``localmem``
exits 0, or 1 with one ``localmem: error:`` line (argparse's own usage errors exit 2), never
with a traceback or an "unexpected" error, and the store stays usable.

Most runs are in-process (``localmem.cli.main``) against one store; a few are real
subprocesses with bytes that are not UTF-8 in argv.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localmem.cli import main

EXAMPLES = int(os.environ.get("LOCALMEM_FUZZ_EXAMPLES", "60"))

ANY_CHAR = st.characters(exclude_categories=())
texts = st.one_of(
    st.text(ANY_CHAR, max_size=30),
    st.sampled_from(["", " ", "-", "--", "a\x00b", "\ud800", "x\udcff", "Redis cache", "-5"]),
)
numbers = st.one_of(
    st.integers(min_value=-10, max_value=30).map(str),
    st.sampled_from(["0", "-1", "1e3", "99999999999999999999999", "nan", "x"]),
)
times = st.one_of(
    st.sampled_from(
        [
            "9999-12-31T23:59:59-12:00",
            "0001-01-01T00:00:00+12:00",
            "2023-05-07T12:00:00+00:00",
            "2023-05-07",
            "nan",
            "1e400",
        ]
    ),
    texts,
)
json_texts = st.one_of(
    st.sampled_from(
        [
            '{"a..b": 1}',
            '{"a.": 1}',
            '{"k": "\\ud800"}',
            '{"k": [1]}',
            '{"k": null}',
            "[1, 2]",
            "5",
            '{"a": ' * 3000 + "1" + "}" * 3000,
            "[" * 100_000,
            '{"n": ' + "9" * 5000 + "}",
            '{"team": "ops"}',
        ]
    ),
    texts,
)
kinds = st.sampled_from(["note", "fact", "thought", "banana"])
COMMANDS = ["add", "search", "show", "history", "delete", "restore", "purge", "list", "session"]
COMMANDS += ["ingest", "stats"]


def _utf8(text: str) -> bytes:
    """Text as bytes, lone surrogates kept (as a broken encoder would write them)."""
    return text.encode("utf-8", "surrogatepass")


def _options(data: st.DataObject, table: dict) -> list[str]:
    out: list[str] = []
    for flag, strategy in table.items():
        if data.draw(st.booleans(), label=f"pass {flag}"):
            out.append(flag)
            if strategy is not None:
                out.append(data.draw(strategy, label=flag))
    return out


def _pick(data: st.DataObject, known: list[str], label: str) -> str:
    """A known id (whole or a prefix) or drawn text; the draws never depend on the store's
    state, so hypothesis can replay and shrink a failing case."""
    how = data.draw(st.sampled_from(["known", "prefix", "text"]), label=f"{label} kind")
    if how == "text":
        return data.draw(texts, label=label)
    index = data.draw(st.integers(0, 10**6), label=f"{label} index")
    if not known:
        return "s_nosuchsession"
    chosen = known[index % len(known)]
    return chosen if how == "known" else chosen[:6]


def command(data: st.DataObject, known: list[str], sessions: list[str], tmp) -> list[str]:
    """One command line of hostile arguments."""
    name = data.draw(
        st.sampled_from(COMMANDS),
        label="command",
    )
    if name == "add":
        first = sessions[0] if sessions else "s_nosuchsession"
        argv = [
            "add",
            data.draw(texts, label="content"),
            *_options(
                data,
                {
                    "--kind": kinds,
                    "--user": texts,
                    "--session": st.sampled_from(["<first session>", "s_x", "x\ud800"]),
                    "--event-time": times,
                    "--context": texts,
                    "--metadata": json_texts,
                    "--dedupe": None,
                },
            ),
        ]
        return [first if arg == "<first session>" else arg for arg in argv]
    if name == "search":
        return [
            "search",
            data.draw(texts, label="query"),
            *_options(
                data,
                {
                    "-k": numbers,
                    "--mode": st.sampled_from(["hybrid", "dense", "lexical", "fuzzy"]),
                    "--user": texts,
                    "--since": times,
                    "--until": times,
                    "--where": json_texts,
                    "--budget": numbers,
                    "--expand": st.sampled_from(["off", "prf"]),
                    "--rerank": st.sampled_from(["off", "model-free"]),
                    "--temporal": None,
                    "--explain": None,
                },
            ),
        ]
    if name in ("show", "history", "delete", "restore", "purge"):
        extra = ["--yes"] if name == "purge" and data.draw(st.booleans()) else []
        return [name, _pick(data, known, "id"), *extra]
    if name == "list":
        return ["list", *_options(data, {"--limit": numbers, "--kind": kinds, "--user": texts})]
    if name == "session":
        action = data.draw(st.sampled_from(["start", "thought", "complete", "show", "list"]))
        sid = _pick(data, sessions, "session")
        if action == "start":
            return ["session", "start", data.draw(texts, label="title")]
        if action == "thought":
            return [
                "session",
                "thought",
                sid,
                data.draw(texts, label="thought"),
                *_options(data, {"--revises": numbers, "--branch-from": numbers}),
            ]
        if action == "complete":
            return ["session", "complete", sid, *_options(data, {"--notes": texts})]
        if action == "show":
            return ["session", "show", sid]
        return ["session", "list", *_options(data, {"--limit": numbers})]
    if name == "ingest":
        suffix = data.draw(st.sampled_from([".jsonl", ".md", ".txt", ".bin"]), label="suffix")
        body = data.draw(
            st.one_of(
                st.binary(max_size=200),
                st.lists(json_texts, max_size=4).map(lambda lines: _utf8("\n".join(lines))),
                st.text(ANY_CHAR, max_size=200).map(_utf8),
            ),
            label="body",
        )
        path = tmp / f"input{suffix}"
        path.write_bytes(body)
        return [
            "ingest",
            str(path),
            *_options(
                data,
                {
                    "--chunk-tokens": numbers,
                    "--overlap-tokens": numbers,
                    "--chunker": st.sampled_from(["paragraph", "fixed", "recursive", "nope"]),
                    "--allow-duplicates": None,
                },
            ),
        ]
    return ["stats", *_options(data, {"--json": None})]


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    """The exit code, stdout and stderr of one in-process command (argparse exits with 2)."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: usage and one error line
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def check_outcome(code: int, err: str, argv: list[str]) -> None:
    lines = err.rstrip("\n").split("\n")  # not splitlines: an argument may hold a "\r"
    assert "Traceback" not in err and "unexpected" not in err, (argv, err)
    errors = [line for line in lines if line.startswith("localmem: error:")]
    if code == 0:
        assert not errors, (argv, err)
    elif code == 1:
        assert len(errors) == 1, (argv, err)
    else:
        assert code == 2 and lines[-1].startswith("localmem") and "error:" in lines[-1], (
            argv,
            err,
        )


@pytest.fixture(scope="module")
def cli_store(tmp_path_factory, embedder):
    """One store for the module; every command shares the session's MiniLM (same model)."""
    folder = tmp_path_factory.mktemp("fuzz-cli")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("localmem.memory.make_embedder", lambda config=None: embedder)
        store = folder / "store"
        assert main(["add", "Redis is the cache in front of Postgres", "--store", str(store)]) == 0
        yield folder, store


def _known(store) -> tuple[list[str], list[str]]:
    from localmem import Memory

    with Memory.open(store) as mem:
        ids = [m.id for m in mem.list(limit=200, include_deleted=True)]
        sessions = [s.id for s in mem.sessions(limit=20)]
    return ids, sessions


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_cli_errors_are_one_line(cli_store, capsys, data):
    folder, store = cli_store
    known, sessions = _known(store)
    argv = [*command(data, known, sessions, folder), "--store", str(store)]
    code, _, err = run(capsys, argv)
    check_outcome(code, err, argv)
    code, out, err = run(capsys, ["stats", "--json", "--store", str(store)])
    assert code == 0, err
    stats = json.loads(out)
    assert stats["memories"] >= 0


def test_cli_store_usable_after_the_fuzzing(cli_store, capsys):
    _, store = cli_store
    code, out, err = run(capsys, ["add", "the final zebra memory", "--store", str(store)])
    assert code == 0, err
    mid = out.strip()
    code, out, err = run(
        capsys, ["search", "final zebra memory", "--json", "-k", "3", "--store", str(store)]
    )
    assert code == 0, err
    assert mid in [h["id"] for h in json.loads(out)["hits"]]


def _subprocess(args: list, tmp_path) -> subprocess.CompletedProcess:
    env = {**os.environ, "LOCALMEM_HOME": str(tmp_path / "home")}
    return subprocess.run(
        [sys.executable, "-m", "localmem", *args, "--store", str(tmp_path / "s")],
        capture_output=True,
        timeout=300,
        env=env,
    )


@pytest.mark.slow
def test_cli_subprocesses_with_bytes_that_are_not_utf8(tmp_path):
    """Real processes: argv bytes that are not UTF-8, times past the calendar, odd files."""
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    cases = [
        [b"add", b"bad \xff\xfe bytes"],
        [b"search", b"\xed\xa0\x80"],  # an encoded lone surrogate
        [b"add", b"x", b"--metadata", b'{"k\xff": 1}'],
        ["add", "late", "--event-time", "9999-12-31T23:59:59-12:00"],
        ["ingest", str(fifo)],
        ["list", "--limit", "-1"],
    ]
    assert _subprocess(["add", "a first memory"], tmp_path).returncode == 0
    for args in cases:
        proc = _subprocess(args, tmp_path)
        err = proc.stderr.decode("utf-8", "replace")
        assert proc.returncode in (1, 2), (args, err)
        assert "Traceback" not in err and "unexpected" not in err, (args, err)
        assert err.strip().splitlines()[-1].startswith("localmem"), (args, err)
        if proc.returncode == 1:
            assert len(err.strip().splitlines()) == 1, (args, err)
    proc = _subprocess(["search", "first memory", "--json"], tmp_path)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["hits"][0]["content"] == "a first memory"
    with contextlib.suppress(OSError):
        fifo.unlink()
