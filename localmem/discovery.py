"""Finding the ``localmem serve`` that holds a store, without trusting a stale trace of one.

A running server writes ``serve.json`` (its pid and address) and ``serve.token`` into the store
folder. A client believes them only when the pid is alive, the address is plain HTTP on
loopback, and the server there proves that it holds the token before the client sends anything
else: the client sends a random challenge (``GET /v1/health?challenge=NONCE``) and the server
answers the HMAC-SHA256 of it keyed by the token (:func:`proof`). After a crash a pid and a port
can both belong to another program by now, which may even have asked the live server for its
answers earlier; it cannot answer a fresh challenge, so it never receives the token or a
request. (An instance name given without the token, the first design, could be replayed.)
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import ipaddress
import json
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

#: the discovery file a running server writes into its store folder
DISCOVERY_FILE = "serve.json"
#: the file holding the store's secret token (readable by its owner only)
TOKEN_FILE = "serve.token"
#: the header that carries the token
TOKEN_HEADER = "Authorization"
#: what the server's proof is an HMAC of, before the client's challenge (a domain of its own)
PROOF_CONTEXT = b"localmem serve proof\x00"
#: the longest challenge a server answers (hex digits)
MAX_CHALLENGE = 128


@dataclass(frozen=True)
class ServerInfo:
    """Where a store's server listens, and the token it wants."""

    pid: int
    url: str
    token: str = field(repr=False)
    store: Path = field(default=Path())


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (on this machine)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except (OSError, OverflowError, ValueError):
        return False
    return True


def find_server(store: str | Path) -> ServerInfo | None:
    """The live server of ``store``, or None (no discovery file, its process is gone, or
    what answers at its address cannot prove that it holds the store's token)."""
    folder = Path(store).expanduser()
    try:
        data = json.loads((folder / DISCOVERY_FILE).read_text(encoding="utf-8"))
        pid, url = int(data["pid"]), str(data["url"])
        token = (folder / TOKEN_FILE).read_text(encoding="utf-8").strip()
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    host = loopback_host(url)
    if not pid_alive(pid) or not token or host is None:
        return None
    conn = http.client.HTTPConnection(host, urlsplit(url).port or 80, timeout=3.0)
    try:
        if not proves_token(conn, token):
            return None
    finally:
        conn.close()
    return ServerInfo(pid, url, token, folder)


def proof(token: str, challenge: str) -> str:
    """The server's answer to a challenge: HMAC-SHA256 of it keyed by the token, in hex."""
    message = PROOF_CONTEXT + challenge.encode("ascii")
    return hmac.new(token.encode("utf-8"), message, hashlib.sha256).hexdigest()


def proves_token(conn: http.client.HTTPConnection, token: str) -> bool:
    """Whether the server on ``conn`` proves that it holds ``token`` (a fresh challenge, sent
    before any secret or request; the connection stays open for the requests that follow)."""
    challenge = secrets.token_hex(16)
    try:
        conn.request("GET", f"/v1/health?challenge={challenge}")
        response = conn.getresponse()
        data = json.loads(response.read(4096))
        answer = str(data["result"]["proof"]) if response.status == 200 else ""
    except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError):
        return False
    return hmac.compare_digest(answer.encode(), proof(token, challenge).encode())


def loopback_url(url: str) -> bool:
    """Whether a URL is plain HTTP to a loopback address (where the token may be sent)."""
    return loopback_host(url) is not None


def loopback_host(url: str) -> str | None:
    """The host of a plain-HTTP URL to a loopback address (where the token may be sent), or
    None for any other URL."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme != "http":
        return None
    if host == "localhost":
        return host
    try:
        return host if ipaddress.ip_address(host).is_loopback else None
    except ValueError:
        return None
