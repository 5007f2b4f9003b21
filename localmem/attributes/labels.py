"""Label sets: the intents and topics attributes are chosen from, each with a description.

The description serves twice: the llama.cpp miner's prompt names the labels, and the model-free
miner compares a memory's embedding with the embeddings of each label's description and
examples (zero-shot classification). Keywords add a small lexical cue on top.

Two sets ship: ``software`` (the seed's enums, for notes and thoughts about building software)
and ``conversation`` (for personal conversations such as LoCoMo's, which are about people's
lives). A store picks one with ``attributes.label_set``, or reads its own from a JSON file
(``attributes.label_file``) shaped like :meth:`LabelSet.to_dict`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localmem.errors import InputError
from localmem.text import content_hash, stem, words

AXES = ("entities", "intent", "topic")


@dataclass(frozen=True)
class Label:
    """One intent or topic."""

    name: str
    description: str
    examples: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()

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
                out.append(
                    Label(
                        name,
                        str(item.get("description") or name),
                        tuple(str(x) for x in item.get("examples", ())),
                        tuple(str(x) for x in item.get("keywords", ())),
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


def _set(name: str, description: str, intents: list, topics: list) -> LabelSet:
    return LabelSet(
        name, description, tuple(Label(*x) for x in intents), tuple(Label(*x) for x in topics)
    )


SOFTWARE = _set(
    "software",
    "thoughts and notes made while building software (the seed's enums)",
    [
        (
            "debugging",
            "finding and fixing a bug, a crash, a failure or unexpected behaviour",
            (
                "Why does this fail? Tracing the error back to its root cause.",
                "Found the bug: the variable was never reset between calls.",
                "The API returns 500 for empty bodies; the parser crashes before validation.",
                "The query times out only in production; reproducing it with the same data.",
                "The deploy fails because the container cannot reach the config server.",
            ),
            (
                "bug",
                "crash",
                "fails",
                "failed",
                "failing",
                "error",
                "exception",
                "root cause",
                "reproduce",
                "stack trace",
                "why does",
                "why is",
                "hangs",
                "leak",
                "broken",
                "found it",
                "the fix",
            ),
        ),
        (
            "design",
            "deciding how a system, interface or component should work: options and trade-offs",
            (
                "We should structure it this way rather than that way.",
                "Option A is simpler but option B scales better; I prefer B.",
                "The API should return a structured error with a code and a message.",
                "The schema should keep addresses in their own table instead of columns.",
                "Tokens should be short-lived, with a refresh flow rather than long sessions.",
            ),
            (
                "should",
                "rather",
                "prefer",
                "option",
                "trade-off",
                "approach",
                "instead of",
                "better than",
                "beats",
                "choose",
                "interface",
                "contract",
                "structure",
            ),
        ),
        (
            "implementation",
            "writing or changing code to build something: concrete functions, libraries, steps",
            (
                "Wrote the function and wired it into the request handler.",
                "Added the code for the new endpoint and a small helper class.",
                "Implemented the migration script that copies rows in batches.",
                "Refactored the test fixtures into one module and renamed the helpers.",
                "Added a middleware that checks the token and sets the current user.",
            ),
            (
                "implemented",
                "wrote",
                "added",
                "created",
                "refactored",
                "function",
                "class",
                "method",
                "helper",
                "wired",
                "code",
            ),
        ),
        (
            "analysis",
            "measuring, comparing or examining data and behaviour to understand it",
            (
                "The numbers show that most of the time goes to one step.",
                "Compared both versions: the second one is three times faster.",
                "Looking at the logs, most failures come from a single client.",
                "Query plans show a full table scan on every request.",
                "Coverage is high overall but low in the payment module.",
            ),
            (
                "shows",
                "profiling",
                "measured",
                "compared",
                "comparing",
                "numbers",
                "percent",
                "metrics",
                "benchmark",
                "on average",
                "p95",
                "most of",
                "across",
            ),
        ),
        (
            "planning",
            "organising future work: next steps, priorities, milestones, schedule",
            (
                "Next week we do the migration, then switch everything over.",
                "First ship it behind a flag, then remove the old path.",
                "The plan has three milestones and this comes last.",
                "Before the release we will write the missing tests and review security.",
                "Roadmap: split the service next quarter, after the database upgrade.",
            ),
            (
                "next",
                "plan",
                "then",
                "first",
                "step",
                "todo",
                "schedule",
                "roadmap",
                "sprint",
                "milestone",
                "we will",
                "this week",
                "after that",
            ),
        ),
        (
            "reflection",
            "looking back on what happened: lessons learned, what went well or badly",
            (
                "In hindsight we should have done this much earlier.",
                "Lesson learned: small changes are safer than big ones.",
                "Looking back, the project went well but testing came too late.",
                "We learned that the cache caused more trouble than it saved.",
                "I realise the outage came from ignoring the warnings for weeks.",
            ),
            (
                "hindsight",
                "lesson",
                "learned",
                "looking back",
                "realise",
                "realize",
                "retrospective",
                "mistake",
                "should have",
                "in retrospect",
                "wish",
            ),
        ),
    ],
    [
        (
            "performance",
            "speed and efficiency: latency, throughput, caching, memory use, slow queries, load",
            (
                "Adding a cache cut the response time from 900 ms to 50 ms.",
                "The endpoint is slow under load; throughput tops out at 200 requests per second.",
                "Batching the writes reduced CPU and memory use.",
            ),
            ("latency", "throughput", "slow", "fast", "cache", "optimize", "load", "speed"),
        ),
        (
            "security",
            "protecting the system: authentication, authorization, secrets, abuse, vulnerabilities",
            (
                "Tokens must expire after an hour and be signed with a rotated key.",
                "Rate limiting per client stops abuse and brute-force login attempts.",
                "Never log passwords or API keys; validate every input.",
            ),
            (
                "auth",
                "token",
                "password",
                "encrypt",
                "permission",
                "vulnerability",
                "attack",
                "abuse",
            ),
        ),
        (
            "architecture",
            "the structure of the system: services, APIs, modules, boundaries, error handling",
            (
                "The gateway sits in front of the services and handles routing and errors.",
                "Each module owns its data and talks to others only through its API.",
                "Errors propagate as typed exceptions up to one handler at the boundary.",
            ),
            ("service", "api", "module", "component", "endpoint", "layer", "boundary", "pattern"),
        ),
        (
            "data",
            "storing and modelling data: databases, schemas, queries, indexes, migrations",
            (
                "The orders table needs an index on customer id and created date.",
                "Migrating the schema: split the address into its own table.",
                "The query joins three tables and scans the whole events table.",
            ),
            ("database", "table", "schema", "query", "sql", "index", "migration", "column"),
        ),
        (
            "testing",
            "checking that code works: unit and integration tests, fixtures, coverage, QA",
            (
                "Wrote integration tests that run against a real database.",
                "The test suite is flaky because of a shared fixture.",
                "Coverage of the error paths is low; add tests for timeouts.",
            ),
            ("test", "unit test", "fixture", "coverage", "mock", "assert", "flaky", "qa"),
        ),
        (
            "deployment",
            "shipping and running the system: releases, CI/CD, containers, infrastructure",
            (
                "The release pipeline builds a container and rolls it out to staging first.",
                "Rollback failed because the migration had already run in production.",
                "Kubernetes restarts the pod when the health check fails.",
            ),
            (
                "deploy",
                "release",
                "production",
                "staging",
                "container",
                "pipeline",
                "rollout",
                "kubernetes",
            ),
        ),
    ],
)

CONVERSATION = _set(
    "conversation",
    "personal conversations between people about their lives (LoCoMo-like chats)",
    [
        (
            "sharing",
            "telling news or an update about one's own life, activities or experiences",
            (
                "I went to a pottery class last weekend and made a bowl.",
                "Guess what, I got the job at the bakery!",
                "We adopted a puppy on Saturday.",
            ),
            ("went", "got", "just", "last week", "yesterday", "finally"),
        ),
        (
            "asking",
            "asking the other person a question about their life, plans or feelings",
            (
                "How did your interview go?",
                "What made you want to become a counselor?",
                "Have you been to that lake before?",
            ),
            ("how", "what", "why", "did you", "have you", "are you"),
        ),
        (
            "planning",
            "talking about intentions, future plans or upcoming events",
            (
                "I'm planning to go camping with my kids next month.",
                "Next year I want to apply to graduate school.",
                "We are thinking about moving to a bigger city.",
            ),
            ("plan", "next month", "next year", "going to", "want to", "soon", "future"),
        ),
        (
            "reflecting",
            "expressing feelings, opinions, memories or lessons about one's life",
            (
                "Looking back, that trip really changed how I see myself.",
                "I've been feeling stressed, but painting helps me calm down.",
                "It means a lot to me to be accepted for who I am.",
            ),
            ("feel", "realized", "means a lot", "grateful", "remember", "learned"),
        ),
        (
            "supporting",
            "encouraging, congratulating, thanking or comforting the other person",
            (
                "That's amazing, congratulations! You deserve it.",
                "I'm so sorry to hear that, I'm here for you.",
                "Thanks for always being there for me.",
            ),
            ("congrats", "proud", "sorry", "thanks", "you got this", "support"),
        ),
        (
            "recommending",
            "giving advice or recommending something: a book, a place, an activity",
            (
                "You should read 'Becoming Nicole', it's a great book.",
                "Try yoga in the morning, it really helps with stress.",
                "If you go to Paris, visit the little bakery near the river.",
            ),
            ("recommend", "should try", "advice", "suggest", "check out"),
        ),
    ],
    [
        (
            "family",
            "family life: children, parents, partners, siblings, relatives",
            (
                "My kids and I spent the afternoon baking cookies.",
                "My husband and I celebrated our anniversary.",
                "My mom taught me how to sew.",
            ),
            ("kids", "children", "son", "daughter", "mom", "dad", "husband", "wife", "family"),
        ),
        (
            "friends",
            "friendship, relationships and social life",
            (
                "I caught up with my old friends from college.",
                "We've been friends for four years now.",
                "I started dating someone I met at the gym.",
            ),
            ("friend", "friendship", "dating", "relationship", "hang out", "party"),
        ),
        (
            "work",
            "jobs, careers, businesses, colleagues and money",
            (
                "I got promoted to manager at the store.",
                "Starting my own business has been hard but rewarding.",
                "My boss asked me to lead the new project.",
            ),
            ("job", "career", "work", "boss", "business", "company", "promotion", "interview"),
        ),
        (
            "education",
            "school, university, courses, studying and learning",
            (
                "I'm taking an online course in counseling.",
                "Finals are next week and I'm studying a lot.",
                "I want to go back to school for a degree in psychology.",
            ),
            ("school", "class", "course", "study", "degree", "university", "college", "research"),
        ),
        (
            "hobbies",
            "creative hobbies and pastimes: art, painting, music, reading, writing, crafts, games",
            (
                "I painted a sunset with watercolors.",
                "I've been learning to play the violin.",
                "I just finished a great novel.",
            ),
            ("paint", "art", "music", "book", "read", "guitar", "pottery", "writing", "game"),
        ),
        (
            "sports",
            "sports, exercise and the outdoors: running, hiking, camping, swimming",
            (
                "I ran my first marathon last month.",
                "We went hiking in the mountains and camped by the lake.",
                "I play basketball with my team every Thursday.",
            ),
            ("run", "hike", "camp", "swim", "gym", "marathon", "yoga", "team", "beach"),
        ),
        (
            "travel",
            "trips, vacations, places visited and moving",
            (
                "We took a road trip along the coast.",
                "I visited my grandmother in Sweden.",
                "We're moving to a new city in the spring.",
            ),
            ("trip", "travel", "vacation", "visit", "flight", "city", "country", "moving"),
        ),
        (
            "health",
            "physical and mental health and wellbeing: illness, therapy, stress, self-care",
            (
                "I've been going to therapy and it helps with my anxiety.",
                "I had surgery on my knee last month.",
                "Meditation helps me manage stress.",
            ),
            ("health", "therapy", "stress", "anxiety", "doctor", "sick", "mental", "self-care"),
        ),
        (
            "pets",
            "pets and animals",
            (
                "My dog loves playing in the snow.",
                "We adopted two cats from the shelter.",
                "I take my puppy for a walk every morning.",
            ),
            ("dog", "cat", "pet", "puppy", "kitten", "animal", "shelter"),
        ),
        (
            "community",
            "community, identity and causes: volunteering, activism, LGBTQ, religion, charity",
            (
                "I volunteered at the LGBTQ center this weekend.",
                "The pride parade was so inspiring.",
                "Our church organized a food drive for the homeless.",
            ),
            (
                "volunteer",
                "lgbtq",
                "pride",
                "transgender",
                "charity",
                "activism",
                "church",
                "community",
            ),
        ),
        (
            "events",
            "celebrations and events: birthdays, parties, concerts, festivals, holidays",
            (
                "We threw a surprise birthday party for my sister.",
                "The concert last night was amazing.",
                "We celebrated Thanksgiving with the whole family.",
            ),
            ("birthday", "party", "concert", "festival", "celebrate", "wedding", "holiday"),
        ),
    ],
)

#: built-in label sets by name
LABEL_SETS: dict[str, LabelSet] = {s.name: s for s in (SOFTWARE, CONVERSATION)}


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
