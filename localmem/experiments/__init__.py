"""Experiments and benchmarks: the seeds' protocols (MemInsight, A-Mem, Mem^p, RAG), the LoCoMo
benchmark, the LLM judge, reranker training, reports and plots.

The top of the library: it uses the public API (:class:`localmem.Memory`) and the mechanisms'
own modules; nothing below imports it. Plots need matplotlib (``pip install -e
'.[experiments]'``); without it a report is written without its picture.
"""

from __future__ import annotations

from localmem.experiments import judge
from localmem.mechanisms import register_tasks

register_tasks((judge.SPEC,))  # listed with every other task by `localmem doctor`
