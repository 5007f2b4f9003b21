"""The PostgreSQL fixture itself: a real server with pgvector, a database per test."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.postgres


def test_a_database_with_pgvector(pg_url):
    import psycopg

    with psycopg.connect(pg_url) as con:
        con.execute("CREATE EXTENSION IF NOT EXISTS vector")
        (distance,) = con.execute("SELECT '[1,0]'::vector <#> '[1,0]'::vector").fetchone()
        assert distance == -1.0  # pgvector's negative inner product
        tables = "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        assert con.execute(tables).fetchone() == (0,)


def test_the_password_role_needs_its_password(pg_server):
    import psycopg
    from pg_server import SECRET_PASSWORD, SECRET_USER

    with psycopg.connect(pg_server.url(user=SECRET_USER, password=SECRET_PASSWORD)) as con:
        assert con.execute("SELECT current_user").fetchone() == (SECRET_USER,)
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(pg_server.url(user=SECRET_USER, password="wrong"))
