"""Short-term buffer (budget, eviction, persistence) and long-term facts, entities, relations."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest

from localmem.conversation import (
    Fact,
    LongTermMemory,
    ShortTermMemory,
    conversations,
    evictions,
    pick_facts,
    truncate_tokens,
)
from localmem.conversation.entity_rules import RuleExtractor, extract_rules
from localmem.errors import InputError

T0 = datetime(2024, 5, 1, 12, 0)


def test_evictions_keep_the_newest() -> None:
    assert evictions([10, 10, 10], 30) == 0
    assert evictions([10, 10, 10], 25) == 1
    assert evictions([10, 10, 10], 5) == 2  # the newest stays even when it alone is too big
    assert evictions([], 5) == 0


def test_stm_budget_and_order(memory) -> None:
    stm = ShortTermMemory(memory, "c1", budget_tokens=64, tokenizer=memory.embedder)
    texts = [f"message number {i} about the sailing stones of Racetrack Playa" for i in range(12)]
    evicted = []
    for i, text in enumerate(texts):
        evicted += stm.add("user" if i % 2 == 0 else "assistant", text)
    kept = stm.messages()
    assert stm.tokens <= 64 and sum(m.tokens for m in kept) == stm.tokens
    assert [m.content for m in kept] == texts[-len(kept) :]  # the newest, in order
    assert [m.content for m in evicted] == texts[: len(texts) - len(kept)]  # oldest went first
    assert all(m.tokens == memory.embedder.count_tokens(m.content) for m in kept)


def test_stm_message_longer_than_budget_is_cut(memory) -> None:
    stm = ShortTermMemory(memory, "c2", budget_tokens=64, tokenizer=memory.embedder)
    stm.add("user", "short hello")
    stm.add("assistant", "word " * 500)
    kept = stm.messages()
    assert len(kept) == 1 and kept[0].tokens <= 64 and kept[0].content.endswith("…")
    assert truncate_tokens("tiny", 10, memory.embedder) == "tiny"


def test_stm_persists_across_reopen(store_path, open_memory) -> None:
    mem = open_memory(store_path)
    stm = ShortTermMemory(mem, "chat", budget_tokens=2000, tokenizer=mem.embedder)
    stm.add("user", "What is Blood Falls?")
    stm.add("assistant", "A red outflow of brine in Antarctica.")
    ShortTermMemory(mem, "other", tokenizer=mem.embedder).add("user", "unrelated")
    mem.close()
    mem = open_memory(store_path)
    again = ShortTermMemory(mem, "chat", budget_tokens=2000, tokenizer=mem.embedder)
    assert [(m.role, m.content) for m in again.messages()] == [
        ("user", "What is Blood Falls?"),
        ("assistant", "A red outflow of brine in Antarctica."),
    ]
    again.add("user", "Why is it red?")  # the conversation continues where it was
    assert [m.seq for m in again.messages()] == [1, 2, 3]
    assert {c[0] for c in conversations(mem)} == {"chat", "other"}
    assert again.clear() == 3 and again.messages() == []


def test_stm_bad_input(memory) -> None:
    with pytest.raises(InputError):
        ShortTermMemory(memory, " ", tokenizer=memory.embedder)
    stm = ShortTermMemory(memory, "c", tokenizer=memory.embedder)
    with pytest.raises(InputError, match="role"):
        stm.add("robot", "hi")
    with pytest.raises(InputError):
        stm.add("user", "   ")
    assert stm.messages() == []


def _fact(i: int, salience: float, vec=None) -> Fact:
    return Fact(f"f{i}", f"q{i}", f"a{i}", salience, True, T0 + timedelta(minutes=i), None, vec)


def test_pick_facts_seed_policy() -> None:
    facts = [_fact(i, s) for i, s in enumerate([0.7, 0.2, 0.7, 0.5, 0.7, 0.7, 0.7, 0.29])]
    picked = pick_facts(facts, limit=5, min_salience=0.3)
    assert [f.id for f in picked] == ["f6", "f5", "f4", "f2", "f0"]  # salient, newest first
    assert all(f.salience >= 0.3 for f in pick_facts(facts, limit=10, min_salience=0.3))
    assert pick_facts(facts, limit=0, min_salience=0.0) == []
    with pytest.raises(InputError):
        pick_facts(facts, limit=5, min_salience=0.3, order="random")


def test_pick_facts_by_relevance() -> None:
    a, b = np.array([1.0, 0.0], np.float32), np.array([0.0, 1.0], np.float32)
    facts = [_fact(0, 0.7, a), _fact(1, 0.9, b), _fact(2, 0.1, a)]
    picked = pick_facts(facts, limit=1, min_salience=0.3, order="relevance", query_vector=a)
    assert [f.id for f in picked] == ["f0"]  # the similar one, though less salient


def test_ltm_facts_and_scopes(memory) -> None:
    ltm = LongTermMemory(memory, scope="u1", embed=memory.embedder.embed_batch)
    ltm.add_fact("Where is Lake Nyos?", "In Cameroon.", salience=0.7, success=True, now=T0)
    ltm.add_fact("Why do stones sail?", "Ice sheets push them.", salience=0.7, success=True, now=T0)
    ltm.add_fact("Who is Bob?", "The sources do not say.", salience=0.2, success=False, now=T0)
    assert len(ltm.facts(min_salience=0.3)) == 2
    query = memory.embedder.embed_query("What moves the rocks in the desert?")
    best = ltm.facts(limit=1, order="relevance", query_vector=query)[0]
    assert best.question == "Why do stones sail?"
    other = LongTermMemory(memory, scope="u2")
    assert other.facts() == [] and other.counts()["facts"] == 0
    with pytest.raises(InputError):
        ltm.add_fact("q", "a", salience=1.5, success=True)
    with pytest.raises(InputError):
        ltm.add_fact(" ", "a", salience=0.5, success=True)


def test_ltm_entities_relations_merge(memory) -> None:
    ltm = LongTermMemory(memory, scope="u1")
    ltm.remember(
        [("Blood Falls", "phenomenon", {"color": "red"}), ("Antarctica", "place", {})],
        [("Blood Falls", "occurs_in", "Antarctica")],
        now=T0,
    )
    ltm.remember(
        [("blood  falls", "other", {"source": "Blood_Falls"}), ("Lake Nyos", "place", {})],
        [("Blood Falls", "occurs in", "Antarctica"), ("Griffith Taylor", "studied", "Blood Falls")],
        now=T0 + timedelta(hours=1),
    )
    ents = {e.name: e for e in ltm.all_entities()}
    falls = ents["Blood Falls"]
    assert falls.type == "phenomenon" and falls.mentions == 2  # a known type is kept
    assert falls.attributes == {"color": "red", "source": "Blood_Falls"}
    assert ents["Griffith Taylor"].type == "other"  # a relation end became an entity
    rels = {r.line(): r for r in ltm.all_relations()}
    assert rels["Blood Falls occurs_in Antarctica"].mentions == 2
    assert "Griffith Taylor studied Blood Falls" in rels
    # read policy: entities named in the question first, relations touching them first
    assert ltm.entities(limit=1, prefer=["Lake Nyos"])[0].name == "Lake Nyos"
    assert ents["Antarctica"].mentions == 2  # named as the end of a relation counts too
    ltm.remember([("Blood Falls", "phenomenon", {})], now=T0 + timedelta(hours=2))
    assert ltm.entities(limit=1)[0].name == "Blood Falls"  # the most mentioned
    assert ltm.relations(limit=1, prefer=["Griffith Taylor"])[0].source == "Griffith Taylor"
    assert ltm.counts() == {"facts": 0, "entities": 4, "relations": 2}
    ltm.clear()
    assert ltm.counts() == {"facts": 0, "entities": 0, "relations": 0}


def test_rule_extractor_general_rules() -> None:
    text = (
        "Catatumbo lightning occurs over Lake Maracaibo in Venezuela. "
        "It was studied by Professor Angel Munoz in 2014. "
        "The Morning Glory cloud appears near Burketown."
    )
    found = extract_rules(text)
    types = {n: t for n, t, _ in found.entities}
    assert types["Catatumbo lightning"] == "phenomenon"
    assert types["Morning Glory cloud"] == "phenomenon"
    assert types["Lake Maracaibo"] == "place" and types["Venezuela"] == "place"
    assert types["Burketown"] == "place"
    assert types["Professor Angel Munoz"] == "person"
    assert ("Catatumbo lightning", "occurs_in", "Venezuela") in found.relations
    assert ("Morning Glory cloud", "occurs_in", "Burketown") in found.relations
    assert "It" not in types and "The" not in types


def test_rule_extractor_pattern_list() -> None:
    rules = RuleExtractor(["Fata Morgana (mirage)", "re:sailing\\s+stones?"])
    found = rules.extract(
        "A fata morgana was seen from Sicily. The geologist Paul Messina studied sailing "
        "stones in Death Valley."
    )
    types = {n: t for n, t, _ in found.entities}
    assert types["Fata Morgana"] == "phenomenon"  # the title's qualifier is dropped
    assert types["sailing stones"] == "phenomenon"
    assert types["Sicily"] == "place" and types["Death Valley"] == "place"
    assert types["Paul Messina"] == "person"
    assert ("Paul Messina", "studied", "sailing stones") in found.relations
    with pytest.raises(InputError):
        RuleExtractor(["re:(unclosed"])
    assert extract_rules("nothing named here at all.").entities == ()
