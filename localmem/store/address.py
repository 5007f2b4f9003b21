"""Where a store lives: a folder (the embedded DuckDB + hnswlib store) or a ``postgresql://``
address (the same store on PostgreSQL with pgvector, ``localmem.store.postgres``).

:class:`StoreAddress` is the one parser of store addresses: ``Memory.open``, ``localmem
--store``, ``localmem serve`` and ``mcp``, ``doctor`` and the PostgreSQL backend all read an
address through it, so "is this PostgreSQL?", "what may be shown?" and "what does libpq get?"
are each decided once. A PostgreSQL address may hold a password; what logs, errors, ``doctor``,
``stats`` and reprs show is :attr:`StoreAddress.shown`, with every secret as ``***``.

Why a parser of our own rather than libpq's: the address must be classified and redacted before
libpq sees it, in every spelling a person types. libpq reads only the lower-case schemes, so a
``Postgres://`` address came back in its "missing "="" message whole; it ends the user part at
the first ``/``, so an unencoded ``/`` in a password became a host and a "port" it quoted back.
Here the scheme is any case, the password runs to the last ``@`` before the host, and libpq is
handed the address rebuilt with its user and password percent-encoded (:attr:`conninfo`).

The password need not be in the address at all: libpq reads ``PGPASSWORD``, a passfile
(``~/.pgpass`` or ``PGPASSFILE``, or ``?passfile=``) and a connection service (``?service=``,
``PGSERVICE``), so ``postgresql://me@db/memory`` or ``postgresql://?service=memory`` keep it out
of argv, where ``ps`` shows it to every user of the machine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote

from localmem.errors import InputError

#: the schemes of a PostgreSQL address, compared without case
SCHEMES = ("postgresql", "postgres")
_SCHEME = re.compile(r"^(postgres(?:ql)?)://", re.IGNORECASE)
#: query parameters whose value is a secret (libpq's names; compared without case)
_SECRET_PARAMS = re.compile(r"([?&](?:ssl)?password=)([^&]*)", re.IGNORECASE)
MASK = "***"
#: what follows the user part: host[:port] (or several, or [v6]), an optional /dbname, a query
_AFTER = re.compile(r"^[^@/?]*(?:/[^?@]*)?(?:\?.*)?$", re.DOTALL)
_QUERY_KEY = re.compile(r"\?[A-Za-z_]+=")


@dataclass(frozen=True)
class StoreAddress:
    """A parsed store address: a folder, or a PostgreSQL address with its secrets set apart.

    Build one with :meth:`parse`. ``str()`` and ``repr()`` never show a secret.

    Attributes:
        folder: the store folder (None for a PostgreSQL store).
        shown: the address as it may be shown: a folder's path, or the PostgreSQL address with
            its password (in the user part, ``password=`` or ``sslpassword=``) as ``***``.
    """

    folder: Path | None
    shown: str
    _conninfo: str | None = field(default=None, repr=False, compare=False)
    #: (secret, what replaces it), longest first: the whole address before its password
    _secrets: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)

    @classmethod
    def parse(cls, value: str | Path | StoreAddress) -> StoreAddress:
        """Read a store address: ``postgresql://`` or ``postgres://`` in any case is a
        PostgreSQL store, anything else a folder (``~`` expanded).

        Raises:
            InputError: the address is empty, or not a str or Path.
        """
        if isinstance(value, StoreAddress):
            return value
        if not isinstance(value, (str, Path)):
            raise InputError(f"a store path is a str or Path, not {type(value).__name__}")
        text = str(value).strip()
        if not text:
            raise InputError("the store path is empty")
        if isinstance(value, str) and _SCHEME.match(text):
            return _parse_postgres(text)
        folder = Path(value).expanduser()
        return cls(folder, str(folder))

    @property
    def is_postgres(self) -> bool:
        """Whether this is a PostgreSQL store rather than a folder."""
        return self.folder is None

    @property
    def conninfo(self) -> str:
        """What libpq is given: the address with a lower-case scheme and its user and password
        percent-encoded (a secret: never show it; :attr:`shown` is what may be shown).

        Raises:
            ValueError: this is a folder, not a PostgreSQL address.
        """
        if self._conninfo is None:
            raise ValueError(f"{self.shown} is a folder, not a PostgreSQL address")
        return self._conninfo

    def redact(self, text: str) -> str:
        """``text`` (a driver's message, a log line) with every secret of this address
        replaced: the address as given or as libpq got it becomes :attr:`shown`, the password
        in any of its spellings ``***``."""
        for secret, replacement in self._secrets:
            text = text.replace(secret, replacement)
        return text

    def describe(self, exc: BaseException) -> str:
        """The first line of a driver's error about this address, its secrets redacted."""
        return self.redact((str(exc).strip().splitlines() or [type(exc).__name__])[0])

    def __str__(self) -> str:
        return self.shown


def _split_userinfo(rest: str) -> tuple[str | None, str, bool]:
    """``user:password``, the text after its ``@`` (host, path, query), and whether that split is
    sure, from an address without its scheme.

    The user part ends at the last ``@`` after which the address reads as ``host[:port]
    [/dbname][?query]`` and before which no ``?key=`` stands (that is a query holding an ``@``),
    so a password may hold ``/``, ``#``, ``?``, ``:`` and ``@`` unencoded. A database name holding
    ``@``, or a password holding ``?key=``, must be percent-encoded. When no ``@`` qualifies but
    there is one, the split at the last ``@`` is returned as unsure: shown with its password
    masked, handed to libpq as given."""
    at = len(rest)
    while (at := rest.rfind("@", 0, at)) >= 0:
        userinfo, after = rest[:at], rest[at + 1 :]
        user = userinfo.split(":", 1)[0]
        if _AFTER.match(after) and not _QUERY_KEY.search(userinfo) and not set(user) & set("/?"):
            return userinfo, after, True
    at = rest.rfind("@")
    if at < 0:
        return None, rest, True
    return rest[:at], rest[at + 1 :], False


def _parse_postgres(text: str) -> StoreAddress:
    scheme = _SCHEME.match(text)
    assert scheme is not None
    head = scheme.group(1).lower() + "://"  # libpq reads the lower-case schemes only
    rest = text[scheme.end() :]
    userinfo, after, sure = _split_userinfo(rest)
    conninfo, shown, passwords = head + rest, head + rest, []
    if userinfo is not None:
        user, colon, password = userinfo.partition(":")
        if colon:
            raw = unquote(password)
            passwords += [password, raw, quote(raw, safe="")]
        shown = f"{head}{user}{':' + MASK if colon else ''}@{after}"
        if sure:  # user and password percent-encoded, whatever they hold
            secret = f":{quote(unquote(password), safe='')}" if colon else ""
            conninfo = f"{head}{quote(unquote(user), safe='')}{secret}@{after}"
    for match in _SECRET_PARAMS.finditer(shown):
        passwords += [match.group(2), unquote(match.group(2))]
    shown = _SECRET_PARAMS.sub(lambda m: m.group(1) + MASK, shown)
    secrets = {text: shown, conninfo: shown}
    secrets.update({p: MASK for p in passwords if p and p != MASK and p not in secrets})
    ordered = sorted(secrets.items(), key=lambda pair: len(pair[0]), reverse=True)
    return StoreAddress(None, shown, conninfo, tuple(ordered))


def store_target(text: str) -> Path | str:
    """What to open for an address a user typed: its folder (``~`` expanded), or a
    PostgreSQL address as given, stripped (its database is shared by several processes, so it
    is opened by the address itself).

    Raises:
        InputError: the address is empty.
    """
    folder = StoreAddress.parse(text).folder
    return text.strip() if folder is None else folder


def is_postgres(address: str | Path | StoreAddress | None) -> bool:
    """Whether ``address`` names a PostgreSQL store rather than a folder (shorthand for
    :meth:`StoreAddress.parse`; an empty or missing address is no PostgreSQL store)."""
    if isinstance(address, StoreAddress):
        return address.is_postgres
    return isinstance(address, str) and bool(_SCHEME.match(address.strip()))


def redact(address: str | Path | StoreAddress) -> str:
    """The address as it may be shown (:attr:`StoreAddress.shown`)."""
    if not isinstance(address, StoreAddress) and not str(address).strip():
        return str(address)
    return StoreAddress.parse(address).shown


def scrub(exc: BaseException, address: str | StoreAddress) -> str:
    """The first line of a driver's error about ``address``, its secrets redacted
    (:meth:`StoreAddress.describe`)."""
    return StoreAddress.parse(address).describe(exc)
