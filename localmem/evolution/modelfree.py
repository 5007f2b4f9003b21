"""Model-free evolution: link by shared key phrases and similarity, a templated context.

Deterministic and pure: the same neighbour context, similarity and phrases always give the same
decision. The rules:

- a neighbour is **linked** only when its similarity reaches ``link_similarity``: by default the
  cosine calibrated for the store's embedder on hand-labelled related / unrelated pairs
  (:data:`CALIBRATED`, ``scripts/calibrate_links.py``); shared key phrases say what links
  them but never lower the bar (phrases common in a small store linked unrelated
  notes); the reason names the similarity and the bar;
- a linked neighbour's context is **updated** when the new memory adds key phrases it lacks: the
  line ``Linked to a later note on "<shared phrases>" that adds: "<new phrases>".`` names the
  connection and carries the new memory's vocabulary (as A-Mem's evolved tags and context do),
  so a search in the later note's words finds the older note too. The oldest such lines go
  first when the context would exceed its limit; lines a person wrote are never cut (when they
  alone fill the limit, the neighbour is linked but its context left alone).
"""

from __future__ import annotations

from dataclasses import dataclass

#: every line model-free evolution writes into a context starts with this
MARK = "Linked to a later note"
#: the link similarity calibrated per embedder model (its name before any "+variant") on the
#: dev pairs of scripts/lab/data/links (best balanced accuracy; scripts/calibrate_links.py)
CALIBRATED = {"all-MiniLM-L6-v2": 0.34}
#: the bar for an embedder nothing was calibrated for
UNCALIBRATED = 0.55


def link_similarity_for(embedder_name: str | None, configured: float | None) -> float:
    """The similarity a link needs: the configured one, else the embedder's calibrated one."""
    if configured is not None:
        return configured
    return CALIBRATED.get((embedder_name or "").split("+")[0], UNCALIBRATED)


@dataclass(frozen=True)
class Rules:
    """The thresholds of the model-free decision (from :class:`EvolutionConfig`)."""

    min_similarity: float = 0.3
    link_similarity: float = UNCALIBRATED
    max_context_chars: int = 400


@dataclass(frozen=True)
class Decision:
    """What evolution does to one neighbour."""

    link: bool
    link_reason: str
    update: bool
    context: str | None  # the new context when ``update``


def connection_line(shared: list[str], adds: list[str]) -> str:
    """The templated context line naming the connection and what the later note adds."""
    on = f" on {_quoted(shared)}" if shared else ", similar note"
    return f"{MARK}{on} that adds: {_quoted(adds)}."


def _quoted(phrases: list[str]) -> str:
    return ", ".join(f'"{p}"' for p in phrases)


def merged_context(old: str | None, line: str, limit: int) -> str:
    """``old`` plus ``line``; the oldest evolution lines are dropped to stay within ``limit``.

    Lines a person wrote (not starting with :data:`MARK`) are always kept, even when that means
    going over the limit.
    """
    lines = [x for x in (old or "").split("\n") if x.strip()]
    if line in lines:
        return "\n".join(lines)
    lines.append(line)
    while len("\n".join(lines)) > limit:
        oldest = next((i for i, x in enumerate(lines[:-1]) if x.startswith(MARK)), None)
        if oldest is None:
            break
        del lines[oldest]
    return "\n".join(lines)


def decide(
    neighbour_context: str | None,
    *,
    similarity: float,
    shared: list[str],
    adds: list[str],
    rules: Rules,
) -> Decision:
    """Link and (maybe) re-contextualise one neighbour, from similarity and key phrases.

    Args:
        neighbour_context: the neighbour's context now.
        similarity: cosine similarity of the two memories.
        shared: key phrases both have (rare enough in the store to mean something).
        adds: key phrases of the new memory the neighbour lacks.
        rules: the thresholds.
    """
    bar = max(rules.min_similarity, rules.link_similarity)
    if similarity < bar:
        return Decision(False, "", False, None)
    why = f"similarity {similarity:.2f} >= {bar:.2f}"
    reason = f"shares {_quoted(shared)} ({why})" if shared else f"similar ({why})"
    if not adds:
        return Decision(True, reason, False, None)
    line = connection_line(shared, adds)
    context = merged_context(neighbour_context, line, rules.max_context_chars)
    if len(context) > rules.max_context_chars:  # a person's long context is not crowded
        return Decision(True, reason, False, None)
    changed = context != (neighbour_context or "")
    return Decision(True, reason, changed, context if changed else None)
