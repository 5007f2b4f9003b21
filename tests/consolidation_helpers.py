"""Shared data for the consolidation tests: a small two-person conversation in two sessions."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from localmem.consolidation import DERIVED_FROM

START = datetime(2023, 5, 1, 10, tzinfo=timezone.utc)

# (speaker, text, session, day)
CONVERSATION = [
    ("Caroline", "I love painting landscapes with watercolors.", "s1", 0),
    ("Melanie", "I run five kilometres every morning before work.", "s1", 0),
    ("Caroline", "I painted a sunset over the lake with watercolors last weekend.", "s1", 0),
    ("Melanie", "Hey, how are you?", "s1", 0),
    ("Caroline", "My dog Max loves the beach near our house.", "s1", 1),
    ("Melanie", "I signed up for a half marathon in October, so I run every morning now.", "s2", 9),
    ("Caroline", "My watercolor painting class starts again on Monday.", "s2", 9),
    ("Caroline", "I love taking my dog Max to the beach every weekend.", "s2", 10),
    ("Melanie", "Running every morning keeps my head clear before work.", "s2", 10),
    ("Caroline", "I love watercolor painting because it calms me down.", "s2", 11),
]


def _add_conversation(memory, user="u1", rows=CONVERSATION):
    return memory.add_many(
        [
            {
                "content": f"{who}: {text}",
                "session_id": session,
                "event_time": START + timedelta(days=day),
                "metadata": {"speaker": who},
            }
            for who, text, session, day in rows
        ],
        kind="message",
        user_id=user,
    )


def _links(memory, src):
    return memory.store.db.fetchall(
        "SELECT dst FROM links WHERE src = ? AND kind = ? ORDER BY dst", [src, DERIVED_FROM]
    )


def _table_counts(memory):
    db = memory.store.db
    return {
        t: int(db.scalar(f"SELECT count(*) FROM {t}"))
        for t in ("memories", "links", "consolidated", "consolidation_runs", "history")
    }
