"""The answering tasks: a question over numbered memories, and the RAG agent's prompt."""
