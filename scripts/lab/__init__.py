"""Experiments and benchmarks: the seeds' protocols (MemInsight, A-Mem, Mem^p, RAG), the LoCoMo
benchmark, the LLM judge, reranker training, reports and plots.

The top of the library: it uses the public API (:class:`localmem.Memory`) and the mechanisms'
public modules; nothing below imports it. :mod:`~lab.registry` lists what the
command line and the TUI can run. Plots need matplotlib (``pip install -e '.[experiments]'``);
without it a report is written without its picture.
"""
