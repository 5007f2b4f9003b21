"""The model tasks of retrieval: query expansion and reranking by the engine."""
