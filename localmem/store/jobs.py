"""Durable background jobs (attribute mining, evolution, ...) kept in DuckDB.

A job is claimed (``running``), then its handler writes its results *and* marks the job ``done``
in one transaction, so a crash either loses the whole step (the job is pending again on the next
open) or keeps all of it: no step is applied twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from localmem.errors import StoreError
from localmem.store.backend import StoreDatabase
from localmem.store.db import utcnow

PENDING, RUNNING, DONE, FAILED, DROPPED = "pending", "running", "done", "failed", "dropped"


@dataclass(frozen=True)
class Job:
    """One unit of deferred work."""

    id: int
    kind: str
    memory_id: str | None
    payload: dict[str, Any]
    status: str
    attempts: int
    error: str | None
    created_at: datetime


class JobQueue:
    """The ``jobs`` table as a queue."""

    #: how a claim locks the row it takes ("" for DuckDB, where one process writes; PostgreSQL
    #: says FOR UPDATE SKIP LOCKED, so several processes never take the same job)
    ROW_LOCK = ""

    def __init__(self, db: StoreDatabase) -> None:
        self.db = db

    def enqueue(
        self, kind: str, memory_id: str | None = None, payload: dict[str, Any] | None = None
    ) -> int:
        """Queue a job (inside the caller's transaction, so it commits with the memory)."""
        now = utcnow()
        return int(
            self.db.scalar(
                "INSERT INTO jobs VALUES (nextval('job_seq'), ?, ?, ?, 'pending', 0, NULL, ?, ?) "
                "RETURNING id",
                [kind, memory_id, json.dumps(payload or {}), now, now],
            )
        )

    def recover(self) -> int:
        """Jobs left ``running`` by a process that died go back to ``pending``; returns how many."""
        with self.db.transaction():
            n = self.db.scalar("SELECT count(*) FROM jobs WHERE status = 'running'")
            if n:
                self.db.execute(
                    "UPDATE jobs SET status = 'pending', updated_at = ? WHERE status = 'running'",
                    [utcnow()],
                )
        return int(n or 0)

    def claim(self, kinds: list[str] | None = None) -> Job | None:
        """Take the oldest pending job (of the given kinds) and mark it running."""
        with self.db.transaction():
            where, params = "status = 'pending'", []
            if kinds:
                where += f" AND kind IN ({', '.join('?' for _ in kinds)})"
                params += kinds
            row = self.db.fetchone(
                f"SELECT id FROM jobs WHERE {where} ORDER BY id LIMIT 1{self.ROW_LOCK}", params
            )
            if row is None:
                return None
            return self._claim_row(row[0])

    def claim_ids(self, ids: list[int]) -> Job | None:
        """Take the first still-pending job among ``ids`` (inline runs of just-queued jobs)."""
        if not ids:
            return None
        with self.db.transaction():
            row = self.db.fetchone(
                "SELECT id FROM jobs WHERE status = 'pending' "
                f"AND id IN (SELECT unnest(?::BIGINT[])) ORDER BY id LIMIT 1{self.ROW_LOCK}",
                [ids],
            )
            if row is None:
                return None
            return self._claim_row(row[0])

    def get(self, job_id: int) -> Job | None:
        """One job as it stands (None when there is no such job)."""
        row = self.db.fetchone(
            "SELECT id, kind, memory_id, payload, status, attempts, error, created_at FROM jobs "
            "WHERE id = ?",
            [job_id],
        )
        if row is None:
            return None
        return Job(
            id=row[0],
            kind=row[1],
            memory_id=row[2],
            payload=json.loads(row[3]) if row[3] else {},
            status=row[4],
            attempts=row[5],
            error=row[6],
            created_at=row[7],
        )

    def _claim_row(self, job_id: int) -> Job:
        job = self.get(job_id)
        if job is None:
            raise StoreError(f"no job {job_id} to start")
        self.db.execute(
            "UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = ? "
            "WHERE id = ?",
            [utcnow(), job_id],
        )
        return replace(job, status=RUNNING, attempts=job.attempts + 1)

    def _set(self, job_id: int, status: str, error: str | None = None) -> None:
        self.db.execute(
            "UPDATE jobs SET status = ?, error = ?, updated_at = ? WHERE id = ?",
            [status, error, utcnow(), job_id],
        )

    def done(self, job_id: int) -> None:
        """Mark a job done; call it in the same transaction as the job's own writes."""
        self._set(job_id, DONE)

    def fail(self, job_id: int, error: str) -> None:
        """Mark a job failed; :meth:`retry_failed` puts it back in the queue."""
        self._set(job_id, FAILED, error[:2000])

    def drop(self, job_id: int, reason: str) -> None:
        """Give a job up for good (e.g. its memory was deleted meanwhile)."""
        self._set(job_id, DROPPED, reason[:2000])

    def drop_for(self, memory_id: str, reason: str) -> None:
        """Give up the waiting jobs of a memory (it was deleted); in the caller's transaction."""
        self.db.execute(
            "UPDATE jobs SET status = 'dropped', error = ? "
            "WHERE memory_id = ? AND status IN ('pending', 'failed')",
            [reason, memory_id],
        )

    def retry_failed(self, kinds: list[str] | None = None) -> int:
        """Failed jobs become pending again; returns how many."""
        where, params = "status = 'failed'", []
        if kinds:
            where += f" AND kind IN ({', '.join('?' for _ in kinds)})"
            params += kinds
        with self.db.transaction():
            n = self.db.scalar(f"SELECT count(*) FROM jobs WHERE {where}", params)
            self.db.execute(f"UPDATE jobs SET status = 'pending' WHERE {where}", params)
        return int(n or 0)

    def status(self, job_id: int) -> str | None:
        """A job's status (None when there is no such job)."""
        status: str | None = self.db.scalar("SELECT status FROM jobs WHERE id = ?", [job_id])
        return status

    def counts(self) -> dict[str, dict[str, int]]:
        """Jobs by kind and status."""
        out: dict[str, dict[str, int]] = {}
        for kind, status, n in self.db.fetchall(
            "SELECT kind, status, count(*) FROM jobs GROUP BY 1, 2 ORDER BY 1, 2"
        ):
            out.setdefault(kind, {})[status] = int(n)
        return out

    def pending(self, kinds: list[str] | None = None) -> int:
        """How many jobs wait (of the given kinds)."""
        where, params = "status IN ('pending', 'running')", []
        if kinds:
            where += f" AND kind IN ({', '.join('?' for _ in kinds)})"
            params += kinds
        return int(self.db.scalar(f"SELECT count(*) FROM jobs WHERE {where}", params) or 0)
