"""Model-free abstraction: steps from a session's thoughts, and instance specifics stripped.

Pure text functions, no I/O. A thought is split into sentences; a sentence is a *step* when,
after discourse markers and a subject are removed ("First, I ...", "Let's ...", "We then ..."),
it starts with an action verb (base form, past tense or gerund, turned into the imperative).
Sentences that report a dead end ("did not help", "ruled out") are left out, as the seed asks;
a thought with no action sentence contributes a "Check whether ..." step made from its finding.

:func:`abstract_text` replaces what is specific to one instance (quoted values, file names,
paths, identifiers, field names, numbers, ids) with placeholders; HTTP status codes next to
"error"/"status"/"return" are kept, because they name a class of failure, not an instance.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: action verbs in their base form; past tense and gerunds are mapped onto these
ACTION_VERBS = _words(
    """
    add adjust align analyse analyze apply ask assert assess audit avoid batch benchmark bisect
    break build bump cache call catch change check choose clarify clean collect compare compute
    confirm consider convert copy count create debug decide decouple deduplicate define delete
    deploy describe design detect determine diff document draft drop enable enforce ensure
    estimate evaluate examine expose extract filter find fix flag gather generalise generalize
    group guard handle identify implement import index inject inline insert inspect instrument
    introduce invalidate investigate isolate keep limit list load locate lock log look make map
    mark measure merge migrate mock model monitor move name normalise normalize note outline
    parameterise parameterize parse patch pick pin plan prefer prepare profile propose prototype
    prune put query raise read record reduce refactor register reject release remove rename
    reorder replace replay reproduce request require rerun research reset restructure retry
    return reuse review revert rewrite roll route run sanitise sanitize scan search separate
    serialise serialize set shard simplify sketch skip sort specify split stage start stop store
    stub summarise summarize swap test throttle time trace track translate trim try update
    upgrade use validate verify version wrap write
    """
)

_IRREGULAR_PAST = {
    "wrote": "write",
    "written": "write",
    "found": "find",
    "ran": "run",
    "made": "make",
    "built": "build",
    "chose": "choose",
    "chosen": "choose",
    "broke": "break",
    "kept": "keep",
    "took": "take",
    "put": "put",
    "set": "set",
    "split": "split",
    "read": "read",
    "caught": "catch",
    "began": "start",
    "did": "do",
}

_LEADING = re.compile(
    r"^(?:(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|then|next|finally|lastly|now|so|ok(?:ay)?|"
    r"after that|afterwards|also|and|step \d+|to start|to begin)\b[,:]?\s*)+",
    re.IGNORECASE,
)
_SUBJECT = re.compile(
    r"^(?:(?:i|we)(?:'ll|'d| will| should| need to| must| can| could| have to| want to|"
    r"'m going to| am going to|'re going to| are going to| then| also| first| now| finally)*"
    r"|let's|let me|let us|need to|going to|we'll|i'll)\s+",
    re.IGNORECASE,
)
_DEAD_END = re.compile(
    r"\b(?:did(?:n't| not) (?:help|work|fix|change)|does(?:n't| not) (?:help|work)|dead end|"
    r"red herring|not the (?:cause|problem|issue)|ruled? out|was wrong|wrong (?:guess|lead)|"
    r"still (?:fails|failing|broken|500)|no luck|gave up|abandon)",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+|\s+-\s+(?=[A-Z])|:\s+(?=\d)")
_CLAUSE_THEN = re.compile(r",?\s+(?:and\s+)?then\s+", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
_WORD = re.compile(r"[A-Za-z']+")

MAX_STEP_CHARS = 200


@dataclass(frozen=True)
class Step:
    """One extracted step: the imperative sentence and how sure the extraction is."""

    text: str
    thought: int  # index of the thought it came from
    score: float  # 1.0 imperative, 0.9 after a subject or marker, 0.8 past tense, 0.3 finding


def sentences(text: str) -> list[str]:
    """Sentences and list items of a thought (a ``then`` joining two actions splits too)."""
    out = []
    for raw in _SENTENCE_END.split(text.strip()):
        raw = _BULLET.sub("", raw).strip().rstrip(".;!").strip()
        for part in _CLAUSE_THEN.split(raw):
            part = part.strip(" ,")
            if part:
                out.append(part)
    return out


def base_verb(word: str) -> str | None:
    """The base form of an action verb (``reproduced`` -> ``reproduce``), or None."""
    w = word.lower().strip("'")
    if w in ACTION_VERBS:
        return w
    if w in _IRREGULAR_PAST:
        return _IRREGULAR_PAST[w]
    candidates: list[str] = []
    if w.endswith("ied"):
        candidates.append(w[:-3] + "y")
    if w.endswith("ed"):
        candidates += [w[:-1], w[:-2]]
        if len(w) > 4 and w[-3] == w[-4]:
            candidates.append(w[:-3])  # logged -> log
    if w.endswith("ing"):
        candidates += [w[:-3], w[:-3] + "e"]
        if len(w) > 5 and w[-4] == w[-5]:
            candidates.append(w[:-4])  # logging -> log
    if w.endswith("s") and not w.endswith("ss"):
        candidates += [w[:-1], w[:-2] if w.endswith("es") else w[:-1]]
    return next((c for c in candidates if c in ACTION_VERBS), None)


def as_step(sentence: str) -> tuple[str, float] | None:
    """The sentence as an imperative step with its score, or None when it is not an action."""
    text = sentence.strip()
    stripped = _SUBJECT.sub("", _LEADING.sub("", text)).strip()
    changed = stripped != text
    words = stripped.split(maxsplit=1)
    if not words:
        return None
    verb = base_verb(words[0])
    if verb is None:
        return None
    rest = words[1] if len(words) > 1 else ""
    if not rest:
        return None  # a lone verb ("Done", "Fixed") says nothing reusable
    first = words[0].lower()
    score = 1.0 if first == verb and not changed else (0.8 if first != verb else 0.9)
    return f"{verb.capitalize()} {rest}", score


def is_dead_end(sentence: str) -> bool:
    """Whether a sentence reports something that did not work (left out of the steps)."""
    return bool(_DEAD_END.search(sentence))


def extract_steps(thoughts: Sequence[str], *, max_steps: int = 8) -> list[Step]:
    """The steps of a session, in the order of its thoughts.

    Each thought gives its action sentences (dead ends skipped); a thought with none gives one
    "Check whether ..." step from its first finding of four or more words. Near-duplicates keep
    the first. When there are more than ``max_steps``, the least certain ones go (order kept).
    """
    steps: list[Step] = []
    for i, thought in enumerate(thoughts):
        found = []
        parts = sentences(thought)
        for sentence in parts:
            if is_dead_end(sentence):
                continue
            step = as_step(sentence)
            if step:
                found.append(Step(_clip(step[0]), i, step[1]))
        if not found:
            finding = next((s for s in parts if len(s.split()) >= 4 and not is_dead_end(s)), None)
            if finding:
                found.append(Step(_clip(f"Check whether {_lower_first(finding)}"), i, 0.3))
        steps += found
    steps = _dedupe(steps)
    if len(steps) > max_steps:
        keep = sorted(range(len(steps)), key=lambda j: (-steps[j].score, j))[:max_steps]
        steps = [steps[j] for j in sorted(keep)]
    return steps


_CAUSE = re.compile(
    r"\b(?:came from|caused by|because|root cause|turned out|the (?:real )?(?:problem|issue|cause) "
    r"(?:was|is)|actually|instead of|missed|forgot|overlooked|should have)\b",
    re.IGNORECASE,
)


def dead_ends(thoughts: Sequence[str]) -> list[str]:
    """The sentences of the thoughts that report a dead end, in order."""
    return [s for t in thoughts for s in sentences(t) if is_dead_end(s)]


def failure_cause(thoughts: Sequence[str]) -> str | None:
    """What a failed attempt says went wrong: its last sentence naming a cause ("came from",
    "because", "turned out"), else its last dead end, else None."""
    parts = [s for t in thoughts for s in sentences(t)]
    causes = [s for s in parts if _CAUSE.search(s)]
    if causes:
        return causes[-1]
    ends = [s for s in parts if is_dead_end(s)]
    return ends[-1] if ends else None


def _dedupe(steps: list[Step]) -> list[Step]:
    kept: list[Step] = []
    seen: list[set[str]] = []
    for step in steps:
        words = {w.lower() for w in _WORD.findall(step.text)}
        if any(_jaccard(words, other) >= 0.7 for other in seen):
            continue
        kept.append(step)
        seen.append(words)
    return kept


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def _lower_first(text: str) -> str:
    first = text.split(maxsplit=1)[0] if text.split() else ""
    # keep acronyms and identifiers as they are ("API", "UserService")
    if len(first) > 1 and (first.isupper() or any(c.isupper() for c in first[1:])):
        return text
    return text[:1].lower() + text[1:]


def _clip(text: str, limit: int = MAX_STEP_CHARS) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


# -- stripping instance specifics ----------------------------------------------------------------

_FIELD_NOUNS = (
    "field|column|attribute|property|param|parameter|key|argument|header|flag|variable|"
    "setting|option|table|endpoint|route|method|function|class|module|service"
)
_NOT_A_NAME = _words(
    """a an the this that these those each every any some one no new old same other missing
    required optional null empty invalid wrong given specific single whole entire primary foreign
    api config main public private first last next previous another which its their our my your
    his her call http rest unit"""
)
_STATUS_CONTEXT = re.compile(
    r"(?:\b(?:return(?:s|ed|ing)?|http|status|a|an|with|still|got|gets|gives)\s+[1-5]\d\d\b)|"
    r"(?:\b[1-5]\d\d\s+(?:error|errors|status|response|responses|code|bad|not found|internal))",
    re.IGNORECASE,
)

_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"https?://\S+|\bwww\.\S+"), "<url>"),
    (re.compile(r"`[\w.:/()-]+`"), "<identifier>"),
    (re.compile(r"`[^`]+`"), "<code>"),
    (re.compile(r"\"[^\"]+\"|“[^”]+”|(?<!\w)'[^'\n]+'(?!\w)"), "<value>"),
    (
        re.compile(
            r"(?<![\w/])(?:~?/)?(?:[\w.-]+/)*[\w-]+\.(?:py|pyi|js|mjs|ts|tsx|jsx|java|kt|go|rs|rb|php|c|h|"
            r"cc|cpp|hpp|cs|swift|json|ya?ml|toml|ini|cfg|conf|csv|tsv|sql|md|rst|txt|log|html|"
            r"css|scss|sh|bash|env|lock|xml|proto|tf|dockerfile)\b",
            re.IGNORECASE,
        ),
        "<file>",
    ),
    (re.compile(r"(?<![\w<])(?:~|\.{1,2})?/(?:[\w.-]+/)*[\w.-]+"), "<path>"),
    (
        re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I),
        "<id>",
    ),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b"), "<id>"),
    (re.compile(r"\b[A-Za-z_][\w]*\s*(?:==|=|:=)\s*[^\s,;)]+"), "<field>=<value>"),
    (re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?"), "<identifier>"),
    (re.compile(r"\b\w+\(\)"), "<identifier>"),
    (re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"), "<identifier>"),
    (re.compile(r"\b[a-z]+(?:[A-Z][a-z0-9]*)+\b"), "<identifier>"),
    (re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b"), "<identifier>"),
    (re.compile(r"\bv?\d+\.\d+(?:\.\d+)+\b"), "<version>"),
]
_NUMBER = re.compile(r"(?<![\w<])\d+(?:[.,]\d+)?(?:%|ms|s|kb|mb|gb|k|m)?(?![\w>])", re.I)
_FIELD_NAME = re.compile(rf"\b([A-Za-z_][\w-]*)\s+({_FIELD_NOUNS})s?\b", re.IGNORECASE)

#: placeholders in plain words, for text that is embedded (a trigger reads like a task)
_NATURAL = [
    (re.compile(r"<number>-\w+\s+"), ""),  # "a <number>-line function" -> "a function"
    # after a determiner or adjective the placeholder only named the thing: drop it
    (
        re.compile(
            r"\b(the|a|an|this|that|each|every|its|null|missing|empty|required|new)\s+"
            r"<(?:field|identifier|code|value)>\s+(?=[a-z])",
            re.I,
        ),
        r"\1 ",
    ),
    (re.compile(r"<field>\s+(" + _FIELD_NOUNS + r")s?\b", re.I), r"a \1"),
    (re.compile(r"<field>=<value>"), "a field set to a value"),
    (re.compile(r"<file>"), "a file"),
    (re.compile(r"<path>"), "a path"),
    (re.compile(r"<url>"), "a URL"),
    (re.compile(r"<identifier>"), "an identifier"),
    (re.compile(r"<code>"), "some code"),
    (re.compile(r"<value>"), "a value"),
    (re.compile(r"<id>"), "an id"),
    (re.compile(r"<version>"), "a version"),
    (re.compile(r"<number>"), "a number"),
    (re.compile(r"<field>"), "a field"),
]


def abstract_text(text: str) -> str:
    """``text`` with instance specifics replaced by placeholders (``<field>``, ``<file>``, ...)."""
    out = text
    for pattern, repl in _RULES:
        out = pattern.sub(repl, out)
    out = _FIELD_NAME.sub(_field_repl, out)
    kept = {m.span() for m in _STATUS_CONTEXT.finditer(out)}
    out = _NUMBER.sub(lambda m: m.group(0) if _inside(m.span(), kept) else "<number>", out)
    return " ".join(out.split())


def natural(text: str) -> str:
    """Placeholders as plain words, for text that is embedded and read by people."""
    out = text
    for pattern, repl in _NATURAL:
        out = pattern.sub(repl, out)
    return " ".join(out.split())


def placeholders(text: str) -> list[str]:
    """The placeholders in a text, in order (``["<field>", "<number>"]``)."""
    return re.findall(r"<(?:field|file|path|url|identifier|code|value|id|version|number)>", text)


def _field_repl(match: re.Match[str]) -> str:
    name, noun = match.group(1), match.group(2)
    if name.lower() in _NOT_A_NAME or name.startswith("<") or name.lower() in _FIELD_NOUNS:
        return match.group(0)
    return f"<field> {noun}"


def _inside(span: tuple[int, int], spans: set[tuple[int, int]]) -> bool:
    return any(a <= span[0] and span[1] <= b for a, b in spans)
