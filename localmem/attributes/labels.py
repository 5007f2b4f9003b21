"""Label sets: the intents and topics attributes are chosen from, each with a description.

The description serves twice: the llama.cpp miner's prompt names the labels, and the model-free
miner compares a memory's embedding with the embeddings of each label's description and
examples (zero-shot classification). Keywords add a small lexical cue on top.

Three sets ship: ``everyday`` (the default: everyday life, work and software in one set whose
labels name their ``group``, so the model-free miner picks the part that fits each memory),
``software`` (the seed's enums, for notes and thoughts about building software) and
``conversation`` (for personal conversations such as LoCoMo's). A store forces one set with
``attributes.label_set``, or reads its own from a JSON file (``attributes.label_file``) shaped
like :meth:`LabelSet.to_dict`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from localmem.errors import InputError
from localmem.text import content_hash, stem, words

AXES = ("entities", "intent", "topic")
#: the parts of a set a label can belong to: a memory is about ``life`` or ``software``;
#: ``work`` and ``any`` labels fit both
GROUPS = ("life", "software", "work", "any")


@dataclass(frozen=True)
class Label:
    """One intent or topic."""

    name: str
    description: str
    examples: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    #: which part of a set the label belongs to (``life``, ``software``, ``work``: both,
    #: ``any``); a set whose labels have groups lets the model-free miner pick the part that
    #: fits each memory. Empty: no part.
    group: str = ""

    @property
    def cues(self) -> tuple[str, ...]:
        """The keywords as stemmed word sequences, matched against :func:`cue_text`."""
        return tuple(f" {cue_text(k).strip()} " for k in self.keywords if cue_text(k).strip())


def cue_text(text: str) -> str:
    """A text as space-separated stems, stop-words kept ("should have" is a cue)."""
    return " " + " ".join(stem(w) for w in words(text)) + " "


def cue_hits(cues: tuple[str, ...], stemmed: str) -> int:
    """How many of the cues occur in a text prepared with :func:`cue_text`."""
    return sum(1 for c in cues if c in stemmed)


@dataclass(frozen=True)
class LabelSet:
    """Named intents and topics."""

    name: str
    description: str
    intents: tuple[Label, ...]
    topics: tuple[Label, ...]

    def axis(self, axis: str) -> tuple[Label, ...]:
        """The labels of ``intent`` or ``topic``."""
        if axis == "intent":
            return self.intents
        if axis == "topic":
            return self.topics
        raise InputError(f"axis {axis!r} has no labels (only intent and topic do)")

    def names(self, axis: str) -> tuple[str, ...]:
        """The label names of an axis, in order."""
        return tuple(label.name for label in self.axis(axis))

    @property
    def grouped(self) -> bool:
        """Whether the set's topics are split into life and software parts."""
        groups = {x.group for x in self.topics}
        return "life" in groups and "software" in groups

    @property
    def key(self) -> str:
        """A short hash of the whole set: caches of label embeddings are keyed by it."""
        return content_hash(json.dumps(self.to_dict(), sort_keys=True))[:12]

    def to_dict(self) -> dict[str, Any]:
        """The set as plain data (the layout of a label file)."""

        def labels(items: tuple[Label, ...]) -> list[dict[str, Any]]:
            return [
                {
                    "name": x.name,
                    "description": x.description,
                    "examples": list(x.examples),
                    "keywords": list(x.keywords),
                    **({"group": x.group} if x.group else {}),
                }
                for x in items
            ]

        return {
            "name": self.name,
            "description": self.description,
            "intents": labels(self.intents),
            "topics": labels(self.topics),
        }

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "label set") -> LabelSet:
        """A set from plain data, checked (names unique and non-empty, at least 2 per axis)."""
        if not isinstance(data, dict):
            raise InputError(f"{source} must be a JSON object")

        def labels(axis: str) -> tuple[Label, ...]:
            raw = data.get(axis)
            if not isinstance(raw, list) or len(raw) < 2:
                raise InputError(f"{source}: {axis} must be a list of at least 2 labels")
            out, seen = [], set()
            for item in raw:
                if isinstance(item, str):
                    item = {"name": item, "description": item}
                if not isinstance(item, dict):
                    raise InputError(f"{source}: each of {axis} must be an object or a name")
                name = str(item.get("name", "")).strip().lower()
                if not name or len(name) > 40 or name in seen:
                    raise InputError(f"{source}: {axis} label {name!r} is empty, long or repeated")
                seen.add(name)
                group = str(item.get("group") or "").strip().lower()
                if group and group not in GROUPS:
                    raise InputError(
                        f"{source}: {axis} label {name!r} has group {group!r}, "
                        f"not one of {', '.join(GROUPS)}"
                    )
                out.append(
                    Label(
                        name,
                        str(item.get("description") or name),
                        tuple(str(x) for x in item.get("examples", ())),
                        tuple(str(x) for x in item.get("keywords", ())),
                        group,
                    )
                )
            return tuple(out)

        return cls(
            str(data.get("name") or "custom"),
            str(data.get("description") or ""),
            labels("intents"),
            labels("topics"),
        )

    def restricted(
        self, intents: tuple[str, ...] | None, topics: tuple[str, ...] | None
    ) -> LabelSet:
        """This set with each axis limited to (or extended by) the named labels, in that order.

        A name the set does not know becomes a label whose description is its name.
        """

        def pick(axis: str, wanted: tuple[str, ...] | None) -> tuple[Label, ...]:
            if wanted is None:
                return self.axis(axis)
            known = {x.name: x for x in self.axis(axis)}
            return tuple(known.get(n.lower(), Label(n.lower(), n)) for n in wanted)

        if intents is None and topics is None:
            return self
        return LabelSet(self.name, self.description, pick("intent", intents), pick("topic", topics))


def _builtin(name: str) -> LabelSet:
    """A label set shipped in ``attributes/labelsets/NAME.json`` (the same format as a
    ``label_file``)."""
    text = (
        resources.files("localmem.attributes")
        .joinpath(f"labelsets/{name}.json")
        .read_text(encoding="utf-8")
    )
    return LabelSet.from_dict(json.loads(text), source=f"built-in label set {name}")


#: the seed's enums (thoughts and notes made while building software)
SOFTWARE = _builtin("software")
#: LoCoMo-like chats between people
CONVERSATION = _builtin("conversation")
#: everyday life, work and software together: the part that fits is chosen per
#: memory by the model-free miner
EVERYDAY = _builtin("everyday")

#: built-in label sets by name
LABEL_SETS: dict[str, LabelSet] = {s.name: s for s in (EVERYDAY, SOFTWARE, CONVERSATION)}


def get_label_set(name: str) -> LabelSet:
    """A built-in set by name; an unknown name lists the known ones."""
    try:
        return LABEL_SETS[name]
    except KeyError:
        raise InputError(
            f"unknown label set {name!r}; known: {', '.join(sorted(LABEL_SETS))}"
        ) from None


def load_label_file(path: str | Path) -> LabelSet:
    """A label set from a JSON file (see :meth:`LabelSet.to_dict` for the layout)."""
    path = Path(path).expanduser()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read label file {path}: {exc}") from None
    return LabelSet.from_dict(data, source=str(path))


def label_set_for(config: Any) -> LabelSet:
    """The label set an :class:`~localmem.config.AttributeConfig` names (file, set, overrides)."""
    base = (
        load_label_file(config.label_file) if config.label_file else get_label_set(config.label_set)
    )
    return base.restricted(config.intents, config.topics)
