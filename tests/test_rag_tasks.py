"""The model-free implementations this mechanism gives the `entities` and `facts` tasks."""

from __future__ import annotations

from localmem.config import Config, ConversationConfig
from localmem.conversation.facts import extract_facts, salience
from localmem.llm import run_task
from localmem.llm.tasks import TaskContext


def test_entities_task_runs_the_rules_without_a_model() -> None:
    config = Config(conversation=ConversationConfig(phenomena=("Naga fireball",)))
    text = (
        "Naga fireballs rise from the Mekong River near Nong Khai. The glowing balls were "
        "studied by Manas Kanoksin, who said they come from marsh gas."
    )
    result = run_task("entities", {"text": text}, engine=None, context=TaskContext(config=config))
    assert result.served_by == "model-free"
    graph = result.value
    types = {e.name: e.type for e in graph.entities}
    assert types == {
        "Naga fireball": "phenomenon",
        "Mekong River": "place",
        "Nong Khai": "place",
        "Manas Kanoksin": "person",
    }
    rels = {(r.source, r.relation, r.target) for r in graph.relations}
    assert ("Naga fireball", "occurs_in", "Mekong River") in rels
    # without the pattern list, the generic rule (a name before a phenomenon word) finds it
    plain = {
        e.name: e.type for e in run_task("entities", {"text": text}, engine=None).value.entities
    }
    assert plain["Naga fireballs"] == "phenomenon" and plain["Manas Kanoksin"] == "person"


def test_entities_output_stays_within_the_schema() -> None:
    text = " ".join(f"It rained in Town{i} yesterday." for i in range(30))
    graph = run_task("entities", {"text": text}, engine=None).value
    assert len(graph.entities) == 10  # the schema's bound, not an error


def test_facts_task_model_free() -> None:
    result = run_task(
        "facts",
        {
            "text": "Hi! I moved to Oslo last month. It was a long trip. Do you like fish? "
            "My sister Kari works at the harbour.",
            "speaker": "Ann",
            "time": "3 March 2024",
        },
        engine=None,
    )
    assert result.served_by == "model-free"
    facts = [(f.fact, f.salience) for f in result.value.facts]
    assert facts[0] == ("Ann moved to Oslo last month. (February 2024)", 1.0)
    assert ("Ann's sister Kari works at the harbour.", 1.0) in facts
    assert all("?" not in f for f, _ in facts) and all("Hi" not in f for f, _ in facts)
    assert salience("It was a long trip.") == 0.2
    assert extract_facts("ok. thanks a lot!") == []
