"""The RAG agent on a real store with MiniLM: model-free, and through llama.cpp (tiny GGUF)."""

from __future__ import annotations

import pytest

from localmem.agent import Agent
from localmem.config import Config, ConversationConfig
from localmem.errors import InputError
from localmem.ingest import ingest_document

ARTICLES = {
    "Blood Falls": (
        "Blood Falls is an outflow of iron-rich saltwater from Taylor Glacier in Antarctica. "
        "The water turns red because the iron oxidises when it meets the air. "
        "It was first studied by the geologist Griffith Taylor in 1911."
    ),
    "Lake Nyos": (
        "Lake Nyos is a crater lake in Cameroon. In 1986 a limnic eruption released a cloud "
        "of carbon dioxide that suffocated people and livestock in nearby villages."
    ),
    "Sailing stones": (
        "Sailing stones move across the floor of Racetrack Playa in Death Valley. Thin sheets "
        "of ice pushed by light winds slide the rocks and leave long trails in the mud."
    ),
}


@pytest.fixture(scope="module")
def rag_memory(tmp_path_factory, embedder):
    """One store of chunks for the module; each test uses its own scope and conversations."""
    from localmem import Memory

    config = Config(conversation=ConversationConfig(phenomena=tuple(ARTICLES)))
    mem = Memory.open(tmp_path_factory.mktemp("rag"), config=config, embedder=embedder,
                      engine=False)  # fmt: skip
    for title, text in ARTICLES.items():
        ingest_document(mem, text, source=title, chunker="recursive", chunk_tokens=40,
                        overlap_tokens=8, title=title)  # fmt: skip
    yield mem
    mem.close()


def test_model_free_agent_answers_and_remembers(rag_memory) -> None:
    agent = Agent(rag_memory, None, scope="t1")
    ans = agent.ask("Why is the water of Blood Falls red?", conversation_id="t1")
    assert ans.served_by == "model-free"
    assert "oxidises" in ans.answer and ans.success
    assert ans.sources[0].source == "Blood Falls" and ans.cited == [1]
    assert ans.prompt_tokens > ans.completion_tokens > 0
    assert ans.tokens_counted_by.startswith("tokenizers") and ans.seconds > 0
    assert ans.memory == {"stm_messages": 0, "facts": 0, "entities": 0, "relations": 0}
    # both memories were updated
    assert [m.role for m in agent.stm("t1").messages()] == ["user", "assistant"]
    counts = agent.ltm.counts()
    assert counts["facts"] == 1 and counts["entities"] >= 2
    names = {e.name: e.type for e in agent.ltm.all_entities()}
    assert names["Blood Falls"] == "phenomenon" and names["Antarctica"] == "place"
    assert "Blood Falls occurs_in Antarctica" in [r.line() for r in agent.ltm.all_relations()]
    # the second question sees the conversation and the long-term memory
    second = agent.ask("Where is Lake Nyos?", conversation_id="t1")
    assert second.memory["stm_messages"] == 2 and second.memory["facts"] == 1
    assert "Cameroon" in second.answer


def test_prompt_follows_the_seed_order(rag_memory) -> None:
    agent = Agent(rag_memory, None, scope="t2")
    agent.ask("Why is the water of Blood Falls red?", conversation_id="t2")
    messages = agent.prompt("Who studied Blood Falls?", conversation_id="t2")
    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
    last = messages[-1].render()
    order = [
        last.index("Known facts"),
        last.index("Known entities"),
        last.index("Known relations"),
        last.index("SOURCES:"),
        last.index("(source: Blood Falls)"),
        last.index("QUESTION: Who studied Blood Falls?"),
    ]
    assert order == sorted(order)
    assert "Blood Falls occurs_in Antarctica" in last
    assert messages[1].content == "Why is the water of Blood Falls red?"


def test_policies_switch_memories_off(rag_memory) -> None:
    cfg = rag_memory.config.conversation.model_copy(update={"write_entities": False})
    agent = Agent(rag_memory, None, config=cfg, scope="u1")
    agent.ask("Where is Lake Nyos?", conversation_id="c2")
    assert agent.ltm.counts() == {"facts": 1, "entities": 0, "relations": 0}
    stm_only = Agent(rag_memory, None, use_ltm=False, scope="u2")
    stm_only.ask("Where is Lake Nyos?", conversation_id="c3")
    again = stm_only.ask("What happened there in 1986?", conversation_id="c3")
    assert stm_only.ltm.counts() == {"facts": 0, "entities": 0, "relations": 0}
    assert again.memory["stm_messages"] == 2 and again.memory["facts"] == 0
    stateless = Agent(rag_memory, None, use_stm=False, use_ltm=False, scope="u3")
    stateless.ask("Where is Lake Nyos?", conversation_id="c4")
    assert stateless.stm("c4").messages() == []
    low = cfg.model_copy(update={"ltm_min_salience": 0.8})  # facts are written at 0.7
    assert Agent(rag_memory, None, config=low, scope="u1").prepare("x").memory["facts"] == 0


def test_unanswerable_question_is_a_failed_fact(rag_memory) -> None:
    agent = Agent(rag_memory, None, scope="u9")
    ans = agent.ask("What is the capital of Peru?")
    assert not ans.success and ans.answer == "The sources do not say."
    fact = agent.ltm.all_facts()[0]
    assert fact.success is False and fact.salience == 0.5


def test_conversation_continues_after_reopen(store_path, open_memory) -> None:
    mem = open_memory(store_path, engine=False)
    ingest_document(mem, ARTICLES["Lake Nyos"], source="Lake Nyos", chunker="fixed",
                    chunk_tokens=64, overlap_tokens=8)  # fmt: skip
    Agent(mem, None).ask("Where is Lake Nyos?", conversation_id="talk")
    mem.close()
    mem = open_memory(store_path, engine=False)
    ans = Agent(mem, None).ask("What did it release?", conversation_id="talk")
    assert ans.memory["stm_messages"] == 2 and ans.memory["facts"] == 1


def test_bad_questions(rag_memory) -> None:
    agent = Agent(rag_memory, None, scope="t3")
    with pytest.raises(InputError):
        agent.ask("   ")
    with pytest.raises(InputError):
        agent.ask("fine", conversation_id="")
    assert agent.ltm.counts()["facts"] == 0


def test_agent_through_llama_cpp(rag_memory, tiny_engine) -> None:
    """The real llama.cpp path with the tiny random-weight model: plumbing, not quality.

    A byte-level model with random weights may fill every string to its bound, so the output
    budgets are the longest outputs the grammars admit.
    """
    from localmem.llm.tasks import get_task, max_output_bytes

    cfg = rag_memory.config.conversation.model_copy(update={"entity_extractor": "engine"})
    budgets = {
        "entities": max_output_bytes("entities", {"text": "x"}),
        "rag_answer": max_output_bytes("rag_answer", get_task("rag_answer").example()),
    }
    agent = Agent(rag_memory, tiny_engine, config=cfg, scope="llm", max_tokens=budgets)
    ans = agent.ask("Why is the water of Blood Falls red?", conversation_id="llm")
    assert ans.served_by == "llama:tiny" and ans.tokens_counted_by == "engine"
    assert ans.prompt_tokens > 100 and ans.completion_tokens > 0
    assert all(1 <= c <= len(ans.sources) for c in ans.cited)
    assert ans.answer and agent.stm("llm").messages()[-1].content == ans.answer
    assert agent.ltm.counts()["facts"] == 1
    extractors = {e.attributes.get("extractor") for e in agent.ltm.all_entities()}
    assert "rules" not in extractors  # the model extracted them (relation ends carry none)


def test_memory_updates_are_all_or_nothing(rag_memory, monkeypatch) -> None:
    agent = Agent(rag_memory, None, scope="t4")

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(agent.ltm, "remember", broken)
    with pytest.raises(RuntimeError):
        agent.ask("Where is Lake Nyos?", conversation_id="t4")
    assert agent.stm("t4").messages() == []  # the conversation did not move either
    assert agent.ltm.counts()["facts"] == 0
