"""The config sections of the mechanisms: attributes, evolution, procedures, conversation,
consolidation."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from localmem.config.base import Section


class AttributeConfig(Section):
    """MemInsight attribute mining: see localmem/attributes/."""

    mine_on_add: Literal["off", "inline", "deferred"] = Field(
        "off", description="Mine attributes when a memory is added, now or as a background job."
    )
    miner: Literal["auto", "model-free", "engine"] = Field(
        "auto",
        description="auto: the model engine when one is configured, else model-free "
        "(key phrases + zero-shot labels); engine: always the model (an error without one).",
    )
    label_set: str = Field(
        "everyday",
        description="Built-in intents/topics: 'everyday' (life, work and software; the "
        "model-free miner picks the part that fits each memory), or one set forced for every "
        "memory: 'software' (the seed's enums) or 'conversation' (personal chats such as LoCoMo).",
    )
    label_file: str | None = Field(
        None, description="A JSON file with a custom label set (overrides label_set)."
    )
    intents: tuple[str, ...] | None = Field(
        None, description="Only these intents of the label set (unknown names are added)."
    )
    topics: tuple[str, ...] | None = Field(
        None, description="Only these topics of the label set (unknown names are added)."
    )
    max_entities: int = Field(5, ge=1, le=10, description="Most entities mined per memory.")
    min_entities: int = Field(
        3, ge=0, le=10, description="Entities kept even when weak (if the text has that many)."
    )
    secondary_ratio: float = Field(
        0.75,
        ge=0.0,
        le=1.0,
        description="A second intent/topic is stored (rank 1) when its confidence is at least "
        "this share of the first's; only the comprehensive strategy matches on it.",
    )
    refined_min_confidence: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        description="The refined strategy ignores intent/topic labels less confident than this.",
    )
    entity_match: float = Field(
        0.5,
        gt=0.0,
        le=1.0,
        description="Least overlap of two entities' terms (shared / smaller set) to match.",
    )
    boost_weight: float = Field(
        0.3, ge=0.0, description="Score bonus per matched axis, as a share of the score."
    )
    temperature: float = Field(
        0.05, gt=0.0, description="Softmax temperature turning label similarities into confidences."
    )
    aliases: dict[str, str] = Field(
        default_factory=dict,
        description="Extra entity aliases (spelling -> canonical), on top of the built-in ones.",
    )
    query_cache_size: int = Field(
        1024, ge=0, description="Mined query attributes kept in memory (keyed by text and miner)."
    )
    max_tokens: int | None = Field(
        None, ge=16, description="Most tokens the model may write per text (None: the task's)."
    )


class EvolutionConfig(Section):
    """A-Mem memory evolution."""

    neighbours: int = Field(3, ge=1, le=50, description="Related memories considered per add.")
    mode: Literal["inline", "deferred"] = "inline"
    max_tokens_per_add: int = Field(
        2000, ge=0, description="Model tokens one add may spend on evolving its neighbours."
    )
    max_output_tokens: int = Field(
        300,
        ge=64,
        description="Most tokens a model may write per neighbour; a neighbour is only asked "
        "when prompt plus this still fit the add's token budget.",
    )
    scope: Literal["user", "session", "store"] = Field(
        "user",
        description="Where neighbours are looked for: memories of the same user (the default), "
        "the same session, or the whole store. Only memories older than the new one count.",
    )
    min_similarity: float = Field(
        0.3, ge=-1.0, le=1.0, description="Least cosine similarity for a memory to be a neighbour."
    )
    rewrite_context: bool = Field(
        True, description="Let evolution rewrite neighbours' contexts (False: only link them)."
    )
    link_similarity: float | None = Field(
        None,
        ge=-1.0,
        le=1.0,
        description="Model-free: link a neighbour only from this similarity on (default: the "
        "value calibrated for the store's embedder on labelled pairs, 0.55 for an embedder "
        "without one).",
    )
    rare_share: float = Field(
        0.05,
        gt=0.0,
        le=1.0,
        description="Model-free: a word in more than this share of the memories is too common "
        "to name a connection (stores under 50 memories: every word may).",
    )
    max_context_chars: int = Field(
        400,
        ge=80,
        le=400,
        description="Model-free: longest evolved context; the oldest templated lines go first.",
    )
    link_decay: float = Field(
        0.9,
        gt=0.0,
        le=1.0,
        description="Search stage `links`: a linked memory scores this share of its source hit.",
    )
    link_hits: int = Field(
        5, ge=1, le=100, description="Search stage `links`: how many top hits are expanded."
    )
    link_fanout: int = Field(
        3, ge=1, le=50, description="Search stage `links`: most linked memories added per hit."
    )


class ProcedureConfig(Section):
    """Mem^p procedural memory."""

    threshold: float = Field(
        0.7,
        ge=0.0,
        le=1.0,
        description="Least score for find() to match (score = trigger cosine + type_weight on a "
        "task-type match + the reliability term).",
    )
    retire_after_uses: int = Field(3, ge=1, description="Uses before the success rate counts.")
    retire_below: float = Field(0.5, ge=0.0, le=1.0, description="Success rate that retires.")
    default_level: Literal["concrete", "abstract", "hybrid"] = Field(
        "hybrid",
        description="Abstraction level when none is asked for (hybrid: abstract steps plus one "
        "concrete example, the variant the paper found best).",
    )
    type_weight: float = Field(
        0.1, ge=0.0, le=1.0, description="Added to a match's score when the task types agree."
    )
    reliability_weight: float = Field(
        0.2,
        ge=0.0,
        le=1.0,
        description="Weight of the smoothed success rate around 0.5: promotes procedures that "
        "worked, demotes ones that failed.",
    )
    max_steps: int = Field(
        8, ge=2, le=8, description="Most steps a procedure keeps (the task schema allows 8)."
    )
    max_tokens: int | None = Field(
        None,
        ge=16,
        description="Output budget of the abstraction and reflection tasks (None: the task's).",
    )
    implementation: Literal["auto", "model", "model-free"] = Field(
        "auto",
        description="Who abstracts and reflects: auto (the engine when there is one, else "
        "model-free), model (the engine only), model-free (never the engine).",
    )
    candidates: int = Field(
        20, ge=1, le=1000, description="Triggers scored per find (nearest by the vector index)."
    )


class ConversationConfig(Section):
    """Short- and long-term agent memory and the RAG agent."""

    stm_budget_tokens: int = Field(2000, ge=64, description="Tokens kept in the rolling buffer.")
    ltm_facts: int = Field(5, ge=0, description="Facts read into a prompt.")
    ltm_min_salience: float = Field(0.3, ge=0.0, le=1.0, description="Least salience read.")
    ltm_entities: int = Field(10, ge=0, description="Entities read into a prompt.")
    ltm_relations: int = Field(15, ge=0, description="Relations read into a prompt.")
    fact_order: Literal["salience", "relevance"] = Field(
        "salience",
        description="Which facts are read: the most salient (newest first among equals, as the "
        "seed) or the most similar to the question among those salient enough.",
    )
    write_facts: bool = Field(True, description="Store the question-answer pair after an answer.")
    fact_salience: float = Field(
        0.7, ge=0.0, le=1.0, description="Salience of a fact whose question was answered."
    )
    unanswered_salience: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Salience of a fact whose answer said the sources do not tell (success false).",
    )
    write_entities: bool = Field(
        True, description="Extract entities and relations after an answer and store them."
    )
    entity_source_chars: int = Field(
        500, ge=0, description="Characters of the top retrieved chunk read for entities."
    )
    entity_extractor: Literal["rules", "engine", "auto"] = Field(
        "rules",
        description="rules: the seed's pattern rules (no model); engine: the 'entities' model "
        "task; auto: the engine when a model is configured, else the rules.",
    )
    phenomena: tuple[str, ...] = Field(
        (),
        description="Names (or regular expressions) the rule-based extractor tags as "
        "phenomena, e.g. the titles of the documents of a corpus.",
    )
    retrieve_k: int = Field(3, ge=1, le=100, description="Chunks retrieved for an answer.")
    retrieve_mode: Literal["hybrid", "dense", "lexical"] = Field(
        "dense", description="How chunks are retrieved (the seed: dense similarity)."
    )


class ConsolidationConfig(Section):
    """Hierarchical consolidation: episodic -> semantic -> meta."""

    threshold: float = Field(
        0.55, ge=-1.0, le=1.0, description="Least average cosine similarity within a cluster."
    )
    min_cluster: int = Field(2, ge=1, le=8, description="Fewest memories a fact is made from.")
    max_cluster: int = Field(
        8, ge=2, le=8, description="Most memories in a cluster (a fact cites at most 8)."
    )
    within: Literal["scope", "session"] = Field(
        "scope", description="session: never cluster memories of different sessions."
    )
    window_days: float | None = Field(
        None, gt=0, description="Never cluster memories further apart in time (None: no bound)."
    )
    duplicate_similarity: float = Field(
        0.9, ge=0.0, le=1.0, description="A new fact this close to a known one extends it."
    )
    attach_similarity: float = Field(
        0.7,
        ge=0.0,
        le=1.0,
        description="A left-over memory this close to a fact is linked to it as a source.",
    )
    meta_min_facts: int = Field(
        2, ge=1, description="Facts a preference or habit must show in to become a meta memory."
    )
    implementation: Literal["auto", "model", "model-free"] = Field(
        "auto", description="auto: the engine when there is one, else extraction."
    )
    max_tokens: int | None = Field(None, ge=64, description="Output budget per cluster.")


class InferConfig(Section):
    """Inference on add: extract facts and reconcile them with what is stored."""

    on_add: bool = Field(
        False,
        description="Infer on every Memory.add / add_many of this store unless the call says "
        "otherwise (raw storage when false; the agent's long-term memory and conversation "
        "ingest infer regardless).",
    )
    extractor: Literal["auto", "model-free", "engine"] = Field(
        "auto", description="Who extracts the facts: the engine when configured, else rules."
    )
    decider: Literal["auto", "model-free", "engine"] = Field(
        "auto", description="Who reconciles a fact with its neighbours (the reconcile task)."
    )
    neighbours: int = Field(
        8,
        ge=1,
        le=50,
        description="Existing memories (dense + lexical) each fact is checked against.",
    )
