"""The attribute commands: attributes, mine, the show section, search --attributes."""

from __future__ import annotations

import json

from localmem.cli import main


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_mine_show_attributes_and_filtered_search(capsys, tmp_path):
    store = str(tmp_path / "s")
    ids = []
    for text in (
        "The API should rate limit each key and answer 429 with Retry-After.",
        "Clients retry 429 responses with exponential backoff and jitter.",
        "Added an index on orders.customer_id; the report query is fast now.",
    ):
        code, out, _ = run(capsys, "add", text, "--store", store, "--kind", "thought")
        ids.append(out.strip())
    code, out, _ = run(capsys, "attributes", "--store", store)
    assert code == 0 and "0 of 3 memories mined" in out
    code, out, _ = run(capsys, "show", ids[0], "--store", store)
    assert "attributes:" in out and "not mined" in out
    code, out, _ = run(capsys, "mine", "--store", store, "--deferred")
    assert code == 0 and "3 mining jobs queued" in out
    code, out, _ = run(capsys, "jobs", "run", "--store", store)
    assert code == 0 and "3 done" in out
    code, out, _ = run(capsys, "show", ids[0], "--store", store)
    assert "mined by model-free with labels 'everyday'" in out and "priority:" in out
    assert "intent:" in out and "topic:" in out  # a label, or "(no label clearly best)"
    code, out, _ = run(capsys, "attributes", ids[1][:8], "--store", store, "--json")
    data = json.loads(out)
    axes = {a["axis"] for a in data["attributes"]}
    assert data["mined"] and {"entities", "topic"} <= axes <= {"entities", "intent", "topic"}
    code, out, _ = run(
        capsys,
        "search",
        "rate limit errors",
        "--store",
        store,
        "--attributes",
        "filter",
        "--axes",
        "entities",
        "--min-matches",
        "1",
        "--strategy",
        "comprehensive",
        "--no-priority",
        "--explain",
        "--json",
    )
    data = json.loads(out)
    stage = next(s for s in data["stages"] if s["stage"] == "attributes")
    assert stage["notes"]["axes"] == "entities" and stage["notes"]["priority"] == "off"
    assert stage["notes"]["strategy"] == "comprehensive"
    code, out, _ = run(capsys, "attributes", ids[2], "--mine", "--store", store)
    assert code == 0 and "mined by model-free" in out
    code, out, _ = run(capsys, "mine", "--store", store)
    assert code == 0 and "0 mined" in out  # nothing left to mine


def test_mine_text_and_bad_input(capsys, tmp_path):
    store = str(tmp_path / "s")
    run(capsys, "add", "a first note", "--store", store)
    code, out, _ = run(
        capsys, "attributes", "--text", "Why is the checkout slow?", "--query", "--store", store
    )
    assert code == 0 and "intent:" in out and "topic:" in out
    code, _, err = run(capsys, "attributes", "--text", "  ", "--store", store)
    assert code == 1 and err.strip() == "localmem: error: --text is empty"
    code, _, err = run(capsys, "attributes", "nosuchid", "--store", store)
    assert code == 1 and "no memory with id" in err and "Traceback" not in err
    code, _, err = run(capsys, "attributes", "--text", "x", "--miner", "engine", "--store", store)
    assert code == 1 and "no engine is configured" in err
    code, _, err = run(
        capsys, "search", "x", "--attributes", "filter", "--axes", "mood", "--store", store
    )
    assert code == 1 and "axis must be one of" in err
