"""`localmem ask` and `localmem conversation` on a real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localmem.cli import main

DOC = (
    "Brinicles are tubes of ice that grow down from sea ice into the ocean.\n\n"
    "Cold brine sinks from the sea ice and freezes the water around it, near Antarctica."
)


@pytest.fixture
def store(tmp_path: Path, embedder, monkeypatch) -> str:
    import localmem.memory

    # the CLI opens its own Memory: give it the session's loaded MiniLM (the same model)
    monkeypatch.setattr(localmem.memory, "make_embedder", lambda config=None: embedder)
    doc = tmp_path / "brinicle.md"
    doc.write_text(DOC)
    path = str(tmp_path / "store")
    assert main(["ingest", "--store", path, "--chunker", "recursive", "--chunk-tokens", "24",
                 str(doc)]) == 0  # fmt: skip
    return path


def test_ask_and_inspect_the_conversation(store: str, capsys) -> None:
    capsys.readouterr()
    assert main(["ask", "--store", store, "How does a brinicle form?", "--conversation", "c"]) == 0
    out = capsys.readouterr().out
    assert "brine" in out.lower() and "model-free" in out and "*[1]" in out
    assert (
        main(
            [
                "ask",
                "--store",
                store,
                "--json",
                "Do they form near Antarctica?",
                "--conversation",
                "c",
            ]
        )
        == 0
    )
    answer = json.loads(capsys.readouterr().out)
    assert answer["memory"]["stm_messages"] == 2 and answer["served_by"] == "model-free"
    assert main(["conversation", "show", "c", "--store", store]) == 0
    shown = capsys.readouterr().out
    assert "How does a brinicle form?" in shown and "of 2000 tokens" in shown
    assert main(["conversation", "list", "--store", store]) == 0
    assert "c  4 messages" in capsys.readouterr().out
    assert main(["conversation", "ltm", "--store", store, "--json"]) == 0
    ltm = json.loads(capsys.readouterr().out)
    assert len(ltm["facts"]) == 2 and "Antarctica" in {e["name"] for e in ltm["entities"]}
    assert main(["ask", "--store", store, "Why?", "--conversation", "c", "--show-prompt"]) == 0
    prompt = capsys.readouterr().out
    assert "Known facts" in prompt and "QUESTION: Why?" in prompt
    assert main(["conversation", "clear", "c", "--store", store]) == 0
    assert "forgot 4 messages" in capsys.readouterr().out
    assert main(["conversation", "ltm", "--forget", "--store", store]) == 0
    assert "forgot 2 facts" in capsys.readouterr().out


def test_ask_errors_are_one_line(tmp_path: Path, store: str, capsys) -> None:
    assert main(["ask", "--store", str(tmp_path / "nowhere"), "hello"]) == 1
    assert main(["ask", "--store", store, "   "]) == 1
    assert main(["ask", "--store", store, "hello", "-k", "0"]) == 1
    err = capsys.readouterr().err
    assert err.count("localmem: error:") == 3 and "Traceback" not in err
