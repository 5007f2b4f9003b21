"""LangGraph's long-term memory on localmem: :class:`LocalmemStore`, a ``BaseStore``.

How LangGraph's items map onto memories: a ``(namespace, key)`` pair names one memory (kind
``note``). Its metadata holds the namespace whole (``lg_ns``: the path as JSON text, plus each
level as ``lg_ns:0``, ``lg_ns:1``... so a namespace prefix is a metadata filter the store
applies itself), the key (``lg_key``) and the value, stored whole (``lg_value``). The memory's
text is what LangGraph would embed: the value's fields named by ``index={"fields": [...]}``
(LangGraph's convention, ``$`` the whole value as JSON; a put with ``index=False`` is kept but
never returned for a query). With ``user_level=N`` the namespace's N-th level is also the
memory's ``user_id`` (``("memories", "alice")`` with ``user_level=1``: alice's memories, which
``delete_all(user_id="alice")`` forgets); ``agent_id`` scopes every memory of the store.

A put on an existing key updates that memory (its history keeps the old text and value); a put
of ``None`` and ``delete`` delete it. ``search`` with a query runs localmem's search pipeline
(hybrid retrieval, reranking, temporal validity), without one it lists, newest first; ``filter``
matches value fields as LangGraph's own stores do (equality, or ``$eq``, ``$ne``, ``$gt``,
``$gte``, ``$lt``, ``$lte``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from langgraph.store.base.embed import get_text_at_path, tokenize_path

from localmem.api import MemoryAPI
from localmem.errors import InputError
from localmem.types import MemoryItem

MARK = "lg_store"
NAMESPACE = "lg_ns"
KEY = "lg_key"
VALUE = "lg_value"
INDEXED = "lg_indexed"
#: memories a page of listing reads
_PAGE = 1000
#: hits asked of the search when a value filter or an offset must be applied after it
_POOL = 1000


def _level(i: int) -> str:
    return f"{NAMESPACE}:{i}"


class LocalmemStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items are localmem memories.

    Args:
        memory: an open :class:`localmem.Memory` or a ``Memory.connect`` client.
        index: LangGraph's index configuration; only ``fields`` is read (the value's paths
            whose text is embedded; default ``["$"]``, the whole value). localmem embeds with
            its own model, so ``dims`` and ``embed`` are ignored.
        user_level: which level of a namespace is the memory's ``user_id`` (None: none).
        agent_id: the agent scope of every memory this store writes and reads.
        store_name: a name that keeps this store's items apart from another's in one store.
    """

    supports_ttl = False

    def __init__(
        self,
        memory: MemoryAPI,
        *,
        index: Mapping[str, Any] | None = None,
        user_level: int | None = None,
        agent_id: str | None = None,
        store_name: str = "langgraph",
    ) -> None:
        self.memory = memory
        fields = list((index or {}).get("fields") or ["$"])
        self.fields = [(field, tokenize_path(field)) for field in fields]
        self.user_level = user_level
        self.agent_id = agent_id
        self.store_name = store_name

    # -- the BaseStore interface -----------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run LangGraph's operations in order, one result each."""
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise InputError(f"unknown store operation: {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread (localmem's calls block)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- operations ------------------------------------------------------------------------------
    def _find(self, namespace: tuple[str, ...], key: str) -> MemoryItem | None:
        found = self.memory.list(
            metadata={MARK: self.store_name, NAMESPACE: _path(namespace), KEY: key},
            user_id=self._user(namespace),
            agent_id=self.agent_id,
            limit=1,
        )
        return found[0] if found else None

    def _get(self, op: GetOp) -> Item | None:
        item = self._find(tuple(op.namespace), op.key)
        return None if item is None else _item(item)

    def _put(self, op: PutOp) -> None:
        namespace = tuple(op.namespace)
        existing = self._find(namespace, op.key)
        if op.value is None:
            if existing is not None:
                self.memory.delete(existing.id)
            return
        fields = self.memory_fields(namespace, op.key, op.value, op.index)
        if existing is not None:
            self.memory.update(existing.id, content=fields["content"], metadata=fields["metadata"])
            return
        self.memory.add(**fields, infer=False)

    def memory_fields(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
    ) -> dict[str, Any]:
        """The memory an item becomes, as the fields of ``add`` (``add_many`` takes a list of
        them: a bulk load of items without a put each).

        Raises:
            InputError: the value is not a dict.
        """
        if not isinstance(value, Mapping):
            raise InputError(f"a store value must be a dict, not {type(value).__name__}")
        text, indexed = self._text(value, index)
        metadata = {
            MARK: self.store_name,
            NAMESPACE: _path(namespace),
            KEY: key,
            VALUE: dict(value),
            INDEXED: indexed,
            **{_level(i): part for i, part in enumerate(namespace)},
        }
        return {
            "content": text,
            "kind": "note",
            "user_id": self._user(namespace),
            "agent_id": self.agent_id,
            "metadata": metadata,
        }

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        where: dict[str, Any] = {MARK: self.store_name}
        where.update({_level(i): part for i, part in enumerate(prefix)})
        user = self._user(prefix)
        wanted = op.offset + op.limit
        if op.query:
            found: list[SearchItem] = []
            if user is not None:
                # the user scope narrows the search (the same search Memory.search makes for
                # the user); the namespace's other levels are checked on the hits, and the
                # metadata filter is the fallback when hits of the user's other namespaces
                # crowd this one out
                k = min(_POOL, wanted) if not op.filter else _POOL
                hits = self._query(op.query, k, user, None)
                found = self._keep(hits, op, where)
                if len(found) >= wanted or len(hits) < k:
                    return found[op.offset : wanted]
            pool = wanted if not op.filter else max(wanted, _POOL)
            found = self._keep(self._query(op.query, min(pool, _POOL), user, where), op, where)
            return found[op.offset : wanted]
        out: list[SearchItem] = []
        for memory in self._scan(where, user):
            if matches(memory.metadata.get(VALUE) or {}, op.filter):
                out.append(_item(memory, score=None))
                if len(out) >= wanted:
                    break
        return out[op.offset : wanted]

    def _query(
        self, query: str, k: int, user: str | None, where: Mapping[str, Any] | None
    ) -> list[Any]:
        return self.memory.search(
            query,
            k=k,
            metadata=dict(where) if where else None,
            user_id=user,
            agent_id=self.agent_id,
        ).hits

    @staticmethod
    def _keep(hits: Sequence[Any], op: SearchOp, where: Mapping[str, Any]) -> list[SearchItem]:
        """The hits that are this store's items under the prefix, searchable by a query and
        passing the value filter, as SearchItems."""
        return [
            _item(hit.memory, score=hit.score)
            for hit in hits
            if all(hit.memory.metadata.get(key) == value for key, value in where.items())
            and hit.memory.metadata.get(INDEXED, True)
            and matches(hit.memory.metadata.get(VALUE) or {}, op.filter)
        ]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        seen: set[tuple[str, ...]] = set()
        for memory in self._scan({MARK: self.store_name}, None):
            namespace = tuple(json.loads(memory.metadata[NAMESPACE]))
            if all(_condition(namespace, c) for c in op.match_conditions or ()):
                seen.add(namespace[: op.max_depth] if op.max_depth is not None else namespace)
        return sorted(seen)[op.offset : op.offset + op.limit]

    # -- helpers ---------------------------------------------------------------------------------
    def _scan(self, where: Mapping[str, Any], user: str | None) -> Iterator[MemoryItem]:
        offset = 0
        while True:
            page = self.memory.list(
                metadata=dict(where),
                user_id=user,
                agent_id=self.agent_id,
                limit=_PAGE,
                offset=offset,
            )
            yield from page
            if len(page) < _PAGE:
                return
            offset += _PAGE

    def _user(self, namespace: Sequence[str]) -> str | None:
        if self.user_level is None or len(namespace) <= self.user_level:
            return None
        return namespace[self.user_level]

    def _text(self, value: Mapping[str, Any], index: Any) -> tuple[str, bool]:
        """The text to embed and whether the item is searchable by a query."""
        if index is False:
            fields = self.fields
            indexed = False
        elif index:
            fields = [(field, tokenize_path(field)) for field in index]
            indexed = True
        else:
            fields = self.fields
            indexed = True
        texts: list[str] = []
        for field, path in fields:
            if field == "$":
                texts.append(json.dumps(value, ensure_ascii=False, sort_keys=True))
            else:
                texts.extend(t for t in get_text_at_path(value, path) if t and t.strip())
        text = "\n".join(texts).strip()
        # a value without text at its fields is still kept (a memory needs some text)
        return text or json.dumps(value, ensure_ascii=False, sort_keys=True), indexed


def _path(namespace: Sequence[str]) -> str:
    return json.dumps(list(namespace), ensure_ascii=False)


def _item(memory: MemoryItem, *, score: float | bool | None = False) -> Any:
    metadata = memory.metadata
    fields = {
        "value": metadata.get(VALUE) or {},
        "key": metadata[KEY],
        "namespace": tuple(json.loads(metadata[NAMESPACE])),
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
    }
    if score is False:
        return Item(**fields)
    return SearchItem(**fields, score=score)


def _condition(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))


def matches(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """Whether a stored value passes LangGraph's filter, as LangGraph's own stores read one:
    each key's value equal (a nested object matched key by key, a list item by item), or
    compared with ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``."""
    return _fits(value, dict(filter or {}))


def _fits(have: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_compare(have, op, arg) for op, arg in wanted.items())
        return isinstance(have, Mapping) and all(_fits(have.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(have, list | tuple)
            and len(have) == len(wanted)
            and all(_fits(h, w) for h, w in zip(have, wanted, strict=True))
        )
    return have == wanted


def _compare(have: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return have == arg
    if op == "$ne":
        return have != arg
    if op not in ("$gt", "$gte", "$lt", "$lte"):
        raise InputError(f"unsupported filter operator {op!r} ($eq, $ne, $gt, $gte, $lt, $lte)")
    try:
        a, b = float(have), float(arg)
    except (TypeError, ValueError):
        return False  # a missing or non-numeric field never compares
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]
