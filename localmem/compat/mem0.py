"""mem0's open-source ``Memory`` API over a localmem store: change ``from mem0 import Memory``
to ``from localmem.compat.mem0 import Memory`` and the application keeps working, locally and
without a language model.

Scopes map one to one: mem0's ``user_id`` and ``agent_id`` are localmem's, its ``run_id`` is a
localmem ``session_id``. Results have mem0's shapes (``{"results": [...]}``, items with ``id``,
``memory``, ``hash`` (MD5 of the text, as mem0 computes it), ``metadata``, ``score``,
``created_at``, ``updated_at`` and the scopes; add's events ADD, UPDATE, DELETE). ``infer=True``
runs localmem's own inference (facts extracted and reconciled with the scope's memories: by
rules, or by the store's model when one is configured); a superseded memory is reported as
mem0's DELETE (localmem keeps it, no longer current, for as-of questions).

Both the 1.x calling style (``search(query, user_id=..., limit=...)``) and the 2.x one
(``search(query, filters={"user_id": ...}, top_k=...)``) are accepted. Works on an open
:class:`localmem.Memory` or on a ``Memory.connect`` client (``Memory(memory=client)``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from types import EllipsisType
from typing import Any

from localmem.api import MemoryAPI
from localmem.compat.mem0_filters import expiration, expired, passes, scope_of, split_filters
from localmem.compat.mem0_shapes import history_to_mem0, messages_of, to_mem0
from localmem.errors import InputError, NotFoundError
from localmem.memory import Memory as LocalMemory

#: localmem's event of inference -> mem0's
EVENTS = {"ADD": "ADD", "UPDATE": "UPDATE", "INVALIDATE": "DELETE", "NONE": "NONE"}
#: memories a page of get_all reads
_PAGE = 1000


class Memory:
    """mem0's ``Memory`` over localmem.

    Args:
        memory: the localmem store to use: an open :class:`localmem.Memory` or a
            ``Memory.connect`` client (default: open ``path``).
        path: the store folder when ``memory`` is not given (default: localmem's default store).
    """

    def __init__(self, memory: MemoryAPI | None = None, *, path: str | Path | None = None) -> None:
        self._owned = memory is None
        self.memory: MemoryAPI = memory if memory is not None else LocalMemory.open(path)

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any] | None = None) -> Memory:
        """A Memory from a mem0 configuration: the store folder is ``localmem.path``, else
        ``vector_store.config.path``; the other sections (LLM, embedder, vector store
        provider) have no meaning here and are left alone."""
        config = dict(config_dict or {})
        path = (config.get("localmem") or {}).get("path")
        if path is None:
            path = ((config.get("vector_store") or {}).get("config") or {}).get("path")
        return cls(path=path)

    def close(self) -> None:
        """Close the store if this object opened it."""
        if self._owned and isinstance(self.memory, LocalMemory):
            self.memory.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------------------------
    def add(
        self,
        messages: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        expiration_date: str | date | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """Remember messages: with ``infer`` the facts in them, reconciled with what the scope
        holds; without, each message as it is. Returns ``{"results": [{"id", "memory",
        "event"}...]}`` (UPDATE adds ``previous_memory``).

        Raises:
            InputError: no scope given, or messages that are neither a text, a message nor a
                list of messages; ``memory_type``/``prompt``, which need mem0's model prompts.
        """
        scope = scope_of(user_id, agent_id, run_id, required=True)
        if memory_type is not None or prompt is not None:
            raise InputError(
                "memory_type and prompt steer mem0's language model; localmem has no such prompts"
            )
        chat = messages_of(messages)
        base = dict(metadata or {})
        expires = expiration(expiration_date)
        if expires is not None:  # kept in the metadata, as mem0 keeps it in its payload
            base["expiration_date"] = expires
        if not infer:
            results = []
            for message in chat:
                extra = {"role": message["role"]}
                if message.get("name"):
                    extra["actor_id"] = message["name"]
                item = self.memory.add(
                    message["content"],
                    kind="message",
                    metadata={**base, **extra},
                    infer=False,
                    **scope,
                )
                results.append({"id": item.id, "memory": item.content, "event": "ADD", **extra})
            return {"results": results}
        # mem0 remembers what the user says; an assistant's turns are context, not facts
        said = [m for m in chat if m["role"] == "user"] or chat
        content = [
            {"content": m["content"], **({"name": m["name"]} if m.get("name") else {})}
            for m in said
        ]
        applied = self.memory.infer(content, kind="fact", metadata=base or None, **scope)
        results = []
        for decision in applied:
            event = EVENTS.get(decision.event, decision.event)
            if event == "NONE":
                continue  # mem0 leaves facts it already knew out of the results
            if event == "DELETE" and decision.target is not None:
                results.append(
                    {"id": decision.target.id, "memory": decision.target.content, "event": event}
                )
                if decision.memory.id != decision.target.id:  # the fact that replaced it
                    results.append(
                        {
                            "id": decision.memory.id,
                            "memory": decision.memory.content,
                            "event": "ADD",
                        }
                    )
                continue
            entry = {"id": decision.memory.id, "memory": decision.memory.content, "event": event}
            if event == "UPDATE" and decision.target is not None:
                entry["previous_memory"] = decision.target.content
            results.append(entry)
        return {"results": results}

    def update(
        self,
        memory_id: str,
        data: str | None = None,
        *,
        text: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        expiration_date: str | date | EllipsisType | None = ...,  # ...: left as it is
    ) -> dict[str, str]:
        """Change a memory's text (``text``, or ``data`` as mem0 1.x names it), merge metadata
        into its own, set or clear (None) its expiration date.

        Raises:
            NotFoundError: no such memory.
            InputError: nothing to change given.
        """
        new_text = text if text is not None else data
        if new_text is None and metadata is None and expiration_date is ...:
            raise InputError("give the new text, metadata or an expiration_date")
        merged = None
        if metadata is not None or expiration_date is not ...:
            merged = {**self.memory.get(memory_id).metadata, **(metadata or {})}
            if expiration_date is not ...:
                merged.pop("expiration_date", None)
                if expiration_date is not None:
                    merged["expiration_date"] = expiration(expiration_date)
        self.memory.update(memory_id, content=new_text, metadata=merged)
        return {"message": "Memory updated successfully!"}

    def delete(self, memory_id: str) -> dict[str, str]:
        """Delete one memory (hidden from search and lists; its history stays).

        Raises:
            NotFoundError: no such memory.
        """
        self.memory.delete(memory_id)
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, str]:
        """Delete every memory of a scope, in one unit (localmem's ``delete_all``).

        Raises:
            InputError: no scope given (``reset`` deletes everything).
        """
        scope = scope_of(user_id, agent_id, run_id, required=False)
        if not scope:
            raise InputError(
                "at least one of user_id, agent_id, run_id is required; reset() deletes "
                "every memory"
            )
        self.memory.delete_all(**scope)
        return {"message": "Memories deleted successfully!"}

    def reset(self) -> None:
        """Forget every memory of the store for good (localmem's ``purge_all``: the texts and
        vectors are erased, tombstones remain)."""
        self.memory.purge_all(everything=True)

    # -- reading ---------------------------------------------------------------------------------
    def get(self, memory_id: str) -> dict[str, Any] | None:
        """One memory in mem0's shape, or None when there is none (or it was deleted)."""
        try:
            return to_mem0(self.memory.get(memory_id))
        except NotFoundError:
            return None

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int | None = None,
        top_k: int | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """A scope's memories, newest first: ``{"results": [...]}``.

        Raises:
            InputError: no scope given, or a filter with operators.
        """
        scope, plain, tree = split_filters(user_id, agent_id, run_id, filters)
        n = _limit(limit, top_k)
        results: list[dict[str, Any]] = []
        offset = 0
        while len(results) < n:
            page = self.memory.list(
                user_id=scope.get("user_id"),
                agent_id=scope.get("agent_id"),
                session_id=scope.get("session_id"),
                metadata=plain or None,
                limit=_PAGE,
                offset=offset,
            )
            results += [
                to_mem0(item)
                for item in page
                if not expired(item) and passes(item.metadata or {}, tree)
            ]
            if len(page) < _PAGE:
                break
            offset += _PAGE
        del results[n:]
        return {"results": results}

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int | None = None,
        top_k: int | None = None,
        filters: Mapping[str, Any] | None = None,
        threshold: float | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """The memories of a scope that answer a query, best first, each with its ``score``
        (localmem's default search pipeline; ``threshold`` drops lower scores).

        Raises:
            InputError: no scope given, an empty query, or a filter with operators.
        """
        scope, plain, tree = split_filters(user_id, agent_id, run_id, filters)
        if not isinstance(query, str) or not query.strip():
            raise InputError("the query must be a non-empty text")
        n = _limit(limit, top_k)
        result = self.memory.search(
            query,
            # a filter the store cannot apply itself is applied to a larger pool of hits
            k=n if not tree else min(1000, n * 10),
            user_id=scope.get("user_id"),
            agent_id=scope.get("agent_id"),
            session_id=scope.get("session_id"),
            metadata=plain or None,
        )
        hits = [
            to_mem0(hit.memory, score=hit.score)
            for hit in result.hits
            if (threshold is None or hit.score >= threshold)
            and not expired(hit.memory)
            and passes(hit.memory.metadata or {}, tree)
        ][:n]
        return {"results": hits}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """A memory's changes, oldest first, in mem0's shape (``old_memory``, ``new_memory``,
        ``event``, ``is_deleted``...).

        Raises:
            NotFoundError: no such memory.
        """
        item = self.memory.get(memory_id, include_deleted=True)
        return history_to_mem0(item, self.memory.history(item.id))


def _limit(limit: int | None, top_k: int | None) -> int:
    n = limit if limit is not None else top_k if top_k is not None else 100
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"limit must be a positive integer, not {n!r}")
    return min(n, 1000)


class AsyncMemory:
    """mem0's ``AsyncMemory``: :class:`Memory`'s methods as coroutines, each run in a worker
    thread (localmem's calls block); same arguments, same results.

    Args:
        memory: as :class:`Memory`'s.
        path: as :class:`Memory`'s.
    """

    def __init__(self, memory: MemoryAPI | None = None, *, path: str | Path | None = None) -> None:
        self.sync = Memory(memory, path=path)

    @classmethod
    async def from_config(cls, config_dict: Mapping[str, Any] | None = None) -> AsyncMemory:
        """As :meth:`Memory.from_config`."""
        made = cls.__new__(cls)
        made.sync = await asyncio.to_thread(Memory.from_config, config_dict)
        return made

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.sync, name)
        if name.startswith("_") or not callable(method):
            return method

        async def run(*args: Any, **kwargs: Any) -> Any:
            return await asyncio.to_thread(method, *args, **kwargs)

        run.__name__ = name
        run.__doc__ = method.__doc__
        return run
