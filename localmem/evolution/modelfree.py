"""Model-free evolution: link by shared key phrases and similarity, a templated context.

Deterministic and pure: the same new memory, neighbour, similarity and shared phrases always
give the same decision. The rules:

- below ``min_similarity`` nothing happens (the neighbour search already drops those);
- a neighbour is **linked** when it shares a key phrase with the new memory, or when it is very
  similar (``link_similarity``) even without one;
- a linked neighbour's context is **updated** only when a shared phrase can name the connection:
  a line ``Linked to a later note on "<phrases>": <the new memory, shortened>`` is appended to
  its context (the oldest such lines go first when the context would exceed its limit; a context
  a person wrote is never cut).
"""

from __future__ import annotations

from dataclasses import dataclass

#: every line model-free evolution writes into a context starts with this
MARK = "Linked to a later note"


@dataclass(frozen=True)
class Rules:
    """The thresholds of the model-free decision (from :class:`EvolutionConfig`)."""

    min_similarity: float = 0.3
    link_similarity: float = 0.55
    max_context_chars: int = 400
    snippet_chars: int = 120


@dataclass(frozen=True)
class Decision:
    """What evolution does to one neighbour."""

    link: bool
    link_reason: str
    update: bool
    context: str | None  # the new context when ``update``


def shorten(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``limit`` characters."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",.;:") + "…"


def connection_line(new_content: str, shared: list[str], rules: Rules) -> str:
    """The templated context line naming the connection."""
    names = ", ".join(f'"{p}"' for p in shared)
    return f"{MARK} on {names}: {shorten(new_content, rules.snippet_chars)}"


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
    new_content: str,
    neighbour_context: str | None,
    *,
    similarity: float,
    shared: list[str],
    rules: Rules,
) -> Decision:
    """Link and (maybe) re-contextualise one neighbour, from similarity and shared phrases."""
    if similarity < rules.min_similarity:
        return Decision(False, "", False, None)
    if shared:
        names = ", ".join(f'"{p}"' for p in shared)
        reason = f"shares {names} (similarity {similarity:.2f})"
        line = connection_line(new_content, shared, rules)
        context = merged_context(neighbour_context, line, rules.max_context_chars)
        changed = context != (neighbour_context or "")
        return Decision(True, reason, changed, context if changed else None)
    if similarity >= rules.link_similarity:
        return Decision(True, f"similar (similarity {similarity:.2f})", False, None)
    return Decision(False, "", False, None)
