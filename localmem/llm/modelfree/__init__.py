"""Model-free implementations of model tasks: pure functions over text (and an embedder).

Each module serves one task; the task's ``SPEC`` in ``localmem/llm/prompts/`` names it. They
take plain data and return plain results, so they can be tested and reused without a model.
"""
