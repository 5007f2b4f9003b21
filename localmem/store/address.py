"""Where a store lives: a folder (the embedded DuckDB + hnswlib store) or a ``postgresql://``
address (the same store on PostgreSQL with pgvector, ``localmem.store.postgres``).

The address is the only switch: ``Memory.open``, ``localmem --store`` and ``localmem serve
--store`` all pass it here. A PostgreSQL address may hold a password; :func:`redact` is what
logs, errors, ``doctor``, ``stats`` and reprs show instead.
"""

from __future__ import annotations

import re
from pathlib import Path

_SCHEMES = ("postgresql://", "postgres://")
# the password of user:password@ in the authority, and password=... as a query parameter
_USERINFO = re.compile(r"^(postgres(?:ql)?://[^:/@?#]*):[^@/?#]*@")
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


def is_postgres(address: str | Path | None) -> bool:
    """Whether ``address`` names a PostgreSQL store rather than a folder."""
    return isinstance(address, str) and address.strip().lower().startswith(_SCHEMES)


def redact(address: str | Path) -> str:
    """The address as it may be shown: a PostgreSQL password replaced by ``***``."""
    text = str(address)
    if not is_postgres(text):
        return text
    text = _USERINFO.sub(r"\1:***@", text.strip())
    return _QUERY_PASSWORD.sub(r"\1***", text)


def scrub(exc: BaseException, address: str) -> str:
    """The first line of a driver's error about ``address``, with its password and the
    address itself replaced by what :func:`redact` shows."""
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    from psycopg.conninfo import conninfo_to_dict

    try:
        password = conninfo_to_dict(address).get("password")
    except Exception:  # an address psycopg cannot parse has nothing to scrub but itself
        password = None
    if password:
        text = text.replace(str(password), "***")
    return text.replace(address, redact(address))
