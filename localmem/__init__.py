"""localmem: a fully local memory system for LLM agents."""
