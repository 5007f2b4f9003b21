"""The GGUF header reader and model discovery, on real files built with the gguf package."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from localmem.config import EngineConfig
from localmem.errors import ModelError
from localmem.llm.discovery import find_models, search_dirs, select_gguf
from localmem.llm.gguf_header import FILE_TYPES, GGML_BLOCKS, read_gguf


def test_header_facts_match_the_gguf_package(tiny_gguf):
    gguf = pytest.importorskip("gguf")
    info = read_gguf(tiny_gguf)
    reader = gguf.GGUFReader(str(tiny_gguf))
    assert info.tensor_count == len(reader.tensors)
    assert info.parameter_count == sum(int(t.n_elements) for t in reader.tensors)
    assert info.architecture == "llama"
    assert info.context_length == 32768
    assert info.chat_template and "<|im_start|>" in info.chat_template
    assert info.vocab_size == 5 + 256
    assert info.quantization == "F16"
    assert info.unverified_tensors == 0


def test_type_tables_agree_with_the_gguf_package():
    gguf = pytest.importorskip("gguf")
    for kind, sizes in GGML_BLOCKS.items():
        assert tuple(gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType(kind)]) == sizes
    for number, name in FILE_TYPES.items():
        assert gguf.LlamaFileType(number).name.removeprefix("MOSTLY_").removeprefix("ALL_") == name


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_truncated_file_is_caught_before_llama_cpp(tiny_gguf, tmp_path):
    data = tiny_gguf.read_bytes()
    for cut in (len(data) - 1, len(data) // 2, 200):
        with pytest.raises(ModelError, match="truncated GGUF"):
            read_gguf(_write(tmp_path / f"cut{cut}.gguf", data[:cut]))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "too short"),
        (b"PK\x03\x04" + b"\0" * 100, "not a GGUF file"),
        (b"GGUF" + struct.pack("<I", 1) + b"\0" * 40, "version 1"),
        (b"GGUF" + struct.pack(">I", 3) + b"\0" * 40, "unsupported GGUF version"),
        (b"GGUF" + struct.pack("<IQQ", 3, 10**9, 1) + b"\0" * 40, "corrupt"),
    ],
)
def test_bad_files_give_one_clear_message(tmp_path, data, message):
    with pytest.raises(ModelError, match=message) as info:
        read_gguf(_write(tmp_path / "bad.gguf", data))
    assert "\n" not in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        read_gguf(tmp_path / "nope.gguf")
    with pytest.raises(ModelError, match="not a file"):
        read_gguf(tmp_path)


def test_discovery_order_and_bad_files_listed_not_raised(
    tiny_gguf, tmp_path, monkeypatch, isolated_home
):
    monkeypatch.chdir(tmp_path)
    home_models = isolated_home / "models"
    home_models.mkdir(parents=True)
    other = tmp_path / "mine"
    other.mkdir()
    (other / "a-good.gguf").write_bytes(tiny_gguf.read_bytes())
    (home_models / "b-broken.gguf").write_bytes(b"junk")
    st = home_models / "minilm"
    st.mkdir()
    (st / "modules.json").write_text("[]")
    config = EngineConfig(models_dir=str(other))

    dirs = [p for p, _ in search_dirs(config)]
    assert dirs[0] == other and dirs[1] == home_models and dirs[2] == tmp_path / "models"
    found = {m.path.name: m for m in find_models(config)}
    assert found["a-good.gguf"].usable and found["a-good.gguf"].source == "models_dir"
    assert "not a GGUF" in found["b-broken.gguf"].error
    assert found["minilm"].kind == "sentence-transformers"
    assert select_gguf(config).path == other / "a-good.gguf"


def test_a_gguf_without_template_is_not_chosen_unless_configured(
    tmp_path, monkeypatch, build_tiny_gguf
):
    monkeypatch.chdir(tmp_path)
    build_tiny_gguf(tmp_path / "models" / "plain.gguf", chat_template=False)
    assert select_gguf(EngineConfig()) is None
    assert select_gguf(EngineConfig(chat_template="chatml")).path.name == "plain.gguf"


def test_explicit_model_path_must_be_valid(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        select_gguf(EngineConfig(model_path=str(tmp_path / "missing.gguf")))
    bad = _write(tmp_path / "bad.gguf", b"GGUF" + b"\0" * 30)
    with pytest.raises(ModelError):
        select_gguf(EngineConfig(model_path=str(bad)))


def test_nothing_found_means_none(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert select_gguf(EngineConfig()) is None
