"""Reading a fact without a model: which slot it fills, whether it ends a fact, and
its subject, aspect, value and ended value, by classifiers learned from generated data.

Three small learned parts, fitted by ``scripts/train_infer.py`` on sentences that
``scripts/lab/infer_training.py`` generates (slot types x paraphrase frames x values x
subjects) and shipped as ``localmem/infer/data/reading.npz``:

- a slot classifier: a logistic regression over the sentence's embedding (the store's own
  vector, so it costs no extra embedding);
- an ending classifier: a logistic regression over the embedding and a few closed-class
  negation cues ("not", "no longer", "anymore"), so "I don't play tennis anymore" ends a fact;
- a token tagger: a logistic regression over each token's word, shape and neighbours that tags
  it ``S`` (subject), ``A`` (aspect), ``V`` (value), ``X`` (ended value) or ``O``.

The weights were fitted on one embedder's vectors (recorded in the file). A store whose
embedder is another model gets no slot reading (:func:`reader_for` returns None) and the
decision abstains: vectors of another model mean nothing to these weights.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

import numpy as np

from localmem.dates import MONTH_NAMES, SEASONS, WEEKDAY_NAMES

#: tokens as the tagger reads them (the generator uses the same pattern)
TOKEN = re.compile(r"\w+(?:[.'’:/-]\w+)*|[^\w\s]")
#: closed-class words that negate or end (grammar, not a list of phrasings)
NEGATION_CUES = ("not", "n't", "no", "never", "anymore", "longer", "nor", "without", "more")
_SAID_BY = re.compile(r"^\s*[A-Z][\w.'-]*(?: [A-Z][\w.'-]*)?:\s+")
#: the date a relative time was resolved to, appended by the extraction ("(June 2022)")
_RESOLVED = re.compile(r"\s*\([^()]*\)\s*$")
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()  # noqa: SIM905
    )
}
_ARTICLES = frozenset(
    "a an the my our his her their your its this that these those some".split()  # noqa: SIM905
)
_STOP = frozenset(
    (  # noqa: SIM905
        "a an the of to in on at for with and or but so as by from is are am was were be been "
        "it its this that these those there here now then just still also too very really "
        # pronouns, question words and the like: never a value, never a subject of their own
        "i me my you your yours he him his she her hers we us our they them their who whom "
        "what which how why when where each every all both some any much many more most other "
        "such same own being been having do does did done can could would should will shall "
        "may might must not no yes yeah yep ok okay oh wow hey thanks thank please plus"
    ).split()
)
#: the words by which a speaker speaks of themselves (and of those they speak for)
FIRST_PERSON = frozenset("i me my mine myself we us our ours ourselves".split())  # noqa: SIM905
#: third-person subject pronouns: someone the speaker speaks about, not the speaker
THIRD_PERSON = frozenset("he she they".split())  # noqa: SIM905
#: words that say when, not what (the project's date vocabulary: months, weekdays, seasons, and
#: the units of time): a value of a schedule, never of where someone lives or whom they love
#: ("Jake and I broke up in the autumn" names no new partner)
TIME_WORDS = frozenset(
    (
        *MONTH_NAMES,
        *WEEKDAY_NAMES,
        *(f"{d}s" for d in WEEKDAY_NAMES),
        *SEASONS,
        *"day week weekend month year quarter morning afternoon evening night".split(),  # noqa: SIM905
        *"tonight today yesterday tomorrow".split(),  # noqa: SIM905
    )
)
DATA = "reading.npz"
TAGS = ("O", "S", "A", "V", "X")


def shape(token: str) -> str:
    """``Paris`` -> ``Xx``, ``3.12`` -> ``d.d``, ``eu-west-1`` -> ``x-x-d``."""
    out = re.sub(r"[A-Z]+", "X", token)
    out = re.sub(r"[a-z]+", "x", out)
    return re.sub(r"[0-9]+", "d", out)[:8]


def token_features(tokens: Sequence[str]) -> list[list[str]]:
    """The tagger's features of each token: the word, its shape and its neighbours."""
    low = [t.lower() for t in tokens]
    shapes = [shape(t) for t in tokens]
    out = []
    for i, w in enumerate(low):

        def at(j: int, seq: Sequence[str] = low) -> str:
            return seq[j] if 0 <= j < len(seq) else "<none>"

        f = [
            "b",
            f"w={w}",
            f"suf={w[-3:]}",
            f"shape={shapes[i]}",
            f"p1={at(i - 1)}",
            f"p2={at(i - 2)}",
            f"n1={at(i + 1)}",
            f"n2={at(i + 2)}",
            f"p1s={at(i - 1, shapes)}",
            f"n1s={at(i + 1, shapes)}",
            f"p1w={at(i - 1)}|{w}",
        ]
        if i == 0:
            f.append("first")
        if w.endswith(("'s", "’s")):
            f.append("possessive")
        out.append(f)
    return out


def cue_vector(tokens: Sequence[str]) -> np.ndarray:
    """Which negation cues a text has (0/1 each, in :data:`NEGATION_CUES` order)."""
    low = [t.lower() for t in tokens]
    out = np.zeros(len(NEGATION_CUES), np.float32)
    for k, cue in enumerate(NEGATION_CUES):
        if cue == "n't":
            out[k] = any(t.endswith("n't") or t.endswith("n’t") for t in low)
        else:
            out[k] = cue in low
    return out


def speaker_of(text: str) -> str | None:
    """Who said a fact kept as said ("Ann: ..."), or None."""
    said = re.match(r"^\s*([A-Z][\w.'-]*(?: [A-Z][\w.'-]*)?):\s+", text)
    return said.group(1) if said else None


def tokens_of(text: str) -> list[str]:
    """The tokens of a fact, without a leading "Name:" (who said it is not what it says)."""
    return TOKEN.findall(_RESOLVED.sub("", _SAID_BY.sub("", text, count=1)))


def _leading_name(tokens: Sequence[str]) -> bool:
    """Whether a fact opens with a name followed by a word in lower case ("Hugo is...")."""
    return (
        len(tokens) > 1
        and tokens[0].isalpha()
        and tokens[0][:1].isupper()
        and tokens[0] != "I"
        and tokens[1].isalpha()
        and tokens[1].islower()
    )


#: the tokens that end a sentence
_SENTENCE_ENDS = frozenset({".", "!", "?", ";"})


def _addressed(tokens: Sequence[str]) -> list[bool]:
    """Whether each token is a name said to someone: set off by a comma and the end of its
    sentence ("That's tough, Jon.") or opening a sentence before a comma ("Nate, guess what")."""
    ends = _SENTENCE_ENDS
    out = []
    for i, t in enumerate(tokens):
        before = tokens[i - 1] if i > 0 else "."
        after = tokens[i + 1] if i + 1 < len(tokens) else "."
        name = t[:1].isupper() and t.isalpha() and t != "I"
        # ... not the second of two names ("we moved to Austin, Texas.")
        lead = tokens[i - 2] if i > 1 else "."
        opens = i < 3 or tokens[i - 3] in ends
        after_word = before == "," and after in ends and (not lead[:1].isupper() or opens)
        out.append(name and (after_word or (before in ends and after == ",")))
    return out


def _in_question(tokens: Sequence[str]) -> list[bool]:
    """Whether each token belongs to a sentence that ends with a question mark: a question
    ("Should we move the backup to 04:00?", "Remember Teodoro?") states no value."""
    out: list[bool] = []
    start = 0
    for i, t in enumerate(tokens):
        if t in _SENTENCE_ENDS or i == len(tokens) - 1:
            out += [t == "?"] * (i + 1 - start)
            start = i + 1
    return out


def normal_terms(words: Sequence[str]) -> frozenset[str]:
    """Words of a span as compared: lower case, articles and stop words aside, numbers as
    digits, a possessive's ``'s`` and a contraction dropped, a lower-case plural singular."""
    out = set()
    for word in words:
        w = re.sub(r"['’](?:s|re|m|ve|ll|d)$", "", word.lower())
        w = _NUMBER_WORDS.get(w, w)
        if w in _ARTICLES or w in _STOP or not re.search(r"\w", w):
            continue
        plural = len(w) > 3 and w.endswith("s") and not w.endswith("ss") and word.islower()
        out.add(w[:-1] if plural else w)  # "cats" is "cat"; a name ("Paris") stays whole
    return frozenset(out)


@dataclass(frozen=True)
class Reading:
    """What a fact says, as the model-free reader sees it."""

    slot: str
    slot_p: float
    ending_p: float
    subject: frozenset[str] = frozenset()
    aspect: frozenset[str] = frozenset()
    value: frozenset[str] = frozenset()
    ended: frozenset[str] = frozenset()
    #: the value's distinctive words: names (capitalised past the first word) and numbers
    core: frozenset[str] = frozenset()
    #: every word of the fact, compared the same way
    words: frozenset[str] = frozenset()
    #: the capitalised word a fact opens with when it goes on in lower case ("Lars smokes
    #: ten a day"): likely whom it is about where the tagger read no subject
    lead: frozenset[str] = frozenset()
    #: the words of the fact written with a capital (names, and a sentence's first word)
    capitalised: frozenset[str] = frozenset()
    #: the words of the fact that say when (:data:`TIME_WORDS`), as compared
    times: frozenset[str] = frozenset()
    #: whether it has a negation cue ("not", "no longer", "anymore": :data:`NEGATION_CUES`)
    negated: bool = False
    #: whether it speaks in the first person ("I", "we", "us", "our"): its speaker is among
    #: whom it is about, whatever else the tagger took for its subject
    first_person: bool = False
    #: whether it speaks of someone as "he", "she" or "they": whom it means is not known here,
    #: but it is not the speaker
    third_person: bool = False
    probs: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)

    def p(self, slot_index: int) -> float:
        """The probability of one slot (by its index in the reader's ``slots``)."""
        return float(self.probs[slot_index]) if self.probs.size else 0.0


def tag_scores(
    tokens: Sequence[str], vocab: dict[str, int], weights: np.ndarray, bias: np.ndarray
) -> np.ndarray:
    """The tagger's score of each tag for each token (tokens x tags): the bias plus the
    weights of the token's features (:func:`token_features`) that the vocabulary knows."""
    scores = np.tile(bias, (len(tokens), 1))
    for i, feats in enumerate(token_features(tokens)):
        idx = [vocab[f] for f in feats if f in vocab]
        if idx:
            scores[i] += weights[idx].sum(axis=0)
    return scores


class Reader:
    """The shipped classifiers (see the module docstring)."""

    def __init__(self, data: dict[str, np.ndarray]) -> None:
        meta = json.loads(str(data["meta"]))
        self.meta = meta
        self.embedder: str = meta["embedder"]
        self.dim: int = int(meta["dim"])
        self.slots: tuple[str, ...] = tuple(meta["slots"])
        self.single_valued: frozenset[str] = frozenset(meta["single_valued"])
        self.slot_w = data["slot_w"].astype(np.float32)
        self.slot_b = data["slot_b"].astype(np.float32)
        self.end_w = data["end_w"].astype(np.float32)
        self.end_b = float(data["end_b"])
        self.tag_w = data["tag_w"].astype(np.float32)  # (features, tags)
        self.tag_b = data["tag_b"].astype(np.float32)
        self.tags: tuple[str, ...] = tuple(meta["tags"])
        self.vocab = {f: i for i, f in enumerate(meta["features"])}
        self._cache: dict[str, Reading] = {}
        self._lock = threading.Lock()

    def slot_probs(self, vectors: np.ndarray) -> np.ndarray:
        """Slot probabilities of each row of ``vectors`` (softmax of the linear scores)."""
        z = np.atleast_2d(vectors) @ self.slot_w.T + self.slot_b
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def ending_p(self, vector: np.ndarray, tokens: Sequence[str]) -> float:
        """How likely the fact ends (negates) a fact rather than states one."""
        x = np.concatenate([np.asarray(vector, np.float32), cue_vector(tokens)])
        return float(1.0 / (1.0 + np.exp(-(x @ self.end_w + self.end_b))))

    def tag(self, tokens: Sequence[str]) -> list[str]:
        """One tag per token (:data:`TAGS`)."""
        if not tokens:
            return []
        scores = tag_scores(tokens, self.vocab, self.tag_w, self.tag_b)
        return [self.tags[j] for j in scores.argmax(axis=1)]

    def read(self, text: str, vector: np.ndarray) -> Reading:
        """The reading of one fact from its text and its embedding (cached by text)."""
        with self._lock:
            hit = self._cache.get(text)
        if hit is not None:
            return hit
        tokens = tokens_of(text)
        # a question states nothing, a name said to someone ("Thanks, Nate!") is none of the
        # fact's: their tokens get a tag of their own ("Q"), no span's
        asked = [q or a for q, a in zip(_in_question(tokens), _addressed(tokens), strict=True)]
        tags = ["Q" if q else tag for tag, q in zip(self.tag(tokens), asked, strict=True)]
        probs = self.slot_probs(np.asarray(vector, np.float32))[0]
        best = int(probs.argmax())

        def span(tag: str) -> frozenset[str]:
            return normal_terms([t for t, g in zip(tokens, tags, strict=True) if g == tag])

        # a number is no subject ("my 2 cats"), an identifier is ("ticket PAY-412")
        subject = frozenset(
            w for w in span("S") if not any(c.isdigit() for c in w) or re.search(r"[a-z]", w)
        )

        def named(i: int, t: str) -> bool:  # a name past the first word, or a number
            return bool(re.search(r"\d", t)) or (i > 0 and t[:1].isupper() and t != "I")

        core = normal_terms(
            [
                t
                for i, (t, g) in enumerate(zip(tokens, tags, strict=False))
                if g == "V" and named(i, t)
            ]
        )
        if not core and not span("V"):
            # no value tagged: the names and numbers that are not its subject, aspect or ended
            core = normal_terms(
                [
                    t
                    for i, (t, g) in enumerate(zip(tokens, tags, strict=False))
                    if g == "O" and named(i, t)
                ]
            )
        bare = {re.sub(r"['’]\w+$", "", t.lower()) for t in tokens}  # "we're" -> "we"
        reading = Reading(
            slot=self.slots[best],
            slot_p=float(probs[best]),
            ending_p=self.ending_p(vector, tokens),
            subject=subject,
            aspect=span("A"),
            value=span("V"),
            ended=span("X"),
            core=core,
            words=normal_terms(tokens),
            lead=normal_terms(tokens[:1]) if _leading_name(tokens) else frozenset(),
            capitalised=normal_terms([t for t in tokens if t[:1].isupper() and t != "I"]),
            times=normal_terms([t for t in tokens if t.lower() in TIME_WORDS]),
            negated=bool(cue_vector(tokens).any()),
            first_person=not bare.isdisjoint(FIRST_PERSON),
            third_person=not bare.isdisjoint(THIRD_PERSON),
            probs=probs,
        )
        with self._lock:
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[text] = reading
        return reading


@lru_cache(maxsize=1)
def shipped() -> Reader:
    """The reader shipped with the package (loaded once)."""
    with resources.files("localmem.infer.data").joinpath(DATA).open("rb") as fh:
        data = dict(np.load(fh, allow_pickle=False))
    return Reader(data)


def reader_for(embedder_name: str | None, dim: int | None) -> Reader | None:
    """The shipped reader when its weights fit this embedder's vectors, else None."""
    reader = shipped()
    if embedder_name is None or (dim is not None and dim != reader.dim):
        return None
    # variants of one model (torch, onnx fp32, int8: "all-MiniLM-L6-v2+int8") share its space
    if embedder_name.split("+")[0] != reader.embedder.split("+")[0]:
        return None
    return reader
