"""Does a new fact end an existing one? The model-free decision.

A new fact ends an existing memory when both fill the same single-valued slot (where someone
lives, a component's version, who owns something...) for the same subject and aspect, and the
new one states another value or ends the old one ("we separated", "I don't play tennis
anymore"). Each part is read by :mod:`localmem.infer.reading` (learned from generated data,
not phrase lists); here they are combined, and the decision **abstains** (the fact is simply
added) unless every part agrees and the combined confidence clears a threshold calibrated on
the hand-written dev dialogues (``scripts/lab/data/infer/dev.json``).

- slot: the new fact fills some slot (no slot less likely than :data:`NONE_P`), and the
  probability that both fill the same one, ``sum_s p(s | new) p(s | old)``, is at least
  :data:`SAME_SLOT_P`; whether the slot holds one value is the new fact's likeliest slot's;
- subject: the subjects the tagger found share a word, or one of them names none; first-person
  words stand for the speaker; a relation ("Ann's sister") is another subject than the person;
  an identifier is part of the subject ("ticket PAY-412" is not "ticket PAY-413");
- aspect: the aspects (the counted noun, the dependency whose version it is) share a word, or
  one of them names none; for a count, an aspect one fact names must be said by the other
  (:data:`WORDS_AS_ASPECT`: "3 dogs" does not end "2 cats" when the tagger read "cats" as the
  value);
- value: the new fact names the old value as ended, or it ends the fact (a single-valued slot
  with no new value, or the old value named), or it states a value that shares no word with
  the old one; where the tagger read no value in a new fact that surely fills the
  slot (its likeliest and the stored fact's, and not a question), its value is its words but
  whom it is about, its aspect and the stored fact's words, as a stored fact's is;
- confidence: the probability of the same slot times the cosine of the two, at least
  :data:`CONFIDENCE`;
- size: the old memory has at most :data:`MAX_SENTENCES` sentences (a long message is more
  than the one fact that changed).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from localmem.answers.extractive import split_sentences
from localmem.infer.reading import Reader, Reading, speaker_of

#: the new fact's probability of filling no slot above which it is read as none
NONE_P = 0.5
#: the probability that both facts fill the same slot (sum over slots of the product)
SAME_SLOT_P = 0.05
#: a fact with an ending probability at least this ends rather than states
ENDING_P = 0.5
#: an ending this sure ends a fact of a slot of several values that it names without a
#: negation cue ("I stopped running with the club")
SURE_ENDING_P = 0.85
#: a stored fact with no value read is compared by its words only when its likeliest slot is
#: the new fact's, at least this likely (chat that fills no slot surely is never compared)
REST_SLOT_P = 0.5
#: ... or when both facts fill the same slot at least this likely (their likeliest slots may
#: differ: "The default branch is master" reads as host or version)
REST_SAME_P = 0.2
#: slot agreement times cosine needed to supersede (calibrated on the dev dialogues)
CONFIDENCE = 0.03
#: words that name a person by relation: "Ann's sister" is not Ann
RELATIONS = frozenset(
    [
        "sister",
        "brother",
        "mum",
        "mom",
        "dad",
        "mother",
        "father",
        "son",
        "daughter",
        "husband",
        "wife",
        "partner",
        "boyfriend",
        "girlfriend",
        "cousin",
        "aunt",
        "uncle",
        "grandma",
        "grandpa",
        "grandmother",
        "grandfather",
        "granny",
        "neighbour",
        "neighbor",
        "flatmate",
        "roommate",
        "friend",
        "boss",
        "colleague",
        "niece",
        "nephew",
        "stepdad",
        "stepmum",
        "parent",
        "parents",
        "kid",
        "kids",
        "child",
        "children",
        "baby",
        "twin",
        "twins",
        "fiance",
        "fiancee",
        "in-law",
        "mother-in-law",
        "father-in-law",
        "manager",
    ]
)
#: a memory of more sentences than this is never ended: the model-free path stores a message
#: whole, so ending it for one changed fact would hide everything else it says from a search
#: of now (95% of LoCoMo's turns have more than one sentence, 64% more than two)
MAX_SENTENCES = 2
#: slots that hold one value per aspect (a favourite colour, a seat): both facts must name the
#: same aspect to conflict
ASPECT_NEEDED = frozenset({"preference"})
#: slots whose aspect, named by one fact, must be said by the other (a count of dogs is not
#: a count of cats, even when the tagger read "cats" as the value)
WORDS_AS_ASPECT = frozenset({"count"})
#: slots whose value (a person, a place) can stand where a subject stands
VALUE_AS_SUBJECT = frozenset({"partner", "home", "owner"})
#: slots whose values can be times (a weekday, a favourite season): elsewhere a time word is
#: no value
TIMED = frozenset({"schedule", "preference"})
_SELF = frozenset({"i", "me", "my", "we", "us", "our", "mine", "ours", "myself"})


@dataclass(frozen=True)
class Ending:
    """A memory the new fact ends, with why and how sure the decision is."""

    index: int  # position in the memories given
    confidence: float
    reason: str


def _subject(reading: Reading, speaker: str | None) -> frozenset[str]:
    words = set(reading.subject)
    if _spoken_of(reading):
        # "She left teaching", said by Tom, is about someone Tom names elsewhere, not Tom:
        # an unnamed subject, which can be anyone
        return frozenset()
    if speaker and (words & _SELF or not words or reading.first_person):
        # "I", "we" (or no subject said) is the speaker; a fact in the first person is about
        # its speaker too, whatever the tagger took for its subject ("Austin has been good to
        # us since we moved")
        words = (words - _SELF) | {speaker.lower()}
    return frozenset(words)


def _spoken_of(reading: Reading) -> bool:
    """Whether a fact speaks of someone as "he", "she" or "they" and of no one by name."""
    return reading.third_person and not reading.first_person and not reading.subject


def _only_the_speaker(subject: frozenset[str], reading: Reading, speaker: str | None) -> bool:
    """Whether a stored fact is about the speaker alone (not "Tom's sister")."""
    if not speaker:
        return False
    return subject == {speaker.lower()} and not reading.words & RELATIONS


def _without(reading: Reading, names: frozenset[str]) -> Reading:
    """A reading whose value and ended value leave out ``names``: who the fact is about (a
    subject or a speaker named in a value is not the value: "ends hobby: caroline"; the caller
    passes the time words too, but in a schedule)."""
    return replace(
        reading,
        value=reading.value - names,
        ended=reading.ended - names,
        core=reading.core - names,
    )


def same_subject(
    a: frozenset[str], b: frozenset[str], a_words: frozenset[str], b_words: frozenset[str]
) -> bool:
    """Whether two subjects can be the same: an unnamed one can be anyone; two named ones
    share a word, or one is named anywhere in the other fact ("Walter and Uma got married"
    is about Uma too)."""
    if not a or not b:
        return True
    if a & b:
        # "ann" and "ann sister" share a word but are two people; so are "the search service"
        # and "the audit service": each names a word the other fact does not say
        return not ((a ^ b) & RELATIONS) and not ((a - b_words) and (b - a_words))
    return a <= b_words or b <= a_words


def _compatible_aspect(a: frozenset[str], b: frozenset[str]) -> bool:
    return not a or not b or bool(a & b)


def changed(new: Reading, old: Reading, same: float = 0.0) -> bool:
    """Whether ``new`` states another value than ``old``: both values name numbers and none
    is the same ("2 dogs" -> "one dog"); or the old value's distinctive words (its names and
    numbers, else all its words, else the old fact's words but its subject and aspect) are not
    all said again, and the new value has words the old fact did not say. ``same`` is how
    likely both fill the same slot."""
    old_numbers, new_numbers = _numbers(old), _numbers(new)
    if old_numbers and new_numbers and not old_numbers & new_numbers:
        return True  # another count, age, limit or version, whatever else is named again
    new_core = new.core or new.value
    if not new_core:
        return False  # no new value read: nothing to compare
    old_core = old.core or old.value or _rest(old, new, same)
    if not old_core:
        return False
    # the new fact's subject does not say the old value again: it says what became of it
    # ("Petra moved teams, so Joon owns billing now"; "the Hetzner box is gone")
    again = new.words - new.ended - new.subject
    if old.core and old.core & again:
        return False  # a name or number of the old value is said again: the same value
    return bool(old_core - again) and bool(new_core - old.words)


def _numbers(reading: Reading) -> frozenset[str]:
    """The numbers of a fact's value ("2" dogs, "3.12", "300" requests)."""
    return frozenset(w for w in reading.core | reading.value if re.fullmatch(r"\d+(?:\.\d+)*", w))


def _rest(reading: Reading, new: Reading, same: float) -> frozenset[str]:
    """The value of a stored fact the tagger found none in: its words but its subject's and
    aspect's (a stored value need not follow a frame the generator knows to be compared with
    a new one; the new fact's own value must still be read), when it surely fills the new
    fact's slot and says whom or what it is about."""
    surely = reading.slot == new.slot and reading.slot_p >= REST_SLOT_P
    if not surely and same < REST_SAME_P:
        return frozenset()  # not surely a statement of the new fact's slot: chat, a reply
    about = reading.subject | reading.aspect or reading.lead
    if not about:
        return frozenset()  # a reply ("no fish either") says nothing to compare
    return reading.words - about


def _value_from_words(
    said: Reading, old: Reading, mine: frozenset[str], names: frozenset[str], same: float
) -> Reading:
    """The new fact's value, where the tagger read none in a fact that surely fills the slot
    (its likeliest, and likely the stored fact's too) and names whom or what it is about
    (the tagger's subject or aspect, not only its speaker or an opening name): its
    words but whom it is about, its aspect, the names and times left out of values, and the
    stored fact's words ("tacos have taken over as Ela's favourite food")."""
    if said.value or said.core or said.ended:
        return said
    if said.slot_p < REST_SLOT_P or same < REST_SAME_P:
        return said  # not surely a statement of the slot: chat, a reply, a maybe
    about = said.subject | said.aspect
    if not about:
        return said  # whom it is about read only from its speaker: a trip, a remark
    rest = said.words - about - mine - names - old.words
    return replace(said, value=rest) if rest else said


def _how_kind(
    new: Reading, old: Reading, slot: str, single: bool, same: float
) -> tuple[str, str] | None:
    """Why ``new`` ends ``old``, with the kind of reason: "named" (the old value named as
    ended), "handover", "ending-named" (an ending that names the old value), "ending" (an
    ending in a slot of one value), "change" (another value); None: it does not."""
    if new.ended & old.value:
        return "named", f"ends {slot}: {' '.join(sorted(new.ended & old.value))}"
    handed = new.ended & new.capitalised & (old.words - old.subject - old.aspect)
    if single and handed and new.value & new.capitalised:
        # a handover from one name to another ("Aroha passed the billing pager to Bjorn")
        # ends the stored fact that names the first, where the tagger read no value in it
        # ("Aroha carries the billing pager"); chat's ended words are too noisy to go by
        # unless both are names
        return "handover", f"ends {slot}: {' '.join(sorted(handed))}"
    if new.ending_p >= ENDING_P:
        # an ending ends the fact whose value it names anywhere ("Yara and I broke up"), or,
        # in a slot of one value, the fact it names no other value for ("I retired"); in a
        # slot of several values (likes, habits) it must also negate ("I don't play tennis
        # anymore"): chat that merely mentions a hobby ends nothing
        # a stored fact of the same slot with no value read is named by its words ("Lars
        # smokes about ten a day" -> "Lars doesn't smoke anymore")
        named = (old.value or _rest(old, new, same)) & new.words
        if not new.negated and old.core and old.core <= new.value:
            return None  # it says the old value again, ending nothing ("still teaching in Graz")
        if named and (single or new.negated or new.ending_p >= SURE_ENDING_P):
            return "ending-named", f"ends {slot}: {' '.join(sorted(named))}"
        if single and not (new.value | new.ended) - old.words:
            return "ending", f"ends {slot}"
        if not (single and new.value):
            return None
        # an ending that states the next value in a slot of one ("he retrained and he's a
        # firefighter now") is a change: compared as one below
    if not single or not changed(new, old, same):
        return None
    was = " ".join(sorted(old.core or old.value))
    now = " ".join(sorted(new.core or new.value))
    return "change", f"new {slot}: {was} -> {now}"


def endings(
    reader: Reader,
    fact: str,
    vector: np.ndarray,
    memories: Sequence[tuple[str, np.ndarray]],
    *,
    speaker: str | None = None,
    speakers: Sequence[str | None] | None = None,
) -> list[Ending]:
    """The memories (``(text, vector)``) the fact ends, the surest first; empty to abstain."""
    found = verdicts(reader, fact, vector, memories, speaker=speaker, speakers=speakers)
    out = [v for v in found if isinstance(v, Ending)]
    return sorted(out, key=lambda e: -e.confidence)


#: the gates of :func:`verdicts`, in the order they are tried: what a rejection names
GATES = ("none", "size", "same-slot", "old-ending", "subject", "aspect", "value", "confidence")


def verdicts(
    reader: Reader,
    fact: str,
    vector: np.ndarray,
    memories: Sequence[tuple[str, np.ndarray]],
    *,
    speaker: str | None = None,
    speakers: Sequence[str | None] | None = None,
) -> list[Ending | str]:
    """For each memory, in order, the :class:`Ending` the fact makes of it or the name of the
    first gate (:data:`GATES`) that rejected it: :func:`endings`' decision, kept whole so a
    diagnosis can say which rule lost a supersession. The decision is :data:`decide` (the
    chain) on each pair's :class:`Evidence`."""
    # the chain needs no check past the first a pair fails (most pairs fail the first few):
    # another decision weighs them all
    whole = decide is not chain
    found = evidences(
        reader, fact, vector, memories, speaker=speaker, speakers=speakers, whole=whole
    )
    if found is None:
        return ["none"] * len(memories)
    return [decide(e, i) for i, e in enumerate(found)]


def evidences(
    reader: Reader,
    fact: str,
    vector: np.ndarray,
    memories: Sequence[tuple[str, np.ndarray]],
    *,
    speaker: str | None = None,
    speakers: Sequence[str | None] | None = None,
    whole: bool = True,
) -> list[Evidence] | None:
    """The :class:`Evidence` of the fact against each memory, in order; None where the fact
    fills no slot (the "none" gate: nothing is compared). Not ``whole``: each pair's checks
    stop at the first the chain fails (:func:`_evidence`)."""
    new = reader.read(fact, vector)
    none = reader.slots.index("none")
    if new.p(none) >= NONE_P:
        return None
    k = int(np.argmax([p if j != none else -1.0 for j, p in enumerate(new.probs)]))
    speaker = speaker or speaker_of(fact)
    f = _NewFact(
        reader=reader,
        text=fact,
        reading=new,
        vector=vector,
        slot=reader.slots[k],
        single=reader.slots[k] in reader.single_valued,
        slot_p=new.p(k),
        none_p=new.p(none),
        speaker=speaker,
        mine=_subject(new, speaker),
    )
    return [
        _evidence(f, text, vec, (speakers[i] if speakers else None), whole)
        for i, (text, vec) in enumerate(memories)
    ]


@dataclass(frozen=True)
class _NewFact:
    """What every pair of one new fact shares: its reading, likeliest slot (none aside) and
    whom it is about (:func:`_subject`, the speaker standing for "I")."""

    reader: Reader
    text: str
    reading: Reading
    vector: np.ndarray
    slot: str
    single: bool
    slot_p: float
    none_p: float
    speaker: str | None
    mine: frozenset[str]


def same_slot(
    reader: Reader, new: Reading, old: Reading, vector: np.ndarray, vec: np.ndarray
) -> float:
    """How likely two facts fill the same slot: ``sum_s p(s | new) p(s | old)`` over the
    slots but none (the vectors are the facts' embeddings, for a reading of the pair)."""
    none = reader.slots.index("none")
    return float(np.dot(new.probs, old.probs)) - new.p(none) * old.p(none)


@dataclass(slots=True)
class Evidence:
    """What the decision reads of one (new fact, stored memory) pair: every check of the
    chain (:data:`GATES`): from :func:`evidences`, each computed whether or not an earlier one
    failed, so a decision (the chain, or a learned combination) can weigh them; on the add
    path (:func:`verdicts` with the chain) only up to the first that fails. ``read`` is False
    where the stored memory was too long to read (the size check: nothing else was
    computed). Filled in as the checks are computed (:func:`_evidence`), so not frozen: a
    plain record is built at a fifth of a frozen one's cost, on every pair of every add."""

    #: the new fact's likeliest slot (none aside) and whether it holds one value
    slot: str
    single: bool
    #: that slot's probability, and the new fact's probability of no slot
    new_slot_p: float
    new_none_p: float
    #: the stored memory's sentences
    sentences: int
    read: bool = False
    #: how likely both fill the same slot, and the cosine of their vectors
    same: float = 0.0
    cosine: float = 0.0
    new_ending_p: float = 0.0
    old_ending_p: float = 0.0
    #: the subject check, which way: passed "unnamed", "shared", "named", "aspect"; failed
    #: "spoken-of", "differ"
    subject: str = ""
    #: the aspect check, which way: passed "open", "shared"; failed "differ", "count",
    #: "needed"
    aspect: str = ""
    #: why the new fact ends the stored one, None where it does not, and the kind of reason
    #: ("named", "handover", "ending-named", "ending", "change"; "": none): :func:`_how_kind`
    how: str | None = None
    how_kind: str = ""
    #: both values name numbers and none is the same
    numbers_differ: bool = False
    #: the new fact asks
    question: bool = False
    new_first_person: bool = False
    old_first_person: bool = False
    #: whether a value was read in each (after names and times are left out)
    new_value: bool = False
    old_value: bool = False
    #: a word of the new value is a word of the stored fact
    value_shared: bool = False
    new_words: int = 0
    old_words: int = 0

    @property
    def confidence(self) -> float:
        """The chain's confidence: the same-slot probability times the (non-negative) cosine."""
        return self.same * max(self.cosine, 0.0)

    @property
    def subject_ok(self) -> bool:
        """Whether the subject check passed (:data:`SUBJECT_PASSES`)."""
        return self.subject in SUBJECT_PASSES

    @property
    def aspect_ok(self) -> bool:
        """Whether the aspect check passed (:data:`ASPECT_PASSES`)."""
        return self.aspect in ASPECT_PASSES


#: the ways the subject check passes (:attr:`Evidence.subject`)
SUBJECT_PASSES = frozenset({"unnamed", "shared", "named", "aspect"})
#: the ways the aspect check passes (:attr:`Evidence.aspect`)
ASPECT_PASSES = frozenset({"open", "shared"})


def failed_gates(e: Evidence) -> list[str]:
    """Every gate of :data:`GATES` (but none) that the pair fails, in the chain's order."""
    return list(_failing(e))


def _failing(e: Evidence) -> Iterator[str]:
    """The gates the pair fails, in the chain's order, one at a time (the chain needs the
    first only)."""
    if not e.read:
        yield "size"
        return
    if e.same < SAME_SLOT_P:
        yield "same-slot"
    if e.old_ending_p >= ENDING_P:
        yield "old-ending"
    if not e.subject_ok:
        yield "subject"
    if not e.aspect_ok:
        yield "aspect"
    if e.how is None:
        yield "value"
    if e.confidence < CONFIDENCE:
        yield "confidence"


def chain(e: Evidence, i: int) -> Ending | str:
    """The chain's decision on one pair: an :class:`Ending` where every gate passes, else the
    first gate that failed."""
    failed = next(_failing(e), None)
    if failed is not None:
        return failed
    return Ending(i, e.confidence, f"{e.how} (confidence {e.confidence:.2f})")


def _subject_check(
    new: Reading, old: Reading, mine: frozenset[str], theirs: frozenset[str], speaker: str | None
) -> str:
    """Which way the subject check goes (:attr:`Evidence.subject`); ``mine`` and ``theirs``
    are whom each fact is about (:func:`_subject`)."""
    if not mine and _spoken_of(new) and _only_the_speaker(theirs, old, speaker):
        return "spoken-of"  # "she" is not the speaker: a fact about Tom is not what Tom says of her
    if not mine or not theirs:
        return "unnamed"
    if same_subject(mine, theirs, new.words | mine, old.words | theirs):
        return "shared" if mine & theirs else "named"
    if (not new.subject or not old.subject) and new.aspect & old.aspect:
        # a fact that names no subject of its own ("we raised the rate limit") is about
        # what both name as their aspect ("the public API limit")
        return "aspect"
    return "differ"


def _aspect_check(said: Reading, old: Reading, slot: str) -> str:
    """Which way the aspect check goes (:attr:`Evidence.aspect`), on the values as compared."""
    if not _compatible_aspect(said.aspect, old.aspect):
        return "differ"
    if slot in WORDS_AS_ASPECT and not (
        said.aspect <= old.words | old.aspect and old.aspect <= said.words | said.aspect
    ):
        return "count"  # "3 dogs" does not count what "2 cats" counts
    if slot in ASPECT_NEEDED and not said.aspect & old.aspect and not said.ended & old.value:
        return "needed"  # one value per aspect (a favourite colour, a seat): both must name it
    return "shared" if said.aspect & old.aspect else "open"


def _fails(e: Evidence, through: str) -> bool:
    """Whether the pair fails a gate of the chain up to ``through`` (the checks computed so
    far: the later ones, at their defaults, may seem to fail)."""
    failed = next(_failing(e), None)
    return failed is not None and GATES.index(failed) <= GATES.index(through)


#: the decision on one pair's evidence (the chain; a measurement may put another in its place)
decide: Callable[[Evidence, int], Ending | str] = chain


def _evidence(
    f: _NewFact, text: str, vec: np.ndarray, said_by: str | None, whole: bool = True
) -> Evidence:
    """What the decision reads of the new fact against the stored ``text`` (its vector
    ``vec``; ``said_by``, its speaker where the caller knows it) (:class:`Evidence`).
    Not ``whole``, the checks stop at the first the chain fails, the later ones left at their
    defaults: enough for the chain's verdict (:func:`chain`), at the cost of the checks it
    needs, but not a record to weigh or diagnose by."""
    reader, fact, new, vector = f.reader, f.text, f.reading, f.vector
    slot, single, speaker, mine = f.slot, f.single, f.speaker, f.mine
    sentences = len(split_sentences(text))
    e = Evidence(
        slot=slot, single=single, new_slot_p=f.slot_p, new_none_p=f.none_p, sentences=sentences
    )
    if sentences > MAX_SENTENCES:
        return e  # a long message is never read: never ended
    old = reader.read(text, vec)
    e.read = True
    e.same = same = same_slot(reader, new, old, vector, vec)
    e.cosine = float(np.dot(vector, vec))
    e.new_ending_p, e.old_ending_p = new.ending_p, old.ending_p
    e.question = question = "?" in fact
    e.new_first_person, e.old_first_person = new.first_person, old.first_person
    e.new_words, e.old_words = len(new.words), len(old.words)
    if not whole and _fails(e, "old-ending"):
        return e
    said_by = said_by or speaker_of(text) or speaker
    theirs = _subject(old, said_by)
    e.subject = _subject_check(new, old, mine, theirs, speaker)
    if not whole and not e.subject_ok:
        return e
    # neither fact's subject nor speaker (often addressed by name) is a value of either
    voices = {n.lower() for n in (speaker, said_by) if n}
    names = theirs | mine | voices
    if slot not in TIMED:
        names |= old.times | new.times  # "in the autumn" is when, not what
    # the stored value may be the subject of a clause of the new fact ("Petra moved
    # teams, so Joon owns billing now"): only whom the stored fact is about leaves its value
    old_names = names - (mine - theirs - voices)
    old, said = _without(old, old_names), _without(new, names)
    # a stored fact's opening word is whom it is about only when it is a speaker's name
    # (the name that stands for "I"): chat opens with "Sounds great", "Looks good"
    old = replace(old, lead=old.lead & voices)
    if slot in VALUE_AS_SUBJECT and said.ending_p < ENDING_P:
        # a name the new fact has as its subject beside whom the stored one is about, and
        # that the stored one does not say, is, in a slot whose value can stand there, the
        # new value ("Walter and Uma got
        # married", "Austin has been good to us since we moved")
        promoted = (mine - theirs) & new.capitalised - old.words
        said = replace(said, value=said.value | promoted, core=said.core | promoted)
    if not question:  # a question states no value
        said = _value_from_words(said, old, mine, names, same)
    e.aspect = _aspect_check(said, old, slot)
    if not whole and not e.aspect_ok:
        return e
    found = _how_kind(said, old, slot, single, same)
    if found is not None:
        e.how_kind, e.how = found
    old_numbers, new_numbers = _numbers(old), _numbers(said)
    e.numbers_differ = bool(old_numbers and new_numbers and not old_numbers & new_numbers)
    new_value = said.core | said.value
    e.new_value, e.old_value = bool(new_value), bool(old.core | old.value)
    e.value_shared = bool(new_value & old.words)
    return e
