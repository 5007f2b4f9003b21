"""The experiments (``python scripts/experiment.py NAME``) and benchmarks (the same script)."""

from __future__ import annotations

from lab import (
    amem_command,
    locomo_command,
    meminsight_command,
    memp_command,
    rag_command,
)
from lab.command import Experiment

#: the seed experiments, by name
EXPERIMENTS: dict[str, Experiment] = {
    "meminsight": meminsight_command.EXPERIMENT,  # seed 000
    "amem": amem_command.EXPERIMENT,  # seed 001
    "memp": memp_command.EXPERIMENT,  # seed 002
    "rag": rag_command.EXPERIMENT,  # seed 003
}

#: benchmarks on public data, by name
BENCHMARKS: dict[str, Experiment] = {"locomo": locomo_command.EXPERIMENT}
