"""``localmem models``: listing and verifying models, and bad files as one line."""

from __future__ import annotations

import json

import pytest

from localmem.cli import main


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def models_dir(isolated_home, tiny_gguf, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = isolated_home / "models"
    folder.mkdir(parents=True)
    (folder / "good.gguf").write_bytes(tiny_gguf.read_bytes())
    (folder / "partial.gguf").write_bytes(tiny_gguf.read_bytes()[:5000])
    (folder / "notes.txt").write_text("not a model")
    return folder


def test_list_shows_facts_and_the_chosen_model(capsys, models_dir):
    code, out, _ = run(capsys, "models")
    assert code == 0
    good = next(line for line in out.splitlines() if "good.gguf" in line)
    assert good.startswith("*") and "llama" in good and "context 32768" in good
    assert "chat template" in good and "KB" in good
    assert "partial.gguf  UNREADABLE: truncated GGUF file" in out
    assert "notes.txt" not in out
    assert "engine.kind=auto uses" in out


def test_list_as_json(capsys, models_dir):
    code, out, _ = run(capsys, "models", "list", "--json")
    data = json.loads(out)
    rows = {r["path"].rsplit("/", 1)[-1]: r for r in data["models"]}
    assert code == 0 and rows["good.gguf"]["selected"] and rows["good.gguf"]["chat_template"]
    assert rows["good.gguf"]["architecture"] == "llama"
    assert rows["partial.gguf"]["error"] and data["engine_model"].endswith("good.gguf")


def test_list_with_nothing_found(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "models")
    assert code == 0 and "no models found" in out and "model-free" in out


def test_verify_a_good_file_and_load_it(capsys, tiny_gguf):
    code, out, _ = run(capsys, "models", "verify", str(tiny_gguf), "--load")
    assert code == 0
    assert "valid GGUF v3" in out and "chat template: yes" in out
    assert "llama.cpp:     loaded" in out and "tokens/s" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "model file not found"),
        (b"PK\x03\x04" + b"\0" * 64, "not a GGUF file"),
        ("truncate", "truncated GGUF file"),
    ],
)
def test_verify_bad_files_print_one_line(capsys, tmp_path, tiny_gguf, content, message):
    path = tmp_path / "model.gguf"
    if content == "truncate":
        path.write_bytes(tiny_gguf.read_bytes()[:-100])
    elif content is not None:
        path.write_bytes(content)
    code, out, err = run(capsys, "models", "verify", str(path))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("localmem: error: ") and message in err


def test_verify_needs_a_path(capsys):
    code, _, err = run(capsys, "models", "verify")
    assert code == 1 and "needs the path" in err


def test_configured_bad_model_is_reported(capsys, tmp_path, monkeypatch):
    from localmem.config import Config

    monkeypatch.chdir(tmp_path)
    store = tmp_path / "store"
    store.mkdir()
    Config().with_updates(engine={"model_path": str(tmp_path / "gone.gguf")}).save(
        store / "config.json"
    )
    code, out, _ = run(capsys, "models", "--store", str(store))
    assert code == 0 and "engine problem: model file not found" in out


def test_list_reads_a_postgresql_stores_settings(capsys, isolated_home, tiny_gguf, tmp_path):
    """A PostgreSQL store's config lives in its local folder (as Memory.open reads it): the
    listing uses it, where it used to stop on ``str / str`` (a TypeError)."""
    from localmem.config import CONFIG_FILE, Config
    from localmem.store.postgres.store import local_folder

    address = "postgresql://someone@localhost:5432/memories"
    model = tmp_path / "elsewhere" / "chosen.gguf"
    model.parent.mkdir()
    model.write_bytes(tiny_gguf.read_bytes())
    settings = local_folder(address)
    settings.mkdir(parents=True)
    Config().with_updates(engine={"model_path": str(model)}).save(settings / CONFIG_FILE)
    code, out, err = run(capsys, "models", "list", "--json", "--store", address)
    assert code == 0, err
    data = json.loads(out)
    assert data["engine_model"] == str(model)
    assert [r["source"] for r in data["models"] if r["path"] == str(model)] == ["config"]
