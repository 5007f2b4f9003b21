"""Store maintenance: moving a store to another embedding model, health checks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from localmem.config import CONFIG_FILE, Config, EmbedderConfig
from localmem.embed import make_embedder
from localmem.errors import StoreError
from localmem.store import repair as repairs
from localmem.store.address import StoreAddress
from localmem.store.opening import open_store
from localmem.store.store import Store
from localmem.store.vectors import INDEX_FILE, SIDECAR_FILE
from localmem.text import content_hash
from localmem.types import embedding_text


def reembed(
    path: str | Path,
    embedder_config: EmbedderConfig,
    *,
    batch_size: int = 256,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Re-embed every memory of a store with another model and rebuild its vector index.

    New vectors are computed into a scratch table first and swapped in with one transaction:
    a crash before the swap leaves the store as it was, on its old model.
    """
    folder = Path(path).expanduser()
    config = Config.load(folder / CONFIG_FILE)
    embedder = make_embedder(embedder_config)
    store = Store.open(folder, config=config.store, model=None, dim=None, create=False)
    try:
        old = store.model
        db = store.db
        rows = db.fetchall(
            "SELECT id, content, context FROM memories WHERE embedding IS NOT NULL ORDER BY label"
        )
        db.execute(
            "CREATE OR REPLACE TEMP TABLE reembed_new (id VARCHAR, embedding FLOAT[], h VARCHAR)"
        )
        for start in range(0, len(rows), batch_size):
            chunk = rows[start : start + batch_size]
            texts = [embedding_text(c, x) for _, c, x in chunk]
            vectors = embedder.embed_batch(texts)
            t = pa.table(
                {
                    "id": [r[0] for r in chunk],
                    "embedding": pa.FixedSizeListArray.from_arrays(
                        pa.array(np.ascontiguousarray(vectors).ravel()), embedder.dim
                    ),
                    "h": [content_hash(t) for t in texts],
                }
            )
            db.insert_arrow("reembed_new", t, "id, embedding::FLOAT[], h")
            if progress:
                progress(min(start + batch_size, len(rows)), len(rows))
        with db.transaction():
            db.execute(
                "UPDATE memories SET embedding = n.embedding, embed_hash = n.h, "
                "vec_seq = nextval('vec_seq') FROM reembed_new n WHERE memories.id = n.id"
            )
            db.set_meta("embed_model", embedder.name)
            db.set_meta("embed_dim", str(embedder.dim))
        db.execute("DROP TABLE reembed_new")
    finally:
        store.close(save=False)
    for name in (INDEX_FILE, SIDECAR_FILE):
        (folder / name).unlink(missing_ok=True)
    config.with_updates(embedder=embedder_config.model_dump()).save(folder / CONFIG_FILE)
    # opening with the new model rebuilds the index from the new vectors
    reopened = Store.open(folder, config=config.store, model=embedder.name, dim=embedder.dim)
    reopened.close()
    return {"from": old, "to": embedder.name, "dim": embedder.dim, "memories": len(rows)}


def check_store(path: str | Path | StoreAddress, *, repair: bool = False) -> dict[str, Any]:
    """Integrity facts of a store without loading its embedding model.

    Opening repairs what can be rebuilt (the vector index, a creation cut short, a BM25 index
    whose count is off, a successor link a crash lost); ``repair`` also mends what only a full
    comparison finds (:func:`localmem.store.repair.repair`: ``facts["repaired"]``). Then every
    column of every table is read, so DuckDB checks the checksum of every block it stores
    (``facts["damage"]`` lists what it refused: the truth itself is damaged).
    """
    address = StoreAddress.parse(path)
    folder = address.folder
    if folder is None:  # a PostgreSQL address (``address.is_postgres``)
        store = open_store(address, model=None, dim=None, create=False)
    else:
        config = Config.load(folder / CONFIG_FILE)
        store = Store.open(folder, config=config.store, model=None, dim=None, create=False)
    try:
        repaired = repairs.repair(store) if repair and not store.read_only else []
        facts = store.check(deep=True)
        facts["repaired"] = repaired
        facts["damage"] = store.db.read_all()
        facts["read_only"] = store.read_only
        facts["notices"] = list(store.notices)
        return facts
    finally:
        store.close()


def require_store(path: Path) -> None:
    """Raise a clear error when ``path`` holds no store."""
    if not (path / "localmem.duckdb").exists():
        raise StoreError(f"no store at {path}")
