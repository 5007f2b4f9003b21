"""Open the store an address names: a folder (the embedded store) or ``postgresql://...``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localmem.store.address import is_postgres
from localmem.store.store import Store


def open_store(address: str | Path, **options: Any) -> Store:
    """:meth:`Store.open` for a folder, :meth:`PgStore.open_address` for a PostgreSQL address
    (imported only then: psycopg is an optional dependency, the ``postgres`` extra)."""
    if not is_postgres(address):
        return Store.open(address, **options)
    try:
        from localmem.store.postgres.store import PgStore
    except ImportError as exc:
        from localmem.errors import StoreError

        raise StoreError(
            f"a PostgreSQL store needs the postgres extra (pip install 'localmem[postgres]'): {exc}"
        ) from None
    return PgStore.open_address(str(address), **options)
