"""`localmem doctor` on a PostgreSQL store recommends the server settings its size asks for
(localmem/store/postgres/settings.py, issue 34): shared_buffers that hold the HNSW index, and
maintenance_work_mem that holds its build."""

from __future__ import annotations

import json

from store_helpers import run

from localmem.store.postgres.settings import Advice


def test_doctor_reports_the_servers_settings_against_the_stores_needs(pg_url, embedder, capsys):
    from localmem import Memory

    with Memory.open(pg_url, embedder=embedder) as mem:
        mem.add_many([f"note {i} about the garden" for i in range(50)])
    _, out, _ = run(capsys, "doctor", "--store", pg_url, "--json")
    report = json.loads(out)
    settings = {s["setting"]: s for s in report["facts"]["server_settings"]}
    assert set(settings) == {"shared_buffers", "maintenance_work_mem"}
    shared = settings["shared_buffers"]
    assert shared["current_mb"] == 128  # pgserver's default; a 50-memory index fits in it
    assert shared["recommended_mb"] == 128 and shared["ok"]
    checks = {c["check"]: c for c in report["checks"]}
    detail = checks["pg shared_buffers"]["detail"]
    assert checks["pg shared_buffers"]["ok"] and "HNSW index and the BM25" in detail
    _, out, _ = run(capsys, "doctor", "--store", pg_url)
    assert "pg maintenance_work_mem" in out


def test_a_setting_below_its_recommendation_says_how_to_raise_it():
    low = Advice("shared_buffers", 128, 2560, "the HNSW index is 2048 MB")
    assert not low.ok
    assert "ALTER SYSTEM SET shared_buffers = '2560MB' and restart the server" in low.line()
    high = Advice("maintenance_work_mem", 4096, 1024, "building")
    assert high.ok and "ALTER SYSTEM" not in high.line()
