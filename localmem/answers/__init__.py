"""Answering a question from memories: the ``answer`` task (a question over numbered memories,
the enhanced answer prompt) and the ``rag_answer`` task (the RAG agent's prompt), with
their model-free, extractive implementation (:mod:`~localmem.answers.extractive`)."""
