"""Find the models a user has put on disk: GGUF files and sentence-transformers folders.

Searched, in this order (the first GGUF that can serve wins in ``engine.kind = "auto"``):

1. ``engine.model_path`` from the config (a file, or a folder to search);
2. ``engine.models_dir`` from the config;
3. ``$LOCALMEM_HOME/models`` (``~/.localmem/models`` by default);
4. ``./models`` in the current directory.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from localmem.config import EngineConfig, localmem_home
from localmem.errors import ModelError
from localmem.llm.gguf_header import GGUFInfo, read_gguf

log = logging.getLogger("localmem.llm")

Source = Literal["config", "models_dir", "home", "cwd"]
# Files a sentence-transformers model folder holds at its top level.
_ST_MARKERS = ("modules.json", "config_sentence_transformers.json")


@dataclass(frozen=True)
class FoundModel:
    """One model on disk: a GGUF (with its header, or why it cannot be read) or an embedder."""

    path: Path
    kind: Literal["gguf", "sentence-transformers"]
    source: Source
    info: GGUFInfo | None = None
    error: str | None = None

    @property
    def usable(self) -> bool:
        """A readable GGUF (embedder folders are listed, not served by the engine)."""
        return self.kind == "gguf" and self.info is not None


def search_dirs(config: EngineConfig) -> list[tuple[Path, Source]]:
    """The folders searched for models, in priority order, without duplicates."""
    out: list[tuple[Path, Source]] = []
    if config.model_path and Path(config.model_path).expanduser().is_dir():
        out.append((Path(config.model_path).expanduser(), "config"))
    if config.models_dir:
        out.append((Path(config.models_dir).expanduser(), "models_dir"))
    out.append((localmem_home() / "models", "home"))
    out.append((Path.cwd() / "models", "cwd"))
    seen, unique = set(), []
    for path, source in out:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            unique.append((path, source))
    return unique


def _inspect(path: Path, source: Source) -> FoundModel:
    try:
        return FoundModel(path, "gguf", source, info=read_gguf(path))
    except ModelError as exc:
        return FoundModel(path, "gguf", source, error=str(exc))


def find_models(config: EngineConfig) -> list[FoundModel]:
    """Every GGUF file and sentence-transformers folder in the search places.

    Unreadable GGUF files are listed with their error rather than raised, so one bad download
    does not hide the good ones.
    """
    found: list[FoundModel] = []
    seen: set[Path] = set()
    explicit = Path(config.model_path).expanduser() if config.model_path else None
    if explicit is not None and not explicit.is_dir():
        found.append(_inspect(explicit, "config"))
        seen.add(explicit.resolve())
    for folder, source in search_dirs(config):
        if not folder.is_dir():
            continue
        for entry in sorted(folder.iterdir()):
            if entry.resolve() in seen:
                continue
            if entry.is_file() and entry.suffix.lower() == ".gguf":
                found.append(_inspect(entry, source))
            elif entry.is_dir() and any((entry / m).exists() for m in _ST_MARKERS):
                found.append(FoundModel(entry, "sentence-transformers", source))
            else:
                continue
            seen.add(entry.resolve())
    return found


def choose_gguf(found: list[FoundModel], config: EngineConfig) -> GGUFInfo | None:
    """The first readable GGUF that can chat: one with a template of its own (or any, when one
    is configured), else the first whose template can be guessed from its architecture."""
    from localmem.llm.templates import guess_template

    readable = [m.info for m in found if m.info is not None and m.kind == "gguf"]
    for info in readable:
        if info.chat_template is not None or config.chat_template not in (None, "auto"):
            return info
    return next((info for info in readable if guess_template(info) is not None), None)


def select_gguf(config: EngineConfig) -> GGUFInfo | None:
    """The GGUF the llama.cpp engine should load, or None when there is none.

    ``engine.model_path`` naming a file wins and must be valid. Otherwise the first readable
    GGUF with a chat template (or any, when ``engine.chat_template`` supplies one) is chosen,
    else the first whose template can be guessed (a base model, usually: the engine warns);
    unreadable files are skipped with a warning.

    Raises:
        ModelError: ``engine.model_path`` names a file that is missing or not a valid GGUF.
    """
    if config.model_path and not Path(config.model_path).expanduser().is_dir():
        return read_gguf(config.model_path)
    found = find_models(config)
    for model in found:
        if model.kind == "gguf" and model.info is None:
            log.warning("skipping %s", model.error)
    chosen = choose_gguf(found, config)
    usable = [m for m in found if m.usable]
    if chosen is not None and len(usable) > 1:
        log.info("several GGUF models found; using %s (set engine.model_path)", chosen.path)
    return chosen
