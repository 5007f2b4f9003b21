"""Bad input to the API is a typed InputError naming what was wrong, and the store stays usable
(issue 16, item 6: each case here escaped untyped before)."""

from __future__ import annotations

import json

import pytest

from localmem import validate
from localmem.cli import main
from localmem.errors import InputError, LocalMemError, NotFoundError


def _deep(levels: int) -> dict:
    root: dict = {}
    node = root
    for _ in range(levels):
        node["a"] = {}
        node = node["a"]
    return root


@pytest.fixture
def item(memory):
    return memory.add("The deploy runs on Fridays", user_id="u1", metadata={"team": "ops"})


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda m, i: m.add("a\ud800"), "content"),
        (lambda m, i: m.add("a", context="c\udfff"), "context"),
        (lambda m, i: m.add("a", user_id="u\ud800"), "user_id"),
        (lambda m, i: m.add("a", session_id="\ud800"), "session_id"),
        (lambda m, i: m.add("a", metadata={"k\ud800": 1}), "key of metadata"),
        (lambda m, i: m.add("a", metadata={"k": "v\ud800"}), "metadata['k']"),
        (lambda m, i: m.add("a", metadata={"k": ["x", {"y": "\ud800"}]}), "metadata['k'][1]"),
        (lambda m, i: m.add_many([{"content": "ok"}, {"content": "b\ud800"}]), "content"),
        (lambda m, i: m.update(i.id, content="new \ud800"), "content"),
        (lambda m, i: m.update(i.id, metadata={"x": "\ud800"}), "metadata['x']"),
        (lambda m, i: m.get("abcd\ud800"), "memory id"),
        (lambda m, i: m.history("abcd\ud800"), "memory id"),
        (lambda m, i: m.delete("abcd\ud800"), "memory id"),
        (lambda m, i: m.search("q\ud800"), "query"),
        (lambda m, i: m.search("q", user_id="\ud800"), "user_id"),
        (lambda m, i: m.search("q", metadata={"team": "\ud800"}), "metadata['team']"),
        (lambda m, i: m.start_session("t\ud800"), "session title"),
        (lambda m, i: m.get_session("s_\ud800"), "session id"),
    ],
)
def test_lone_surrogates_are_refused_naming_the_field(memory, item, call, field):
    with pytest.raises(InputError, match="lone surrogate") as info:
        call(memory, item)
    assert field in str(info.value)
    assert memory.count() == 1 and memory.get(item.id).content == "The deploy runs on Fridays"
    assert memory.add("after the bad input").content == "after the bad input"


@pytest.mark.parametrize("items", [None, 5, True, "text", b"bytes", {"content": "x"}])
def test_add_many_takes_a_list(memory, items):
    with pytest.raises(InputError, match="add_many takes a list"):
        memory.add_many(items)
    assert memory.count() == 0


def test_mixed_unknown_keys_in_an_item(memory):
    with pytest.raises(InputError, match="unknown field"):
        memory.add_many([{1: "x", "colour": 2}])


@pytest.mark.parametrize("metadata", [5, "x", [1], True])
def test_update_metadata_must_be_a_dict(memory, item, metadata):
    with pytest.raises(InputError, match="metadata must be a dict"):
        memory.update(item.id, metadata=metadata)
    assert memory.get(item.id).metadata == {"team": "ops"}


def test_deep_metadata_is_refused_before_recursing(memory, item):
    with pytest.raises(InputError, match="deeper than"):
        memory.add("deep", metadata=_deep(5000))
    with pytest.raises(InputError, match="deeper than"):
        memory.update(item.id, metadata=_deep(validate.MAX_METADATA_DEPTH + 1))
    with pytest.raises(InputError, match="deeper than"):
        memory.search("deep", metadata=_deep(5000))
    ok = memory.add("shallow enough", metadata=_deep(validate.MAX_METADATA_DEPTH - 1))
    assert memory.get(ok.id).metadata == _deep(validate.MAX_METADATA_DEPTH - 1)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"limit": -1},
        {"limit": 0},
        {"limit": "5"},
        {"limit": 10**30},
        {"limit": True},
        {"offset": -1},
        {"offset": 1.5},
        {"kind": "banana"},
        {"user_id": 5},
    ],
)
def test_bad_list_arguments(memory, item, kwargs):
    with pytest.raises(InputError):
        memory.list(**kwargs)
    assert [m.id for m in memory.list(limit=1)] == [item.id]


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.users(limit=-1),
        lambda m: m.sessions(limit=-1),
        lambda m: m.sessions(status="closed"),
        lambda m: m.search("x", k=-1),
        lambda m: m.search("x", k=10**30),
        lambda m: m.search("x", candidates=0),
        lambda m: m.search("x", budget_tokens=-5),
        lambda m: m.get_many("abc"),
    ],
)
def test_bad_limits_and_k(memory, item, call):
    with pytest.raises(InputError):
        call(memory)


def test_metadata_keys_with_dots_are_plain_keys(memory):
    """A key is a top-level key matched exactly, whatever characters it holds."""
    odd = {"a.": 1, "a..b": "x", "a.b": True, "q'\"k": 2, "s/l~": "y", "": 0}
    item = memory.add("dotted keys", metadata=odd)
    plain = memory.add("nested, not dotted", metadata={"a": {"b": True}})
    assert memory.get(item.id).metadata == odd
    for key, value in odd.items():
        hits = memory.search("keys", metadata={key: value}, k=5)
        assert [h.memory.id for h in hits] == [item.id], key
    # "a.b" is the key "a.b", not a path into {"a": {"b": ...}}
    assert plain.id not in [h.memory.id for h in memory.search("dotted", metadata={"a.b": True})]
    assert len(memory.search("keys", metadata={"a..b": "other"})) == 0


def test_metadata_filter_values_must_be_scalars(memory, item):
    for bad in ({"team": ["ops"]}, {"team": {"x": 1}}, {"team": None}):
        with pytest.raises(InputError, match="metadata filter"):
            memory.search("deploy", metadata=bad)


@pytest.mark.parametrize(
    "when",
    [
        "9999-12-31T23:59:59-12:00",
        "0001-01-01T00:00:00+12:00",
        "99999-01-01T00:00:00+00:00",
    ],
)
def test_event_times_out_of_range(memory, item, when):
    with pytest.raises(InputError, match="event_time"):
        memory.add("late", event_time=when)
    with pytest.raises(InputError, match="event_time"):
        memory.update(item.id, event_time=when)
    with pytest.raises(InputError, match="since"):
        memory.search("late", since=when)


def test_a_config_that_is_not_utf8(tmp_path, embedder, capsys):
    from localmem import Memory

    store = tmp_path / "s"
    Memory.open(store, embedder=embedder).close()
    (store / "config.json").write_bytes(b'{"search": {"k": "\xff\xfe"}}')
    with pytest.raises(LocalMemError, match="not UTF-8"):
        Memory.open(store, embedder=embedder)
    code = main(["search", "x", "--store", str(store)])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "not UTF-8" in err and "unexpected" not in err


@pytest.mark.parametrize("path", ["", "  ", "/tmp/a\udcffb", "/tmp/\ud800", 5, b"/tmp/x"])
def test_bad_store_paths(tmp_path, embedder, path):
    from localmem import Memory

    with pytest.raises(InputError, match="store path"):
        Memory.open(path, embedder=embedder)


def test_cli_empty_store_path_does_not_use_the_current_folder(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = _cli(capsys, "add", "x", "--store", "")
    assert code == 1 and "store path is empty" in err
    assert list(tmp_path.iterdir()) == []


def _cli(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", "x", "--event-time", "9999-12-31T23:59:59-12:00"], "out of range"),
        (["add", "x", "--metadata", '{"k": "\\ud800"}'], "lone surrogate"),
        (["add", "x", "--metadata", "[" * 100_000], "nests too deeply"),
        (["add", "x", "--metadata", '{"n": ' + "9" * 5000 + "}"], "not usable JSON"),
        (["add", "x\udcff"], "lone surrogate"),  # invalid UTF-8 in argv, surrogateescape'd
        (["search", "x", "--where", '{"a": [1]}'], "metadata filter"),
        (["search", "x", "--where", '{"a": ' * 100_000], "nests too deeply"),
        (["add", "x", "--session", "nosuchsession"], "no session with id"),
        (["show", "ab\ud800cd"], "lone surrogate"),
    ],
)
def test_cli_bad_input_is_one_line(capsys, tmp_path, args, message):
    store = str(tmp_path / "cli")
    assert _cli(capsys, "add", "first", "--store", store)[0] == 0
    code, _, err = _cli(capsys, *args, "--store", store)
    assert code == 1 and err.count("\n") == 1, err
    assert message in err and "unexpected" not in err
    code, out, _ = _cli(capsys, "search", "first", "--store", store, "--json")
    assert code == 0 and json.loads(out)["hits"][0]["content"] == "first"


def test_cli_dotted_where_key(capsys, tmp_path):
    store = str(tmp_path / "cli")
    _cli(capsys, "add", "odd keys", "--metadata", '{"a..b": 1, "a.": 2}', "--store", store)
    for where in ('{"a..b": 1}', '{"a.": 2}'):
        code, out, err = _cli(capsys, "search", "odd", "--where", where, "--store", store, "--json")
        assert code == 0, err
        assert [h["content"] for h in json.loads(out)["hits"]] == ["odd keys"]


def test_cli_add_to_an_existing_session_by_prefix(capsys, tmp_path):
    store = str(tmp_path / "cli")
    code, out, _ = _cli(capsys, "session", "start", "Debug a 500", "--store", store)
    sid = out.strip().split()[-1] if out.strip() else ""
    assert code == 0 and sid.startswith("s_"), out
    code, out, err = _cli(capsys, "add", "a note", "--session", sid[:6], "--store", store, "--json")
    assert code == 0, err
    assert json.loads(out)["session_id"] == sid


def test_not_found_is_typed(memory):
    with pytest.raises(NotFoundError):
        memory.get_session("s_nosuchsession")


def test_usage_errors_naming_a_lone_surrogate_are_printed(capsys):
    """argparse's own error line escapes it (writing it raised UnicodeEncodeError)."""
    with pytest.raises(SystemExit) as info:
        main(["list", "--limit", "5\ud800"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "\\ud800" in err.splitlines()[-1]


def test_reading_content_from_a_closed_stdin(capsys, monkeypatch, tmp_path):
    import io

    closed = io.TextIOWrapper(io.BytesIO())
    closed.close()
    monkeypatch.setattr("sys.stdin", closed)
    code, _, err = _cli(capsys, "add", "-", "--store", str(tmp_path / "s"))
    assert code == 1 and "cannot read standard input" in err and "unexpected" not in err
