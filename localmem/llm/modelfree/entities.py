"""Model-free entity and relation extraction: seed 003's rules (see :mod:`localmem.entity_rules`).

The phenomenon names the rules tag come from ``config.conversation.phenomena``; the output is
cut to what the ``entities`` schema admits (names of at most 60 characters, ten of each).
"""

from __future__ import annotations

from typing import Any

from localmem.entity_rules import extract_rules

MAX_ITEMS = 10
MAX_NAME = 60
MAX_RELATION = 30


def extract_graph(text: str, *, phenomena: tuple[str, ...] = ()) -> dict[str, Any]:
    """Entities and relations of ``text`` as plain data in the shape of the task's output."""
    found = extract_rules(text, phenomena=phenomena)
    entities = [
        {"name": name, "type": etype} for name, etype, _ in found.entities if len(name) <= MAX_NAME
    ][:MAX_ITEMS]
    kept = {e["name"] for e in entities}
    relations = [
        {"source": s, "relation": r[:MAX_RELATION], "target": t}
        for s, r, t in found.relations
        if s in kept and t in kept
    ][:MAX_ITEMS]
    return {"entities": entities, "relations": relations}
