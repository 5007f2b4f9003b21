"""Open the store an address names: a folder (the embedded store) or ``postgresql://...``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localmem.store.address import StoreAddress
from localmem.store.store import Store


def open_store(address: str | Path | StoreAddress, **options: Any) -> Store:
    """:meth:`Store.open` for a folder, :meth:`PgStore.open_address` for a PostgreSQL address
    (imported only then: psycopg is an optional dependency, the ``postgres`` extra)."""
    parsed = StoreAddress.parse(address)
    if parsed.folder is not None:  # not PostgreSQL (``is_postgres``, which mypy cannot read)
        return Store.open(parsed.folder, **options)
    try:
        from localmem.store.postgres.store import PgStore
    except ImportError as exc:
        from localmem.errors import StoreError

        raise StoreError(
            f"a PostgreSQL store needs the postgres extra (pip install 'localmem[postgres]'): {exc}"
        ) from None
    return PgStore.open_address(parsed, **options)
