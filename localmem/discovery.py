"""Finding the ``localmem serve`` that holds a store, without trusting a stale trace of one.

A running server writes ``serve.json`` (its pid, address and a random instance name) and
``serve.token`` into the store folder. A client believes them only when the pid is alive, the
address is plain HTTP on loopback, and the server there answers ``GET /v1/health`` with the
same instance name: after a crash a pid and a port can both belong to another program by now,
and the token must never be sent to one.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

#: the discovery file a running server writes into its store folder
DISCOVERY_FILE = "serve.json"
#: the file holding the store's secret token (readable by its owner only)
TOKEN_FILE = "serve.token"
#: the header that carries the token
TOKEN_HEADER = "Authorization"


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
    """The live server of ``store``, or None (no discovery file, or its process is gone)."""
    folder = Path(store).expanduser()
    try:
        data = json.loads((folder / DISCOVERY_FILE).read_text(encoding="utf-8"))
        pid, url, instance = int(data["pid"]), str(data["url"]), str(data["instance"])
        token = (folder / TOKEN_FILE).read_text(encoding="utf-8").strip()
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    if not pid_alive(pid) or not token or not loopback_url(url):
        return None
    # a pid is reused after a crash, and so is a port: only the server that wrote the file
    # knows its instance name, and it says it without being given the token
    if _instance_at(url) != instance:
        return None
    return ServerInfo(pid, url, token, folder)


def loopback_url(url: str) -> bool:
    """Whether a URL is plain HTTP to a loopback address (where the token may be sent)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme != "http":
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _instance_at(url: str, timeout: float = 3.0) -> str | None:
    """The instance name the server at ``url`` gives (None when nothing sane answers)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    try:
        conn.request("GET", "/v1/health")
        response = conn.getresponse()
        data = json.loads(response.read(4096))
        return str(data["result"]["instance"]) if response.status == 200 else None
    except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError):
        return None
    finally:
        conn.close()
