"""A deterministic generator of short, varied memory-like texts for scale benchmarks.

The texts mimic what agents store (notes, chat turns, facts about people, code work) with a
vocabulary large enough that BM25 document frequencies look natural, and a seed so every run
(and every system compared) sees the same texts.
"""

from __future__ import annotations

import random
from collections.abc import Iterator


def _items(text: str, sep: str | None = "|") -> list[str]:
    """Phrases of a long literal: split on ``sep`` (None: whitespace), spaces normalised."""
    return [" ".join(p.split()) for p in text.split(sep) if p.strip()]


_NAMES = _items(
    """Ana Ben Carla Dev Elif Farid Gwen Hiro Ines Jonas Kemal Lena Mateo Nadia Omar Priya
Quinn Rosa Sami Tara Umar Vera Wen Xavier Yara Zane Alice Bruno Chen Dara Emil Fatima Goran
Hana Ivan Jade Kofi Lucia Milan Noor Oskar Pia Rafael Sofia Tomas Uma Viktor Wanda Yusuf Zoe
Caroline Melanie Gina Jon Joanna Nate Tim John Maria Audrey Andrew Evan Sam Deborah Jolene""",
    None,
)
_PLACES = _items(
    """Lisbon | Oslo | Nairobi | Lima | Hanoi | Quito | Tbilisi | Austin | Denver | Porto |
Krakow | Seoul | Osaka | Cairo | Dakar | Perth | Leeds | Bergen | Tallinn | Havana | Bogota |
Accra | Muscat | Riga | Graz | Turin | Basel | Cork | the beach | the lake | the mountains |
the office | the library | the gym | the park | the studio"""
)
_ACTIVITIES = _items(
    """went hiking | started a pottery class | adopted a dog | painted a sunrise |
finished a marathon | moved to a new flat | joined a book club | learned to surf | visited family |
fixed the leaking tap | planted tomatoes | baked sourdough bread | took the kids camping |
changed jobs | started therapy | bought a used bike | watched a jazz concert | volunteered at a
shelter | signed up for a coding bootcamp | went to a support group | organised a picnic |
tried rock climbing | repainted the kitchen | read three novels | got a promotion"""
)
_TECH_SUBJECTS = _items(
    """the rate limiter | the cache layer | the login flow | the billing service | the search
index | the data pipeline | the mobile client | the deployment script | the auth middleware |
the orders table | the message queue | the retry policy | the feature flag | the CI runner |
the logging setup | the payment webhook | the session store | the GraphQL schema | the cron job"""
)
_TECH_FINDINGS = _items(
    """times out under load | leaks memory after a day | returns 500 when a field is null |
needs an index on user_id | should use a sliding window | double-charges on retries | drops
messages when the broker restarts | is slow because of N+1 queries | logs secrets by mistake |
breaks on daylight saving time | needs exponential backoff | should move to Redis | has a race
condition on writes | fails on unicode names | must validate input earlier | needs a circuit
breaker | should be split into two services | is blocked by a stale lock"""
)
_FEELINGS = _items(
    """it was exhausting but worth it | I felt really proud | it was more fun than expected |
honestly it was a bit scary | the whole family loved it | I want to do it again soon | it helped me
relax | I learned a lot about myself | it rained the whole time | we laughed all evening"""
)
_WHEN = _items(
    """yesterday | last weekend | last Saturday | two weeks ago | this morning | in May | last
summer | on Friday | a month ago | over the holidays | last night | earlier this year"""
)


def synthetic_texts(n: int, *, seed: int = 13) -> Iterator[str]:
    """``n`` distinct short texts (about 10-25 words each), the same for the same seed."""
    rng = random.Random(seed)
    seen: set[str] = set()
    i = 0
    while len(seen) < n:
        i += 1
        kind = rng.random()
        name, other = rng.sample(_NAMES, 2)
        if kind < 0.45:
            text = (
                f"{name}: I {rng.choice(_ACTIVITIES)} in {rng.choice(_PLACES)} "
                f"{rng.choice(_WHEN)}, {rng.choice(_FEELINGS)}."
            )
        elif kind < 0.8:
            text = (
                f"{name} noticed that {rng.choice(_TECH_SUBJECTS)} {rng.choice(_TECH_FINDINGS)}; "
                f"{other} will look at it {rng.choice(_WHEN)} (ticket {rng.randint(100, 9999)})."
            )
        else:
            text = (
                f"{name} told {other} that they {rng.choice(_ACTIVITIES)} {rng.choice(_WHEN)} "
                f"near {rng.choice(_PLACES)}, and {rng.choice(_FEELINGS)}."
            )
        if i % 7 == 0:
            text += f" Note {i}."
        if text not in seen:  # distinct texts, so no system gets a free ride from a cache
            seen.add(text)
            yield text
