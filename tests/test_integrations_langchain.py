"""The LangChain retriever and tools on localmem: documents with their memory's metadata, a
real LCEL chain (retriever | formatting | prompt), tools a model would call, and the same
through a served store."""

from __future__ import annotations

import json

import pytest
from langchain_core.documents import Document
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

import localmem
from localmem.errors import InputError
from localmem.integrations.langchain import LocalmemRetriever, memory_tools


def _fill(mem) -> None:
    mem.add("Maya is allergic to peanuts", user_id="maya", kind="fact")
    mem.add(
        "Maya ran the Berlin marathon",
        user_id="maya",
        event_time="2023-09-24T09:00:00+02:00",
        metadata={"source": "diary.md"},
    )
    mem.add("Noah is allergic to cats", user_id="noah", kind="fact")


def test_the_retriever_gives_documents_with_the_memory_metadata(memory):
    _fill(memory)
    retriever = LocalmemRetriever(memory=memory, k=2, user_id="maya")
    docs = retriever.invoke("what is Maya allergic to")
    assert all(isinstance(d, Document) for d in docs) and len(docs) == 2
    top = docs[0]
    assert top.page_content == "Maya is allergic to peanuts"
    assert top.id == top.metadata["id"]
    assert set(top.metadata) >= {"id", "score", "kind", "time", "source", "user_id"}
    assert top.metadata["kind"] == "fact" and top.metadata["user_id"] == "maya"
    marathon = next(d for d in docs if "marathon" in d.page_content)
    assert marathon.metadata["time"] == "2023-09-24T07:00:00+00:00"
    assert marathon.metadata["source"] == "diary.md"
    assert all(d.metadata["user_id"] == "maya" for d in docs)  # the option applies
    with pytest.raises(InputError, match="not options of search"):
        LocalmemRetriever(memory=memory, usr_id="maya")


def test_a_chain_answers_from_memories(memory):
    _fill(memory)
    retriever = LocalmemRetriever(memory=memory, k=1, kinds=["fact"])
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Known facts:\n{context}"), ("human", "{question}")]
    )
    chain = {
        "context": retriever | RunnableLambda(lambda ds: "\n".join(d.page_content for d in ds)),
        "question": RunnablePassthrough(),
    } | prompt
    value = chain.invoke("Is Noah allergic to anything?")
    system, human = value.to_messages()
    assert system.content == "Known facts:\nNoah is allergic to cats"
    assert human.content == "Is Noah allergic to anything?"
    batch = retriever.batch(["peanuts", "cats"])
    assert [docs[0].page_content for docs in batch] == [
        "Maya is allergic to peanuts",
        "Noah is allergic to cats",
    ]


def test_tools_remember_and_recall_within_their_scope(memory):
    _fill(memory)
    remember, recall = memory_tools(memory, user_id="maya")
    assert remember.name == "remember" and recall.name == "recall"
    schema = recall.args_schema.model_json_schema()
    assert schema["required"] == ["query"]
    assert schema["properties"]["query"]["description"]  # from the declaration
    assert "time" in recall.description and "memory" in remember.description
    stored = json.loads(remember.invoke({"content": "Maya is learning Japanese"}))
    assert memory.get(stored["id"]).user_id == "maya"
    found = json.loads(recall.invoke({"query": "which language is she learning", "k": 1}))
    assert found[0]["content"] == "Maya is learning Japanese"
    assert set(found[0]) == {"id", "content", "score", "relevance", "kind", "time", "source"}
    noah = json.loads(recall.invoke({"query": "allergic to cats", "k": 5}))
    assert all("Noah" not in hit["content"] for hit in noah)  # another user's: out of reach
    # a call a model might make wrongly is refused by the schema, before the store
    with pytest.raises(Exception, match="k"):
        recall.invoke({"query": "x", "k": 0})


@pytest.mark.slow
def test_retriever_and_tools_on_a_served_store(tmp_path):
    from test_serve import start_server, stop_server

    store = tmp_path / "store"
    proc = start_server(store)
    try:
        with localmem.Memory.connect(store) as client:
            _fill(client)
            docs = LocalmemRetriever(memory=client, k=1, user_id="noah").invoke("allergy")
            assert docs[0].page_content == "Noah is allergic to cats"
            remember, recall = memory_tools(client, user_id="noah")
            remember.invoke({"content": "Noah moved to Oslo"})
            assert json.loads(recall.invoke({"query": "where does Noah live", "k": 1}))[0][
                "content"
            ] == ("Noah moved to Oslo")
    finally:
        stop_server(proc)
