"""The store address (issue 30 item 4): one parser, every spelling of a PostgreSQL address
classified and redacted, libpq handed what the person meant, libpq's own messages redacted, and
the password taken from PGPASSWORD, a passfile or a service so it need not sit in argv."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pg_server import SECRET_PASSWORD, SECRET_USER
from psycopg.conninfo import conninfo_to_dict
from store_helpers import run
from test_pg_serve import _stop

from localmem import InputError, Memory
from localmem.errors import StoreConnectionError
from localmem.store.address import is_postgres, redact

#: what a password may hold (printable ASCII and beyond): "/", "#", "@", "?", ":" included
_PASSWORD_CHARS = st.characters(
    codec="utf-8", exclude_categories=("Cs", "Cc"), exclude_characters="%"
)
_SCHEMES = st.sampled_from(["postgresql", "postgres"]).flatmap(
    lambda s: st.lists(st.booleans(), min_size=len(s), max_size=len(s)).map(
        lambda upper: "".join(c.upper() if u else c for c, u in zip(s, upper, strict=True))
    )
)
_TAILS = st.sampled_from(
    ["db.example:5432/mem", "/mem?host=/tmp/sock", "[::1]:5433/m?sslmode=disable", "h/d"]
)


# -- the parser ----------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(
    scheme=_SCHEMES,
    user=st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True),
    secret=st.text(_PASSWORD_CHARS, min_size=1, max_size=24),
    tail=_TAILS,
)
@example(scheme="Postgres", user="lm_user", secret="PW", tail="/db?host=/tmp")
@example(scheme="POSTGRESQL", user="u", secret="pa/ss#w0rd", tail="h/d")
@example(scheme="postgresql", user="u", secret="a?b@c", tail="h/d")
@example(scheme="postgresql", user="u", secret="0dd/pa#ss@w?rd:x", tail="/t?host=/tmp")
@example(scheme="postgresql", user="u", secret="?a=@", tail="h/d")
def test_every_spelling_is_postgres_shown_without_its_password_and_read_by_libpq(
    scheme, user, secret, tail
):
    from localmem.store.address import StoreAddress

    password = "Zx" + secret  # distinct from anything else in the address
    address = f"{scheme}://{user}:{password}@{tail}"
    parsed = StoreAddress.parse(address)
    assert parsed.is_postgres and is_postgres(address)
    assert password not in parsed.shown and password not in repr(parsed)
    assert password not in str(parsed) and password not in redact(address)
    assert parsed.shown.startswith(f"{scheme.lower()}://{user}:***@")
    # libpq reads the address as the person meant it, whatever the password holds (but a
    # "?key=", which reads as a query: such a password must be percent-encoded)
    if not re.search(r"\?[A-Za-z_]+=", password):
        read = conninfo_to_dict(parsed.conninfo)
        assert read["password"] == password and read["user"] == user
    # a driver's message quoting the address, or the password, is redacted
    message = f'could not connect to "{address}" as {password} via {parsed.conninfo}'
    assert password not in parsed.redact(message)
    # the shown form parses to itself (it names the same local folder)
    assert StoreAddress.parse(parsed.shown).shown == parsed.shown


@pytest.mark.parametrize(
    "address",
    [
        "postgresql://me:hunter2@db.example:5432/mem?sslmode=require&password=hunter2",
        "postgresql://me@db.example/mem?PassWord=hunter2&sslpassword=hunter2",
        "postgres://me:hunter2%2F@db/mem",
    ],
)
def test_passwords_in_the_query_and_encoded_ones_are_redacted(address):
    from localmem.store.address import StoreAddress

    parsed = StoreAddress.parse(address)
    assert "hunter2" not in parsed.shown and "***" in parsed.shown
    said = f"oops: {address} / hunter2/ / hunter2%2F"
    assert "hunter2" not in parsed.redact(said)


def test_folders_and_addresses_without_secrets():
    from localmem.store.address import StoreAddress

    assert StoreAddress.parse("/a/folder").folder == Path("/a/folder")
    assert redact("/a/folder") == "/a/folder"
    assert not StoreAddress.parse("~/x").is_postgres
    assert StoreAddress.parse("~/x").folder == Path("~/x").expanduser()
    assert not is_postgres(Path("postgresql://x"))  # a Path is always a folder
    plain = StoreAddress.parse("postgresql://?service=memory")
    assert plain.shown == "postgresql://?service=memory" and plain.is_postgres
    assert StoreAddress.parse("postgresql://me@h/db").shown == "postgresql://me@h/db"
    with pytest.raises(InputError):
        StoreAddress.parse("  ")
    with pytest.raises(ValueError):
        _ = StoreAddress.parse("/a/folder").conninfo


# -- against a real server -------------------------------------------------------------------
ODD_USER = "lm_odd"
ODD_PASSWORD = "0dd/pa#ss@w?rd:x"


@pytest.fixture
def odd_role(pg_server):
    """A role whose password holds "/", "#", "@", "?" and ":", logging in with it (scram)."""
    hba = pg_server.pgdata / "pg_hba.conf"
    rule = f"local all {ODD_USER} scram-sha-256\n"
    if rule not in hba.read_text():
        hba.write_text(rule + hba.read_text())
    pg_server.server.psql(
        f"DO $$ BEGIN CREATE ROLE {ODD_USER} LOGIN SUPERUSER; "
        "EXCEPTION WHEN OTHERS THEN NULL; END $$;"
        f"ALTER ROLE {ODD_USER} PASSWORD '{ODD_PASSWORD}'; SELECT pg_reload_conf();"
    )
    return ODD_USER


def _database(pg_server) -> str:
    return urlsplit(pg_server.new_database()).path.lstrip("/")


@pytest.mark.postgres
@pytest.mark.parametrize("scheme", ["Postgres", "POSTGRESQL", "postgresql"])
def test_any_spelling_of_the_scheme_works_and_never_prints_the_password(pg_server, capsys, scheme):
    url = pg_server.url(_database(pg_server), user=SECRET_USER, password=SECRET_PASSWORD)
    url = scheme + url[len("postgresql") :]
    code, _, err = run(capsys, "add", "The deploy runs on Fridays", "--store", url)
    assert code == 0, err
    code, out, err = run(capsys, "stats", "--store", url)
    assert code == 0 and "memories:  1" in out, err
    code, out2, err2 = run(capsys, "doctor", "--store", url)
    assert "1 live memory" in out2
    for text in (out, err, out2, err2):
        assert SECRET_PASSWORD not in text
    assert f"{SECRET_USER}:***@" in out


@pytest.mark.postgres
def test_a_password_with_slash_hash_and_at_works_unencoded(pg_server, odd_role, capsys):
    url = f"postgresql://{odd_role}:{ODD_PASSWORD}@/{_database(pg_server)}?host={pg_server.socket_dir}"
    code, _, err = run(capsys, "add", "a note", "--store", url)
    assert code == 0, err
    code, out, err = run(capsys, "stats", "--store", url, "--json")
    assert code == 0 and '"memories": 1' in out
    for text in (out, err):
        assert ODD_PASSWORD not in text and "0dd" not in text
    # the same password percent-encoded is the same store
    encoded = url.replace(ODD_PASSWORD, quote(ODD_PASSWORD, safe=""))
    code, out, err = run(capsys, "stats", "--store", encoded, "--json")
    assert code == 0 and '"memories": 1' in out


@pytest.mark.postgres
@pytest.mark.parametrize("wrong", ["wr/ong#pw", "wrong@pw", "wr:ong"])
def test_a_wrong_odd_password_is_one_line_without_any_part_of_it(
    pg_server, odd_role, wrong, capsys
):
    url = f"Postgres://{odd_role}:{wrong}@/{_database(pg_server)}?host={pg_server.socket_dir}"
    code, out, err = run(capsys, "stats", "--store", url)
    assert code != 0 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert "password authentication failed" in err, err
    for part in {wrong, *wrong.replace("#", "/").replace("@", "/").replace(":", "/").split("/")}:
        assert part not in err.replace(odd_role, ""), (part, err)
    with pytest.raises(StoreConnectionError) as info:
        Memory.open(url)
    assert wrong not in str(info.value) and "***" in str(info.value)


def _env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a child: its own home, no password of the parent's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    return {**env, "LOCALMEM_HOME": str(home), "PGPASSFILE": str(home / "no-passfile"), **extra}


def _serve(url: str, env: dict[str, str]) -> tuple[subprocess.Popen, Path]:
    from localmem.discovery import find_server
    from localmem.store.postgres.store import local_folder

    proc = subprocess.Popen(
        [sys.executable, "-m", "localmem", "serve", url],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    folder = Path(env["LOCALMEM_HOME"]) / "postgres" / local_folder(url).name
    deadline = time.monotonic() + 120
    while find_server(folder) is None:
        if proc.poll() is not None:
            raise AssertionError(f"serve exited: {proc.stderr.read()[-2000:]}")
        assert time.monotonic() < deadline, "serve did not start"
        time.sleep(0.1)
    return proc, folder


def _outside_argv(source: str, pg_server, db: str, folder: Path) -> tuple[str, dict[str, str]]:
    """An address without the password and the environment that gives it (``source``)."""
    url = f"postgresql://{SECRET_USER}@/{db}?host={pg_server.socket_dir}"
    if source == "PGPASSWORD":
        return url, {"PGPASSWORD": SECRET_PASSWORD}
    if source == "passfile":  # host:port:database:username:password
        path = folder / "pgpass"
        path.write_text(f"*:*:{db}:{SECRET_USER}:{SECRET_PASSWORD}\n")
        path.chmod(0o600)
        return url, {"PGPASSFILE": str(path)}
    services = folder / "pg_service.conf"
    services.write_text(
        f"[memory]\nhost={pg_server.socket_dir}\ndbname={db}\nuser={SECRET_USER}\n"
        f"password={SECRET_PASSWORD}\n"
    )
    return "postgresql://?service=memory", {"PGSERVICEFILE": str(services)}


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.parametrize("source", ["PGPASSWORD", "passfile", "service"])
def test_serve_takes_the_password_from_outside_argv(pg_server, tmp_path, source):
    from localmem.remote import connect

    url, extra = _outside_argv(source, pg_server, _database(pg_server), tmp_path)
    proc, folder = _serve(url, _env(tmp_path / "home", **extra))
    try:
        client = connect(folder)
        client.add("kept through a server that never saw the password in argv")
        assert client.stats()["memories"] == 1
        assert SECRET_PASSWORD not in Path(f"/proc/{proc.pid}/cmdline").read_text()
    finally:
        log = _stop(proc)
    assert "Traceback" not in log and "serving postgresql://" in log, log


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.parametrize("source", ["PGPASSWORD", "passfile", "service"])
def test_mcp_takes_the_password_from_outside_argv(
    pg_server, tmp_path, source, monkeypatch, embedder
):
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    url, extra = _outside_argv(source, pg_server, _database(pg_server), tmp_path)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "localmem", "mcp", url],
        env=_env(tmp_path / "home", **extra),
    )

    async def main():
        async with stdio_client(params) as streams, ClientSession(*streams) as session:
            await session.initialize()
            return await session.call_tool("add_memory", {"content": "said over MCP"})

    result = anyio.run(main)
    assert not result.is_error, result.content[0].text
    for name, value in extra.items():  # in process too, the password comes from outside
        monkeypatch.setenv(name, value)
    with Memory.open(url, embedder=embedder) as mem:
        assert [m.content for m in mem.list()] == ["said over MCP"]
