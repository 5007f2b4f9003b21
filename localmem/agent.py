"""The RAG agent: retrieve chunks, assemble the prompt with both memories, answer
through the engine, then update the memories.

The prompt follows the seed's order: system instructions, the short-term conversation, the
long-term facts, entities and relations, then the retrieved chunks with their sources (the
``rag_answer`` task in :mod:`localmem.answers.tasks.rag_answer`). With no model configured the
task's model-free implementation answers extractively from the chunks.

Local cost is tokens and seconds: every :class:`Answer` records the prompt and answer tokens
(the engine's own count; model-free: the prompt that would be sent, counted with the embedder's
tokenizer) and the seconds it took.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from localmem.answers.tasks.rag_answer import NOT_FOUND
from localmem.answers.tasks.rag_answer import SPEC as RAG_ANSWER
from localmem.chunking import tokenizer_for
from localmem.config import ConversationConfig
from localmem.conversation import LongTermMemory, ShortTermMemory
from localmem.conversation.entity_rules import Extraction
from localmem.conversation.tasks.entities import SPEC as ENTITIES
from localmem.errors import InputError
from localmem.types import Hit

if TYPE_CHECKING:
    from localmem.llm.base import Engine
    from localmem.llm.tasks import Implementation

DEFAULT_CONVERSATION = "default"


@dataclass(frozen=True)
class Source:
    """A retrieved chunk as the answer cites it."""

    memory_id: str
    source: str
    chunk_id: str | None
    score: float
    text: str


@dataclass(frozen=True)
class Answer:
    """What :meth:`Agent.ask` returns.

    Attributes:
        answer: The answer text.
        success: False when the answer says the sources do not tell.
        sources: The retrieved chunks, best first (``cited`` holds the ones the answer used).
        cited: 1-based positions in ``sources`` that the answer rests on.
        served_by: ``llama:<model>``, ``http:<model>`` or ``model-free``.
        prompt_tokens: Tokens of the prompt (see ``tokens_counted_by``).
        completion_tokens: Tokens of the answer.
        tokens_counted_by: ``engine`` or the local tokenizer that estimated them (model-free).
        seconds: Wall-clock time of the whole ask (retrieval, answer, memory updates).
        answer_seconds: Of which the answer itself.
        retrieval_ms: Of which the search.
        memory: How many STM messages, facts, entities and relations the prompt held.
    """

    question: str
    answer: str
    success: bool
    conversation_id: str
    sources: list[Source]
    cited: list[int]
    served_by: str
    prompt_tokens: int
    completion_tokens: int
    tokens_counted_by: str
    seconds: float
    answer_seconds: float
    retrieval_ms: float
    memory: dict[str, int] = field(default_factory=dict)
    entities_written: int = 0


@dataclass(frozen=True)
class Prepared:
    """What the agent gathered for a question before answering it."""

    question: str
    conversation_id: str
    hits: list[Hit]
    inputs: dict[str, Any]
    memory: dict[str, int]
    retrieval_ms: float


class Agent:
    """A question-answering agent over a memory store's chunks, with STM and LTM.

    Args:
        memory: The store (chunks are memories of kind ``chunk``, e.g. from ``localmem ingest``).
        engine: The model engine; default: the store's (None: model-free answers).
        config: The conversation settings (default: the store's).
        use_stm: Put the short-term conversation in the prompt and keep it up to date.
        use_ltm: Read long-term facts, entities and relations into the prompt; write them after.
        scope: Whose long-term memory (a user id); None is the shared scope.
        search: Extra options for :meth:`Memory.search` (filters, mode, stages).
        max_tokens: Output budget per model task (``rag_answer``, ``entities``); default: the
            task's own.
    """

    def __init__(
        self,
        memory: Any,
        engine: Engine | None = None,
        *,
        config: ConversationConfig | None = None,
        use_stm: bool = True,
        use_ltm: bool = True,
        scope: str | None = None,
        search: dict[str, Any] | None = None,
        max_tokens: dict[str, int] | None = None,
    ) -> None:
        self.memory = memory
        self.engine = engine if engine is not None else memory.engine
        self.config = config or memory.config.conversation
        self.use_stm = use_stm
        self.use_ltm = use_ltm
        self.search_options = dict(search or {})
        self.max_tokens = dict(max_tokens or {})
        self.ltm = LongTermMemory(memory, scope=scope, embed=memory.embedder.embed_batch)
        self._tokens = tokenizer_for(memory.embedder)

    def stm(self, conversation_id: str = DEFAULT_CONVERSATION) -> ShortTermMemory:
        """The short-term buffer of a conversation."""
        return ShortTermMemory(
            self.memory,
            conversation_id,
            budget_tokens=self.config.stm_budget_tokens,
            tokenizer=self._tokens,
        )

    def prepare(
        self, question: str, *, conversation_id: str = DEFAULT_CONVERSATION, k: int | None = None
    ) -> Prepared:
        """Retrieve and read the memories for a question: everything the prompt will hold."""
        if not isinstance(question, str) or not question.strip():
            raise InputError("a question needs text")
        started = time.perf_counter()
        hits = self._retrieve(question, k or self.config.retrieve_k)
        retrieval_ms = (time.perf_counter() - started) * 1000
        stm = self.stm(conversation_id)
        history = [m for m in stm.messages() if m.role != "system"] if self.use_stm else []
        facts, entities, relations = self._read_ltm(question)
        inputs = {
            "question": question,
            "chunks": [{"text": h.memory.content, "source": _source(h)} for h in hits],
            "history": [{"role": m.role, "content": m.content} for m in history],
            "facts": [f.line() for f in facts],
            "entities": [f"{e.name} ({e.type})" for e in entities],
            "relations": [r.line() for r in relations],
        }
        counts = {
            "stm_messages": len(history),
            "facts": len(facts),
            "entities": len(entities),
            "relations": len(relations),
        }
        return Prepared(question, conversation_id, hits, inputs, counts, retrieval_ms)

    def prompt(
        self, question: str, *, conversation_id: str = DEFAULT_CONVERSATION, k: int | None = None
    ) -> list[Any]:
        """The chat messages the engine would get for this question (nothing is written)."""
        spec = RAG_ANSWER
        inputs = self.prepare(question, conversation_id=conversation_id, k=k).inputs
        return spec.build_prompt(spec.inputs.model_validate(inputs))

    def ask(
        self, question: str, *, conversation_id: str = DEFAULT_CONVERSATION, k: int | None = None
    ) -> Answer:
        """Answer a question from the store's chunks and the agent's memories, then remember it.

        Raises:
            InputError: An empty question, or bad search options.
            SchemaError: The model's output stayed invalid after a retry.
        """
        from localmem.llm import TaskContext, run_task

        started = time.perf_counter()
        prep = self.prepare(question, conversation_id=conversation_id, k=k)
        context = TaskContext(embedder=self.memory.embedder, config=self.memory.config)
        result = run_task(
            RAG_ANSWER,
            prep.inputs,
            engine=self.engine,
            context=context,
            max_tokens=self.max_tokens.get("rag_answer"),
        )
        text = result.value.answer.strip()
        success = text != NOT_FOUND
        prompt_tokens, completion_tokens, counted_by = self._usage(result, prep.inputs, text)
        found = self._entities_to_write(question, text, prep.hits)
        with self.memory.kernel.writing():  # both memories change together or not at all
            if self.use_stm:
                stm = self.stm(conversation_id)
                stm.add("user", question)
                stm.add("assistant", text)
            written = self._write_ltm(question, text, success, found, conversation_id)
        sources = [
            Source(
                h.memory.id,
                _source(h),
                h.memory.metadata.get("chunk_id"),
                float(h.score),
                h.memory.content,
            )
            for h in prep.hits
        ]
        return Answer(
            question=question,
            answer=text,
            success=success,
            conversation_id=conversation_id,
            sources=sources,
            cited=[int(s) for s in result.value.sources],
            served_by=result.served_by,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            tokens_counted_by=counted_by,
            seconds=time.perf_counter() - started,
            answer_seconds=float(result.usage.seconds),
            retrieval_ms=prep.retrieval_ms,
            memory=prep.memory,
            entities_written=written,
        )

    # -- steps ---------------------------------------------------------------------------------
    def _retrieve(self, question: str, k: int) -> list[Hit]:
        options = {"mode": self.config.retrieve_mode, "kinds": ["chunk"], **self.search_options}
        return list(self.memory.search(question, k=k, **options).hits)

    def _read_ltm(self, question: str) -> tuple[list, list, list]:
        if not self.use_ltm:
            return [], [], []
        cfg = self.config
        query_vector = (
            self.memory.embedder.embed_query(question) if cfg.fact_order == "relevance" else None
        )
        facts = self.ltm.facts(
            limit=cfg.ltm_facts,
            min_salience=cfg.ltm_min_salience,
            order=cfg.fact_order,
            query_vector=query_vector,
        )
        named = self._rule_extraction(question).names()
        lowered = question.lower()
        named += [e.name for e in self.ltm.all_entities() if e.name.lower() in lowered]
        entities = self.ltm.entities(limit=cfg.ltm_entities, prefer=named)
        relations = self.ltm.relations(
            limit=cfg.ltm_relations, prefer=named + [e.name for e in entities]
        )
        return facts, entities, relations

    def _entities_to_write(self, question: str, answer: str, hits: list[Hit]) -> Extraction:
        """The seed's write policy: entities of the question, the answer and the top chunk."""
        if not (self.use_ltm and self.config.write_entities):
            return Extraction()
        top = hits[0].memory.content[: self.config.entity_source_chars] if hits else ""
        return self.extract(f"{question}\n{answer}\n{top}")

    def _write_ltm(
        self, question: str, answer: str, success: bool, found: Extraction, conversation_id: str
    ) -> int:
        if not self.use_ltm:
            return 0
        cfg = self.config
        if cfg.write_facts:
            self.ltm.add_fact(
                question,
                answer,
                salience=cfg.fact_salience if success else cfg.unanswered_salience,
                success=success,
                conversation_id=conversation_id,
            )
        if not found.entities and not found.relations:
            return 0
        n_entities, _ = self.ltm.remember(found.entities, found.relations)
        return n_entities

    def extract(self, text: str) -> Extraction:
        """Entities and relations of ``text`` with the configured extractor."""
        from localmem.llm import TaskContext, run_task

        implementation: dict[str, Implementation] = {
            "rules": "model-free",
            "engine": "model",
            "auto": "auto",
        }
        config = self.memory.config.model_copy(update={"conversation": self.config})
        result = run_task(
            ENTITIES,
            {"text": text},
            engine=self.engine,
            context=TaskContext(embedder=self.memory.embedder, config=config),
            implementation=implementation[self.config.entity_extractor],
            max_tokens=self.max_tokens.get("entities"),
        )
        graph = result.value
        by = "rules" if result.served_by == "model-free" else result.served_by
        return Extraction(
            tuple((e.name, e.type, {"extractor": by}) for e in graph.entities),
            tuple((r.source, r.relation, r.target) for r in graph.relations),
        )

    def _rule_extraction(self, text: str) -> Extraction:
        from localmem.conversation.entity_rules import extract_rules

        return extract_rules(text, phenomena=self.config.phenomena)

    def _usage(self, result: Any, inputs: dict[str, Any], answer: str) -> tuple[int, int, str]:
        usage = result.usage
        if usage.prompt_tokens or usage.completion_tokens:
            return int(usage.prompt_tokens), int(usage.completion_tokens), "engine"
        spec = RAG_ANSWER
        messages = spec.build_prompt(spec.inputs.model_validate(inputs))
        prompt = sum(self._tokens(m.render()) for m in messages)
        return prompt, self._tokens(answer), self._tokens.name


def _source(hit: Hit) -> str:
    meta = hit.memory.metadata
    return str(meta.get("title") or meta.get("source") or hit.memory.id)
