"""A small sample shipped with localmem, so a new user sees a living store on the first run."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from localmem.memory import Memory

#: thought sessions on software topics: (title, outcome, thoughts)
SESSIONS: list[tuple[str, str, list[str]]] = [
    (
        "API rate limiting for the public endpoints",
        "success",
        [
            "Clients hammer /search during business hours; we need per-client rate limits.",
            "Fixed one-minute buckets let a client send twice the limit across a boundary.",
            "Redis can hold the counters so every API node sees the same numbers.",
            "Return 429 with a Retry-After header so well-behaved clients back off.",
            "The rate limiter should use a sliding window, not fixed buckets.",
        ],
    ),
    (
        "Debug: API returns 500 when the user field is null",
        "success",
        [
            "Reproduce with a POST whose user field is null: the server answers 500.",
            "The stack trace ends in the serializer, which calls user.name unguarded.",
            "Add a validation step that rejects a null user with a 400 and a clear message.",
            "Write a regression test that posts a null user and expects the 400.",
        ],
    ),
    (
        "Speed up the orders dashboard query",
        "success",
        [
            "The dashboard query scans the whole orders table: 4 seconds at peak.",
            "EXPLAIN shows no index on orders.user_id, which every filter uses.",
            "A composite index on (user_id, created_at) brings it to 40 ms.",
        ],
    ),
]

#: sessions abstracted into a procedure (Mem^p)
ABSTRACTED = {"Debug: API returns 500 when the user field is null"}

#: a short conversation between two friends, one message per turn: (speaker, text, date)
CONVERSATION: list[tuple[str, str, str]] = [
    (
        "Caroline",
        "I went to an LGBTQ support group yesterday and it was so powerful.",
        "2023-05-08",
    ),
    ("Melanie", "That's great! I painted a sunrise over the lake last weekend.", "2023-05-08"),
    ("Caroline", "I'm thinking of studying counseling so I can help others.", "2023-05-08"),
    ("Melanie", "We took the kids camping at the beach last Saturday.", "2023-06-27"),
    ("Caroline", "I adopted a puppy named Oscar this week!", "2023-06-27"),
]


def load_demo(memory: Memory) -> dict[str, int]:
    """Fill an empty store with the sample; returns what was added.

    Every mechanism this build has takes part: attributes are mined and related memories
    evolve (links, contexts) as the sample is written, and one session becomes a procedure.
    """
    mechanisms = _mechanisms(memory)
    n_thoughts = n_procedures = 0
    for title, outcome, thoughts in SESSIONS:
        session = memory.start_session(title)
        for text in thoughts:
            memory.add_thought(session.id, text, **mechanisms)
            n_thoughts += 1
        abstract = title in ABSTRACTED
        memory.complete_session(session.id, outcome=outcome, abstract=abstract)
        n_procedures += abstract
    memory.add_many(
        [
            {
                "content": f"{speaker}: {text}",
                "event_time": f"{date}T12:00:00+00:00",
                "metadata": {"speaker": speaker},
            }
            for speaker, text, date in CONVERSATION
        ],
        kind="message",
        user_id="caroline-melanie",
        **mechanisms,
    )
    return {
        "sessions": len(SESSIONS),
        "thoughts": n_thoughts,
        "messages": len(CONVERSATION),
        "procedures": n_procedures,
    }


class _Mechanisms(TypedDict, total=False):
    """The keyword options of ``add`` that switch on a write-time mechanism."""

    mine: str
    evolve: bool


def _mechanisms(memory: Memory) -> _Mechanisms:
    """Options of ``add`` for the write-time mechanisms the store has (mining, evolution)."""
    offered = set(memory.add_options)
    options: _Mechanisms = {}
    if "mine" in offered:
        options["mine"] = "inline"
    if "evolve" in offered:
        options["evolve"] = True
    return options


DEMO_QUERIES = [
    "How should we handle rate limit errors in the API?",
    "why was the dashboard slow?",
    "When did Melanie go camping?",
]
