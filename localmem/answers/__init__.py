"""Answering a question from memories: the ``answer`` task (a question over numbered memories,
seed 004's answer prompt) and the ``rag_answer`` task (the RAG agent's prompt, seed 003), with
their model-free, extractive implementation (:mod:`~localmem.answers.extractive`)."""
