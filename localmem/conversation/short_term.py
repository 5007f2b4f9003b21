"""The agent's short-term memory: a rolling buffer per conversation, within a token budget.

:class:`ShortTermMemory` holds the latest messages of one conversation; the oldest go first. It
lives in the store (table ``stm_messages``, migration 0040), so a restarted program continues
the conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from localmem.chunking import TokenIndex, tokenizer_for
from localmem.errors import InputError
from localmem.store.db import utcnow
from localmem.store.kernel import HasKernel, Kernel, kernel_of

ROLES = ("user", "assistant", "system")
TRUNCATED = " …"


# -- short-term memory ---------------------------------------------------------------------------
@dataclass(frozen=True)
class StmMessage:
    """One message of a conversation's short-term buffer."""

    role: str
    content: str
    tokens: int
    seq: int
    created_at: datetime


def evictions(tokens: Sequence[int], budget: int) -> int:
    """How many of the oldest messages must go so the rest fit ``budget`` (the newest stays)."""
    total = sum(tokens)
    drop = 0
    while drop < len(tokens) - 1 and total > budget:
        total -= tokens[drop]
        drop += 1
    return drop


def truncate_tokens(text: str, budget: int, tokenizer: Any) -> str:
    """The beginning of ``text`` that fits ``budget`` tokens (marked as cut)."""
    tok = tokenizer_for(tokenizer)
    if tok(text) <= budget:
        return text
    idx = TokenIndex(text, tok)
    keep = max(1, budget - tok(TRUNCATED))
    end = idx.ends[min(keep, len(idx)) - 1] if len(idx) else len(text)
    return text[:end].rstrip() + TRUNCATED


class ShortTermMemory:
    """The rolling buffer of one conversation: at most ``budget_tokens``, oldest evicted first.

    A message longer than the whole budget is kept, cut to the budget.
    """

    def __init__(
        self,
        store: Kernel | HasKernel,
        conversation_id: str,
        *,
        budget_tokens: int = 2000,
        tokenizer: Any,
    ) -> None:
        if not isinstance(conversation_id, str) or not conversation_id.strip():
            raise InputError("a conversation id must be a non-empty string")
        if budget_tokens < 1:
            raise InputError(f"the short-term budget must be positive, not {budget_tokens}")
        self.kernel = kernel_of(store)
        self.db = self.kernel.db
        self.conversation_id = conversation_id
        self.budget_tokens = budget_tokens
        self._count = tokenizer_for(tokenizer)

    def add(self, role: str, content: str, *, now: datetime | None = None) -> list[StmMessage]:
        """Append a message and evict what no longer fits; returns the evicted messages."""
        if role not in ROLES:
            raise InputError(f"unknown role {role!r}; known: {', '.join(ROLES)}")
        if not isinstance(content, str) or not content.strip():
            raise InputError("a message needs text")
        content = truncate_tokens(content, self.budget_tokens, self._count)
        tokens = self._count(content)
        with self.kernel.writing():
            seq = int(
                self.db.scalar(
                    "SELECT coalesce(max(seq), 0) FROM stm_messages WHERE conversation_id = ?",
                    [self.conversation_id],
                )
            )
            self.db.execute(
                "INSERT INTO stm_messages VALUES (?, ?, ?, ?, ?, ?)",
                [self.conversation_id, seq + 1, role, content, tokens, now or utcnow()],
            )
            current = self.messages()
            drop = evictions([m.tokens for m in current], self.budget_tokens)
            if drop:
                self.db.execute(
                    "DELETE FROM stm_messages WHERE conversation_id = ? AND seq <= ?",
                    [self.conversation_id, current[drop - 1].seq],
                )
        return current[:drop]

    def messages(self) -> list[StmMessage]:
        """The buffer, oldest first."""
        rows = self.db.fetchall(
            "SELECT role, content, tokens, seq, created_at FROM stm_messages "
            "WHERE conversation_id = ? ORDER BY seq",
            [self.conversation_id],
        )
        return [StmMessage(*r) for r in rows]

    @property
    def tokens(self) -> int:
        """Tokens the buffer holds now."""
        return int(
            self.db.scalar(
                "SELECT coalesce(sum(tokens), 0) FROM stm_messages WHERE conversation_id = ?",
                [self.conversation_id],
            )
        )

    def clear(self) -> int:
        """Forget the conversation; returns how many messages went."""
        with self.kernel.writing():
            n = int(
                self.db.scalar(
                    "SELECT count(*) FROM stm_messages WHERE conversation_id = ?",
                    [self.conversation_id],
                )
            )
            self.db.execute(
                "DELETE FROM stm_messages WHERE conversation_id = ?", [self.conversation_id]
            )
        return n


def conversations(store: Kernel | HasKernel) -> list[tuple[str, int, int, datetime]]:
    """Every conversation with a buffer: (id, messages, tokens, last message time)."""
    return kernel_of(store).db.fetchall(
        "SELECT conversation_id, count(*), sum(tokens), max(created_at) FROM stm_messages "
        "GROUP BY 1 ORDER BY 4 DESC"
    )
