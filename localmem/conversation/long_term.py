"""The agent's long-term memory: per scope (a user id), question-answer facts with a salience
and a success flag, entities (name, type, attributes) and relations between them (tables
``ltm_facts``, ``ltm_entities``, ``ltm_relations``, migration 0040).

The read policy (which facts, entities and relations reach a prompt) is made of pure functions
over lists (:func:`pick_facts`, :func:`rank_entities`, :func:`rank_relations`); the class does
the I/O around them.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from localmem.errors import InputError
from localmem.store.db import utcnow
from localmem.store.kernel import HasKernel, Kernel, kernel_of


# -- long-term memory: values and read policy ----------------------------------------------------
@dataclass(frozen=True)
class Fact:
    """A question-answer pair the agent keeps."""

    id: str
    question: str
    answer: str
    salience: float
    success: bool
    created_at: datetime
    conversation_id: str | None = None
    embedding: np.ndarray | None = field(default=None, repr=False, compare=False)

    def line(self) -> str:
        """The fact as one prompt line."""
        return f"Q: {' '.join(self.question.split())} A: {' '.join(self.answer.split())}"


@dataclass(frozen=True)
class Entity:
    """A named thing the agent has seen, with what it knows about it."""

    name: str
    type: str
    attributes: dict[str, Any]
    mentions: int
    last_seen: datetime

    @property
    def key(self) -> str:
        return entity_key(self.name)


@dataclass(frozen=True)
class Relation:
    """A directed relation between two entities (by name)."""

    source: str
    relation: str
    target: str
    mentions: int
    last_seen: datetime

    def line(self) -> str:
        """The relation as one prompt line."""
        return f"{self.source} {self.relation} {self.target}"


def entity_key(name: str) -> str:
    """How entity names are compared: case and spacing do not matter."""
    return " ".join(name.lower().split())


def pick_facts(
    facts: Sequence[Fact],
    *,
    limit: int,
    min_salience: float,
    order: str = "salience",
    query_vector: np.ndarray | None = None,
) -> list[Fact]:
    """The facts a prompt gets: salient enough, then the most salient (newest first among
    equals) or, with ``order="relevance"`` and a query vector, the most similar to the query."""
    keep = [f for f in facts if f.salience >= min_salience]
    if order == "relevance" and query_vector is not None:

        def similarity(f: Fact) -> float:
            return float(np.dot(f.embedding, query_vector)) if f.embedding is not None else -1.0

        keep.sort(key=lambda f: (similarity(f), f.salience, f.created_at), reverse=True)
    elif order in ("salience", "relevance"):
        keep.sort(key=lambda f: (f.salience, f.created_at), reverse=True)
    else:
        raise InputError(f"unknown fact order {order!r}; known: salience, relevance")
    return keep[: max(0, limit)]


def rank_entities(entities: Sequence[Entity], *, limit: int, prefer: Iterable[str] = ()) -> list:
    """Entities named in ``prefer`` first, then the most mentioned, then the latest seen."""
    wanted = {entity_key(p) for p in prefer}
    ordered = sorted(
        entities, key=lambda e: (e.key in wanted, e.mentions, e.last_seen), reverse=True
    )
    return ordered[: max(0, limit)]


def rank_relations(relations: Sequence[Relation], *, limit: int, prefer: Iterable[str] = ()):
    """Relations touching the entities in ``prefer`` first, then the most often seen."""
    wanted = {entity_key(p) for p in prefer}

    def touches(r: Relation) -> int:
        return int(entity_key(r.source) in wanted) + int(entity_key(r.target) in wanted)

    ordered = sorted(relations, key=lambda r: (touches(r), r.mentions, r.last_seen), reverse=True)
    return ordered[: max(0, limit)]


# -- long-term memory: the store -----------------------------------------------------------------
class LongTermMemory:
    """Facts, entities and relations of one scope (a user id; None is the shared scope).

    Args:
        store: The open store (a kernel, or the Memory carrying it).
        scope: Whose long-term memory this is.
        embed: ``texts -> vectors`` (normalised); facts are embedded when given, for the
            relevance read order.
    """

    def __init__(
        self,
        store: Kernel | HasKernel,
        *,
        scope: str | None = None,
        embed: Callable[[list[str]], np.ndarray] | None = None,
    ) -> None:
        self.kernel = kernel_of(store)
        self.db = self.kernel.db
        self.scope = scope or ""
        self._embed = embed

    # facts
    def add_fact(
        self,
        question: str,
        answer: str,
        *,
        salience: float,
        success: bool,
        conversation_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        now: datetime | None = None,
    ) -> Fact:
        """Keep a question-answer pair."""
        if not question.strip() or not answer.strip():
            raise InputError("a fact needs a question and an answer")
        if not 0.0 <= salience <= 1.0:
            raise InputError(f"salience must be within 0..1, not {salience}")
        vector = self._embed([f"{question}\n{answer}"])[0] if self._embed else None
        fact = Fact(
            secrets.token_hex(8),
            question,
            answer,
            float(salience),
            bool(success),
            now or utcnow(),
            conversation_id,
            vector,
        )
        with self.kernel.writing():
            self.db.execute(
                "INSERT INTO ltm_facts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    fact.id,
                    self.scope,
                    conversation_id,
                    question,
                    answer,
                    fact.salience,
                    fact.success,
                    fact.created_at,
                    None if vector is None else [float(x) for x in vector],
                    json.dumps(metadata or {}),
                ],
            )
        return fact

    def all_facts(self) -> list[Fact]:
        """Every fact of the scope, newest first."""
        rows = self.db.fetchall(
            "SELECT id, question, answer, salience, success, created_at, conversation_id, "
            "embedding FROM ltm_facts WHERE scope = ? ORDER BY created_at DESC",
            [self.scope],
        )
        return [_fact(r) for r in rows]

    def facts(
        self,
        *,
        limit: int = 5,
        min_salience: float = 0.3,
        order: str = "salience",
        query_vector: np.ndarray | None = None,
    ) -> list[Fact]:
        """The facts the read policy picks (see :func:`pick_facts`)."""
        return pick_facts(
            self.all_facts(),
            limit=limit,
            min_salience=min_salience,
            order=order,
            query_vector=query_vector,
        )

    # entities and relations
    def remember(
        self,
        entities: Iterable[tuple[str, str, dict[str, Any]]],
        relations: Iterable[tuple[str, str, str]] = (),
        *,
        now: datetime | None = None,
    ) -> tuple[int, int]:
        """Add or refresh entities ``(name, type, attributes)`` and relations ``(source,
        relation, target)``; an end of a relation that is not an entity yet becomes one of
        type ``other``. Returns how many entities and relations were written."""
        now = now or utcnow()
        merged: dict[str, tuple[str, str, dict[str, Any]]] = {}
        for name, etype, attrs in entities:
            name = " ".join(str(name).split())
            if not name:
                continue
            key = entity_key(name)
            old = merged.get(key)
            merged[key] = (name, etype or "other", {**(old[2] if old else {}), **(attrs or {})})
        rels = []
        for s, r, t in relations:
            s, t = " ".join(str(s).split()), " ".join(str(t).split())
            r = "_".join(str(r).lower().split())
            if not s or not t or not r or entity_key(s) == entity_key(t):
                continue
            rels.append((s, r, t))
            for end in (s, t):
                merged.setdefault(entity_key(end), (end, "other", {}))
        with self.kernel.writing():
            for key, (name, etype, attrs) in merged.items():
                self._upsert_entity(key, name, etype, attrs, now)
            for s, r, t in dict.fromkeys(rels):
                self.db.execute(
                    "INSERT INTO ltm_relations VALUES (?, ?, ?, ?, 1, ?, ?) "
                    "ON CONFLICT (scope, source, relation, target) DO UPDATE SET "
                    "mentions = ltm_relations.mentions + 1, last_seen = excluded.last_seen",
                    [self.scope, entity_key(s), r, entity_key(t), now, now],
                )
        return len(merged), len(set(rels))

    def _upsert_entity(
        self, key: str, name: str, etype: str, attrs: dict[str, Any], now: datetime
    ) -> None:
        row = self.db.fetchone(
            "SELECT type, attributes FROM ltm_entities WHERE scope = ? AND key = ?",
            [self.scope, key],
        )
        if row is None:
            self.db.execute(
                "INSERT INTO ltm_entities VALUES (?, ?, ?, ?, ?, 1, ?, ?)",
                [self.scope, key, name, etype, json.dumps(attrs), now, now],
            )
            return
        old_type, old_attrs = row
        kept_type = etype if old_type == "other" else old_type  # a known type is not lost
        attrs = {**(json.loads(old_attrs) if old_attrs else {}), **attrs}
        self.db.execute(
            "UPDATE ltm_entities SET type = ?, attributes = ?, mentions = mentions + 1, "
            "last_seen = ? WHERE scope = ? AND key = ?",
            [kept_type, json.dumps(attrs), now, self.scope, key],
        )

    def all_entities(self) -> list[Entity]:
        """Every entity of the scope."""
        rows = self.db.fetchall(
            "SELECT name, type, attributes, mentions, last_seen FROM ltm_entities "
            "WHERE scope = ? ORDER BY key",
            [self.scope],
        )
        return [Entity(n, t, json.loads(a) if a else {}, m, s) for n, t, a, m, s in rows]

    def all_relations(self) -> list[Relation]:
        """Every relation of the scope, with the entities' display names."""
        rows = self.db.fetchall(
            "SELECT coalesce(s.name, r.source), r.relation, coalesce(t.name, r.target), "
            "r.mentions, r.last_seen FROM ltm_relations r "
            "LEFT JOIN ltm_entities s ON s.scope = r.scope AND s.key = r.source "
            "LEFT JOIN ltm_entities t ON t.scope = r.scope AND t.key = r.target "
            "WHERE r.scope = ? ORDER BY r.source, r.relation, r.target",
            [self.scope],
        )
        return [Relation(*r) for r in rows]

    def entities(self, *, limit: int = 10, prefer: Iterable[str] = ()) -> list[Entity]:
        """The entities the read policy picks (see :func:`rank_entities`)."""
        return rank_entities(self.all_entities(), limit=limit, prefer=prefer)

    def relations(self, *, limit: int = 15, prefer: Iterable[str] = ()) -> list[Relation]:
        """The relations the read policy picks (see :func:`rank_relations`)."""
        return rank_relations(self.all_relations(), limit=limit, prefer=prefer)

    def counts(self) -> dict[str, int]:
        """How many facts, entities and relations the scope holds."""
        return {
            table: int(self.db.scalar(f"SELECT count(*) FROM ltm_{table} WHERE scope = ?", [s]))
            for table, s in (
                ("facts", self.scope),
                ("entities", self.scope),
                ("relations", self.scope),
            )
        }

    def clear(self) -> None:
        """Forget everything of this scope."""
        with self.kernel.writing():
            for table in ("ltm_facts", "ltm_entities", "ltm_relations"):
                self.db.execute(f"DELETE FROM {table} WHERE scope = ?", [self.scope])


def _fact(row: tuple[Any, ...]) -> Fact:
    """A fact from a row of ``ltm_facts`` (the columns of :meth:`LongTermMemory.all_facts`)."""
    fact_id, question, answer, salience, success, created_at, conversation_id, vector = row
    embedding = None if vector is None else np.asarray(vector, dtype=np.float32)
    return Fact(
        fact_id, question, answer, salience, success, created_at, conversation_id, embedding
    )
