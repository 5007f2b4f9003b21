"""`localmem consolidate`, `search --level` with provenance, `show` sources; one-line errors."""

from __future__ import annotations

import json

from consolidation_helpers import _add_conversation

from localmem.cli import main


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_consolidate_command_search_and_show(capsys, open_memory, tmp_path):
    path = tmp_path / "store"
    mem = open_memory(path)
    _add_conversation(mem)
    mem.close()
    s = ("--store", str(path))
    code, out, _ = run(capsys, "consolidate", "--user", "u1", "--dry-run", *s)
    assert code == 0 and "would write" in out and "(new)" in out
    code, out, _ = run(capsys, "consolidate", "--user", "u1", "--json", *s)
    report = json.loads(out)
    assert code == 0 and report["run_id"] and report["semantic"]
    fact = report["semantic"][0]
    code, out, _ = run(capsys, "consolidate", "--user", "u1", *s)
    assert code == 0 and "nothing new to consolidate" in out

    code, out, _ = run(capsys, "search", fact["content"], "--level", "semantic", "--json", *s)
    hits = json.loads(out)["hits"]
    assert hits and {h["level"] for h in hits} == {"semantic"}
    top = next(h for h in hits if h["id"] == fact["id"])
    assert sorted(top["derived_from"]) == sorted(fact["sources"])
    code, out, _ = run(capsys, "search", fact["content"], "--level", "semantic", *s)
    assert "[semantic]" in out and f"from {len(fact['sources'])}:" in out

    code, out, _ = run(capsys, "show", fact["id"], *s)
    assert code == 0 and f"derived from ({len(fact['sources'])})" in out
    code, out, _ = run(capsys, "show", fact["sources"][0], *s)
    assert "consolidated into (1)" in out and fact["id"][:8] in out


def test_consolidate_errors_are_one_line(capsys, open_memory, tmp_path):
    path = tmp_path / "store"
    mem = open_memory(path)
    _add_conversation(mem)
    mem.close()
    for args in (
        ("--user", "nobody"),
        ("--user", "u1", "--threshold", "5"),
        ("--user", "u1", "--implementation", "model"),  # no GGUF on this machine's test home
    ):
        code, out, err = run(capsys, "consolidate", *args, "--store", str(path))
        assert code == 1 and out == "", args
        assert err.startswith("localmem: error:") and len(err.strip().splitlines()) == 1, err
    code, _, err = run(capsys, "consolidate", "--store", str(tmp_path / "missing"))
    assert code == 1 and len(err.strip().splitlines()) == 1
