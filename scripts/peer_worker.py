"""One system of the peer benchmark, run in its own process (see scripts/bench_peers.py).

Usage (by bench_peers.py, not by hand):
    <python of the system's venv> scripts/peer_worker.py SYSTEM JOB.json RESULT.json

SYSTEM is localmem, localmem-torch, chroma, mem0-faiss, mem0-qdrant or raw-hnswlib. The job says
the phase (locomo, synthetic or reopen), the texts, the queries and where the store lives. The
worker needs only the standard library plus its own system, so it runs in the project's venv
(localmem) or in the peers' venv. Every network call is refused and counted: the result says how
many were attempted (telemetry, downloads); a system that needed the network fails here.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import sys
import time
from pathlib import Path

# -- the network guard (before any system is imported) -----------------------------------------
ATTEMPTS: list[str] = []


def _refuse(*args, **kwargs):
    ATTEMPTS.append(repr(args[:2])[:120])
    raise OSError("network blocked by peer_worker")


_real_connect = socket.socket.connect


def _connect(self, address):
    if self.family == getattr(socket, "AF_UNIX", None):  # local IPC is not the network
        return _real_connect(self, address)
    return _refuse(self, address)


socket.socket.connect = _connect
socket.socket.connect_ex = _connect
socket.create_connection = _refuse
socket.getaddrinfo = _refuse
socket.gethostbyname = _refuse

for key, value in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "ANONYMIZED_TELEMETRY": "False",  # chroma
    "MEM0_TELEMETRY": "False",  # mem0: on by default, it would phone home
    "POSTHOG_DISABLED": "1",
    "DO_NOT_TRACK": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
}.items():
    os.environ[key] = value


_MODELS: dict[str, object] = {}


def st_model(path: str):
    """One sentence-transformers model per process (chroma rebuilds its embedding function from
    its config on every collection it opens; loading MiniLM each time would be our cost, not
    chroma's)."""
    if path not in _MODELS:
        from sentence_transformers import SentenceTransformer

        _MODELS[path] = SentenceTransformer(path, device="cpu", local_files_only=True)
    return _MODELS[path]


def rss_mb() -> float:
    """Peak resident memory of this process, in MB.

    VmHWM, not ``ru_maxrss``: Linux carries ``ru_maxrss`` across exec, so a worker started by a
    big parent would report the parent's peak.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def disk_bytes(path: Path) -> int:
    """Bytes of every file under ``path``."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# -- the systems ------------------------------------------------------------------------------
class System:
    """What the benchmark does with a store: add (public path), fill, search, close."""

    batch = 256

    def __init__(self, folder: Path, model_path: str, *, fresh: bool) -> None:
        self.folder = folder

    def add(self, texts: list[str], keys: list[str], scope: str) -> None:
        raise NotImplementedError

    def fill(self, texts: list[str], keys: list[str], vectors, scope: str) -> None:
        """Add items whose vectors are already known (through the system's own lower layer)."""
        raise NotImplementedError

    def search(self, query: str, k: int, scope: str) -> list[str]:
        raise NotImplementedError

    def search_vector(self, query: str, vector, k: int, scope: str) -> list[str]:
        """The same search with the query's vector given: the store's own work."""
        raise NotImplementedError

    def close(self) -> None:
        pass


class LocalMem(System):
    # fp32 ONNX: the peers' vectors exactly (the same MiniLM through sentence-transformers), so
    # the side by side compares the stores; the onnx-int8 default embeds faster still
    backend: str | None = "onnx"

    def __init__(self, folder, model_path, *, fresh):
        super().__init__(folder, model_path, fresh=fresh)
        from localmem import Config, Memory
        from localmem.embed import make_embedder

        config = Config()
        if self.backend:
            config = config.with_updates(embedder={"backend": self.backend})
        self.embedder = make_embedder(config.embedder)
        self.mem = Memory.open(folder, config=config, embedder=self.embedder)

    def add(self, texts, keys, scope):
        self.mem.add_many(
            [{"content": t, "metadata": {"key": k}} for t, k in zip(texts, keys, strict=True)],
            batch_size=self.batch,
            kind="message",
            user_id=scope,
        )

    def fill(self, texts, keys, vectors, scope):
        import numpy as np

        from localmem.text import content_hash

        # the store path is real; only the model is skipped (vectors served by hash of the text)
        known = {content_hash(t): v for t, v in zip(texts, vectors, strict=True)}
        real = self.embedder.embed_batch

        def serve(batch):
            hits = [known.get(content_hash(t)) for t in batch]
            if all(h is not None for h in hits):
                return np.stack(hits)
            return real(batch)

        self.embedder.embed_batch = serve
        try:
            for i in range(0, len(texts), 2000):
                self.mem.add_many(
                    [
                        {"content": t, "metadata": {"key": k}}
                        for t, k in zip(texts[i : i + 2000], keys[i : i + 2000], strict=True)
                    ],
                    batch_size=2000,
                    kind="message",
                    user_id=scope,
                )
        finally:
            self.embedder.embed_batch = real

    def search(self, query, k, scope):
        from localmem.text import content_hash

        self.embedder._query_cache.pop(content_hash(query), None)  # cold: embed the query
        hits = self.mem.search(query, k=k).hits
        return [h.memory.metadata.get("key", "") for h in hits]

    def search_vector(self, query, vector, k, scope):
        from localmem.text import content_hash

        self.embedder._query_cache[content_hash(query)] = vector
        hits = self.mem.search(query, k=k).hits
        return [h.memory.metadata.get("key", "") for h in hits]

    def close(self):
        self.mem.close()


class LocalMemTorch(LocalMem):
    backend = "torch"


class Chroma(System):
    def __init__(self, folder, model_path, *, fresh):
        super().__init__(folder, model_path, fresh=fresh)
        import chromadb
        from chromadb.api.types import EmbeddingFunction
        from chromadb.config import Settings
        from chromadb.utils.embedding_functions import register_embedding_function

        @register_embedding_function
        class LocalMiniLM(EmbeddingFunction):
            """The local MiniLM folder through sentence-transformers (chroma's default downloads
            an ONNX model, so a custom, registered function is the offline way)."""

            def __init__(self, path: str) -> None:
                self.path = path
                self.model = st_model(path)

            def __call__(self, input):
                return self.model.encode(list(input), batch_size=64, convert_to_numpy=True)

            @staticmethod
            def name() -> str:
                return "local-minilm"

            def get_config(self):
                return {"path": self.path}

            @staticmethod
            def build_from_config(config):
                return LocalMiniLM(config["path"])

            def default_space(self):
                return "cosine"

        self.ef = LocalMiniLM(model_path)
        self.client = chromadb.PersistentClient(
            path=str(folder), settings=Settings(anonymized_telemetry=False)
        )
        self.collections: dict[str, object] = {}

    def _col(self, scope):
        if scope not in self.collections:
            self.collections[scope] = self.client.get_or_create_collection(
                name=scope, embedding_function=self.ef, configuration={"hnsw": {"space": "cosine"}}
            )
        return self.collections[scope]

    def add(self, texts, keys, scope):
        col = self._col(scope)
        for i in range(0, len(texts), self.batch):
            col.add(
                ids=keys[i : i + self.batch],
                documents=texts[i : i + self.batch],
            )

    def fill(self, texts, keys, vectors, scope):
        col = self._col(scope)
        step = min(5000, self.client.get_max_batch_size())
        for i in range(0, len(texts), step):
            col.add(
                ids=keys[i : i + step],
                documents=texts[i : i + step],
                embeddings=vectors[i : i + step],
            )

    def search(self, query, k, scope):
        return self._col(scope).query(query_texts=[query], n_results=k)["ids"][0]

    def search_vector(self, query, vector, k, scope):
        return self._col(scope).query(query_embeddings=[vector], n_results=k)["ids"][0]


class Mem0(System):
    store = "faiss"
    batch = 1  # Memory.add embeds one text per call: there is no batch path

    def __init__(self, folder, model_path, *, fresh):
        super().__init__(folder, model_path, fresh=fresh)
        os.environ["MEM0_DIR"] = str(folder / "mem0home")
        (folder / "mem0home").mkdir(parents=True, exist_ok=True)
        from mem0 import Memory

        vs = {
            "collection_name": "bench",
            "path": str(folder / self.store),
            "embedding_model_dims": 384,
        }
        config = {
            "vector_store": {"provider": self.store, "config": vs},
            "embedder": {"provider": "huggingface", "config": {"model": model_path}},
            # built even with infer=False; never called, so a dummy key
            "llm": {
                "provider": "openai",
                "config": {"api_key": "not-used", "model": "gpt-4o-mini"},
            },
            "history_db_path": str(folder / "history.db"),
        }
        self.m = Memory.from_config(config)

    def add(self, texts, keys, scope):
        for text, key in zip(texts, keys, strict=True):
            self.m.add(text, user_id=scope, infer=False, metadata={"key": key})

    def fill(self, texts, keys, vectors, scope):
        import hashlib
        import uuid
        from datetime import datetime, timezone

        # the payload mem0's own _create_memory writes (no history rows: they never serve search)
        for i in range(0, len(texts), 5000):
            ids, payloads = [], []
            for text, key in zip(texts[i : i + 5000], keys[i : i + 5000], strict=True):
                now = datetime.now(timezone.utc).isoformat()
                ids.append(str(uuid.uuid4()))
                payloads.append(
                    {
                        "user_id": scope,
                        "key": key,
                        "role": "user",
                        "data": text,
                        "hash": hashlib.md5(text.encode()).hexdigest(),
                        "created_at": now,
                        "updated_at": now,
                        "text_lemmatized": text,
                    }
                )
            self.m.vector_store.insert(
                vectors=[list(map(float, v)) for v in vectors[i : i + 5000]],
                ids=ids,
                payloads=payloads,
            )

    def _keys(self, result) -> list[str]:
        return [(r.get("metadata") or {}).get("key", "") for r in result["results"]]

    def search(self, query, k, scope):
        return self._keys(self.m.search(query, filters={"user_id": scope}, top_k=k, threshold=0.0))

    def search_vector(self, query, vector, k, scope):
        real = self.m.embedding_model.embed
        self.m.embedding_model.embed = lambda text, action=None: list(map(float, vector))
        try:
            return self.search(query, k, scope)
        finally:
            self.m.embedding_model.embed = real


class Mem0Qdrant(Mem0):
    store = "qdrant"


class RawHnswlib(System):
    """The floor: sentence-transformers batches into hnswlib, texts in a Python list."""

    def __init__(self, folder, model_path, *, fresh):
        super().__init__(folder, model_path, fresh=fresh)
        import hnswlib

        self.hnswlib = hnswlib
        self.model = st_model(model_path)
        self.indexes: dict[str, object] = {}
        self.keys: dict[str, list[str]] = {}
        if not fresh:
            for file in folder.glob("*.hnsw"):
                scope = file.stem
                index = hnswlib.Index(space="ip", dim=384)
                index.load_index(str(file))
                index.set_ef(64)
                self.indexes[scope] = index
                self.keys[scope] = json.loads((folder / f"{scope}.keys.json").read_text())

    def _index(self, scope, extra):
        if scope not in self.indexes:
            index = self.hnswlib.Index(space="ip", dim=384)
            index.init_index(max_elements=max(extra, 1024), ef_construction=200, M=16)
            index.set_ef(64)
            self.indexes[scope], self.keys[scope] = index, []
        index = self.indexes[scope]
        need = index.get_current_count() + extra
        if need > index.get_max_elements():
            index.resize_index(max(need, int(index.get_max_elements() * 1.5)))
        return index

    def _put(self, vectors, keys, scope):
        import numpy as np

        index = self._index(scope, len(keys))
        start = len(self.keys[scope])
        index.add_items(np.asarray(vectors, dtype=np.float32), np.arange(start, start + len(keys)))
        self.keys[scope].extend(keys)

    def add(self, texts, keys, scope):
        for i in range(0, len(texts), self.batch):
            vecs = self.model.encode(
                texts[i : i + self.batch], batch_size=64, normalize_embeddings=True
            )
            self._put(vecs, keys[i : i + self.batch], scope)

    def fill(self, texts, keys, vectors, scope):
        self._put(vectors, keys, scope)

    def search_vector(self, query, vector, k, scope):
        import numpy as np

        labels, _ = self.indexes[scope].knn_query(np.asarray(vector, dtype=np.float32), k=k)
        keys = self.keys[scope]
        return [keys[int(i)] for i in labels[0]]

    def search(self, query, k, scope):
        vec = self.model.encode([query], normalize_embeddings=True)[0]
        return self.search_vector(query, vec, k, scope)

    def close(self):
        self.folder.mkdir(parents=True, exist_ok=True)
        for scope, index in self.indexes.items():
            index.save_index(str(self.folder / f"{scope}.hnsw"))
            (self.folder / f"{scope}.keys.json").write_text(json.dumps(self.keys[scope]))


SYSTEMS = {
    "localmem": LocalMem,
    "localmem-torch": LocalMemTorch,
    "chroma": Chroma,
    "mem0-faiss": Mem0,
    "mem0-qdrant": Mem0Qdrant,
    "raw-hnswlib": RawHnswlib,
}


# -- the phases -------------------------------------------------------------------------------
def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, (time.perf_counter() - t0) * 1000


def locomo(cls, job: dict) -> dict:
    """Ingest each conversation into its own store, answer its questions: retrieved keys."""
    started = time.perf_counter()
    ingest_s, items, retrieved, lat = 0.0, 0, {}, []
    for conv in job["conversations"]:
        folder = Path(job["workdir"]) / conv["id"]
        shutil.rmtree(folder, ignore_errors=True)
        system = cls(folder, job["model_path"], fresh=True)
        texts = [t["content"] for t in conv["turns"]]
        keys = [t["dia_id"] for t in conv["turns"]]
        t0 = time.perf_counter()
        system.add(texts, keys, conv["id"])
        ingest_s += time.perf_counter() - t0
        items += len(texts)
        answers = []
        for q in conv["questions"]:
            keys_found, ms = timed(system.search, q, job["k"], conv["id"])
            answers.append(keys_found)
            lat.append(ms)
        retrieved[conv["id"]] = answers
        system.close()
    return {
        "items": items,
        "ingest_s": ingest_s,
        "retrieved": retrieved,
        "latency_ms": lat,
        "total_s": time.perf_counter() - started,
    }


def synthetic(cls, job: dict) -> dict:
    """Ingest N texts (the first ``ingest_n`` through the public path), then time searches."""
    import numpy as np

    texts = Path(job["texts_file"]).read_text(encoding="utf-8").split("\n")[: job["n"]]
    keys = [f"s{i}" for i in range(len(texts))]
    folder = Path(job["workdir"])
    shutil.rmtree(folder, ignore_errors=True)
    t0 = time.perf_counter()
    system = cls(folder, job["model_path"], fresh=True)
    init_s = time.perf_counter() - t0
    n_pub = min(job["ingest_n"], len(texts))
    t0 = time.perf_counter()
    system.add(texts[:n_pub], keys[:n_pub], "bench")
    ingest_s = time.perf_counter() - t0
    fill_s = 0.0
    if n_pub < len(texts):
        vectors = np.load(job["vectors_file"], mmap_mode="r")
        t0 = time.perf_counter()
        step = 20_000
        for i in range(n_pub, len(texts), step):
            j = min(i + step, len(texts))
            system.fill(texts[i:j], keys[i:j], np.asarray(vectors[i:j]), "bench")
        fill_s = time.perf_counter() - t0
    queries = job["queries"]
    qvecs = np.load(job["query_vectors_file"])
    system.search(queries[0], job["k"], "bench")  # warm up (lazy indexes, model)
    full, own = [], []
    for q, v in zip(queries, qvecs, strict=True):
        full.append(timed(system.search, q, job["k"], "bench")[1])
        own.append(timed(system.search_vector, q, v, job["k"], "bench")[1])
    t0 = time.perf_counter()
    system.close()
    close_s = time.perf_counter() - t0
    return {
        "n": len(texts),
        "ingest_n": n_pub,
        "init_s": init_s,
        "ingest_s": ingest_s,
        "fill_s": fill_s,
        "close_s": close_s,
        "latency_ms": full,
        "own_latency_ms": own,
        "disk_bytes": disk_bytes(folder),
    }


def reopen(cls, job: dict) -> dict:
    """Open an existing store in a fresh process and answer one query: the cold start."""
    t0 = time.perf_counter()
    system = cls(Path(job["workdir"]), job["model_path"], fresh=False)
    open_s = time.perf_counter() - t0
    _, first_ms = timed(system.search, job["queries"][0], job["k"], "bench")
    _, second_ms = timed(system.search, job["queries"][1], job["k"], "bench")
    system.close()
    return {"open_s": open_s, "first_search_ms": first_ms, "second_search_ms": second_ms}


PHASES = {"locomo": locomo, "synthetic": synthetic, "reopen": reopen}


def main() -> int:
    name, job_file, out_file = sys.argv[1:4]
    job = json.loads(Path(job_file).read_text(encoding="utf-8"))
    started = time.perf_counter()
    import_s = 0.0
    try:
        t0 = time.perf_counter()
        cls = SYSTEMS[name]
        result = PHASES[job["phase"]](cls, job)
        import_s = time.perf_counter() - t0
        status = "ok"
    except Exception as exc:  # reported, not raised: the orchestrator shows it
        import traceback

        result = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        status = "error"
    result.update(
        system=name,
        phase=job["phase"],
        status=status,
        wall_s=time.perf_counter() - started,
        phase_s=import_s,
        peak_rss_mb=rss_mb(),
        network_attempts=len(ATTEMPTS),
        network_samples=ATTEMPTS[:5],
        loadavg=os.getloadavg(),
    )
    Path(out_file).write_text(json.dumps(result), encoding="utf-8")
    return 0 if status == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
