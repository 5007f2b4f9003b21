"""``localmem doctor``'s look at the model host: the CPU probe, run now, and the health reset."""

from __future__ import annotations

import importlib.util

from localmem.config import EngineConfig
from localmem.errors import LocalMemError
from localmem.llm.discovery import select_gguf
from localmem.llm.host import probe
from localmem.llm.host.supervisor import clear_unhealthy


def doctor(config: EngineConfig) -> tuple[bool, str] | None:
    """``localmem doctor``'s engine check: probe the GGUF the engine would load, now.

    The verdict is remembered, and every unhealthy mark of this LOCALMEM_HOME is cleared (a
    served store's host may start again on its next call). None when no GGUF would be loaded.

    Returns:
        ``(ok, line)``: the line says ``ok``, ``crashed with SIGNAL`` or ``fixed by setting``,
        with the reason.
    """
    if config.kind not in ("auto", "llama"):
        return None
    try:
        info = select_gguf(config)
    except LocalMemError as exc:
        return False, str(exc)
    if info is None:
        return None
    if importlib.util.find_spec("llama_cpp") is None:
        return config.kind == "auto", (
            f"{info.path.name}: llama-cpp-python is not installed (`pip install 'localmem[llama]'`)"
        )
    verdict = probe.probe(
        str(info.path),
        n_threads=config.n_threads,
        n_gpu_layers=config.n_gpu_layers,
        timeout_s=max(config.timeout_s, 300.0),
    )
    key = probe.fingerprint(str(info.path), n_gpu_layers=config.n_gpu_layers)
    probe.remember(key, verdict)
    clear_unhealthy()
    words = {
        "ok": "ok",
        "fixed-by-setting": f"fixed by setting {probe.SETTING}",
        "crashed": f"crashed with {verdict.signal}",
        "error": "could not load",
    }[verdict.status]
    return verdict.usable, f"{info.path.name}: {words}: {verdict.detail} ({verdict.seconds:.1f} s)"
