"""localmem inside agent frameworks: :mod:`.langgraph` (a LangGraph ``BaseStore``, extra
``localmem[langgraph]``) and :mod:`.langchain` (a retriever and tools, ``localmem[langchain]``).
Each works on an open :class:`localmem.Memory` and on a ``Memory.connect`` client alike: they
speak only the declared API (:class:`localmem.api.MemoryAPI`)."""
