"""A real PostgreSQL 16 with pgvector for the tests, started by ``pgserver`` (no root, no
network: the server and the ``vector`` extension come in the PyPI wheel).

One server per test session in a private temp folder, stopped at the end; each test that asks
gets a database of its own (``CREATE DATABASE``, about 0.1 s), so tests never see each other's
rows. Faults use :func:`restart` (an immediate stop, as a crash, then a start on the same data).
"""

from __future__ import annotations

import contextlib
import itertools
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

#: a role that logs in with a password (the trust rules of pgserver do not ask for one)
SECRET_USER = "lm_secret"
SECRET_PASSWORD = "s3cr3t-Pa55-never-printed"

_count = itertools.count()


class PgServer:
    """A running server: its data folder, its socket, and databases made on demand."""

    def __init__(self) -> None:
        import pgserver

        # pgserver runs postgres as its own system user when we are root: the folder must be
        # reachable by it, so not under pytest's 0700 tmp folders
        self.pgdata = Path(tempfile.mkdtemp(prefix="localmem-pg-"))
        self.server = pgserver.get_server(self.pgdata, cleanup_mode="stop")
        self.server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        self._password_role()

    def _password_role(self) -> None:
        """A role that must give a password (scram) over the socket, for the wrong-password
        test: pgserver trusts every local connection otherwise."""
        hba = self.pgdata / "pg_hba.conf"
        rule = f"local all {SECRET_USER} scram-sha-256\n"
        hba.write_text(rule + hba.read_text())
        self.server.psql(
            f"CREATE ROLE {SECRET_USER} LOGIN SUPERUSER PASSWORD '{SECRET_PASSWORD}';"
            "SELECT pg_reload_conf();"
        )

    @property
    def socket_dir(self) -> str:
        uri = self.server.get_uri()
        return uri.split("host=", 1)[1].split("&", 1)[0]

    def url(self, database: str = "postgres", *, user: str = "postgres", password: str = "") -> str:
        """A ``postgresql://`` address of a database on this server (over its socket)."""
        auth = f"{user}:{quote(password, safe='')}@" if password else f"{user}@"
        return f"postgresql://{auth}/{database}?host={self.socket_dir}"

    def new_database(self) -> str:
        """A fresh, empty database; its address."""
        name = f"t{next(_count)}"
        self.server.psql(f"CREATE DATABASE {name};")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        """Drop a test's database (its connections cut), so that a run of the suite does not
        leave a database of ~8 MB a test on the disk: best effort, as a fault test may have
        left the server down."""
        name = url.rsplit("/", 1)[1].split("?", 1)[0]
        with contextlib.suppress(Exception):  # a cleanup must not fail the test it follows
            self.server.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE);')

    def restart(self) -> None:
        """Stop the server at once (no shutdown checkpoint, as a crash) and start it again."""
        from pgserver import pg_ctl

        pg_ctl(["-w", "-m", "immediate", "stop"], pgdata=self.pgdata, user=self.server.system_user)
        try:
            self.server.ensure_postgres_running()
        except subprocess.TimeoutExpired:  # pgserver waits 10 s; crash recovery on a loaded
            self.wait_ready(120)  # machine can take longer, and the server goes on starting

    def wait_ready(self, seconds: float) -> None:
        """Wait until the server accepts connections again."""
        import psycopg

        deadline = time.monotonic() + seconds
        while True:
            try:
                psycopg.connect(self.url(), connect_timeout=5).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def stop(self) -> None:
        self.server.cleanup()
        shutil.rmtree(self.pgdata, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server():
    """The session's PostgreSQL server (started on first use, stopped at the end)."""
    try:
        server = PgServer()
    except ImportError:  # pragma: no cover - the test extra installs pgserver
        pytest.skip("pgserver is not installed (pip install -e '.[test]')")
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """The address of a new, empty PostgreSQL database for this test (dropped after it)."""
    url = pg_server.new_database()
    yield url
    pg_server.drop_database(url)
