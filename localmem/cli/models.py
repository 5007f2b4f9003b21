"""``localmem models``: list the models on disk and verify a GGUF file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from localmem.console import print_json, store_options, store_path


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``models`` command."""
    common = store_options()
    p = sub.add_parser(
        "models",
        parents=[common],
        help="list GGUF and embedding models found on disk, or verify a GGUF",
        description="Without a path: list the models in the search folders (engine.model_path, "
        "engine.models_dir, $LOCALMEM_HOME/models, ./models). With a path: verify that GGUF.",
    )
    p.add_argument(
        "action",
        nargs="?",
        choices=("list", "verify"),
        default="list",
        help="list the models found (default) or verify the GGUF at PATH",
    )
    p.add_argument("path", nargs="?", help="the GGUF file to verify")
    p.add_argument(
        "--load",
        action="store_true",
        help="with verify: also load it with llama.cpp and generate a few tokens",
    )
    p.set_defaults(func=cmd_models)


def _config(args: argparse.Namespace):
    from localmem.config import CONFIG_FILE, Config

    store = store_path(args)
    if isinstance(store, str):  # a PostgreSQL store: its settings live in its local folder
        from localmem.store.postgres.store import local_folder

        store = local_folder(store)
    path = store / CONFIG_FILE
    return Config.load(path) if path.exists() else Config()


def human_size(n: int) -> str:
    """Bytes as a short human size: ``1.1 GB``."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit in ("B", "KB") else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def _params(n: int) -> str:
    return f"{n / 1e9:.1f}B" if n >= 1e9 else f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.0f}K"


def gguf_facts(info) -> dict[str, Any]:
    """What the listing shows about one GGUF."""
    from localmem.llm.templates import guess_template

    return {
        "path": str(info.path),
        "name": info.name,
        "size_bytes": info.size_bytes,
        "architecture": info.architecture,
        "parameters": info.parameter_count,
        "quantization": info.quantization,
        "context_length": info.context_length,
        "chat_template": info.chat_template is not None,
        "guessed_template": None if info.chat_template else guess_template(info),
        "gguf_version": info.version,
        "tensors": info.tensor_count,
    }


def _template_fix(info) -> str:
    from localmem.llm.templates import guess_template

    guess = guess_template(info)
    if guess:
        return f"the built-in '{guess}' template is guessed; engine.chat_template overrides it"
    return "set engine.chat_template to gemma, chatml, llama3 or a Jinja template"


def cmd_models(args: argparse.Namespace) -> int:
    """localmem models [list | verify PATH]"""
    if args.action == "verify" or args.path:
        if not args.path:
            from localmem.console import CommandError

            raise CommandError("models verify needs the path of a GGUF file")
        return _verify(Path(args.path), load=args.load, as_json=args.json)
    return _list(_config(args), as_json=args.json)


def _verify(path: Path, *, load: bool, as_json: bool) -> int:
    from localmem.llm.gguf_header import read_gguf

    info = read_gguf(path)  # a bad file raises ModelError: one line from the CLI
    facts = gguf_facts(info)
    if load:
        facts["load"] = _try_load(info)
    if as_json:
        print_json(facts)
        return 0
    print(f"{info.path}: valid GGUF v{info.version}")
    print(f"  name:          {info.name}")
    print(f"  architecture:  {info.architecture} ({_params(info.parameter_count)} parameters)")
    print(f"  quantization:  {info.quantization}")
    print(f"  size:          {human_size(info.size_bytes)}")
    print(f"  context:       {info.context_length or 'unknown'} tokens")
    template = "yes" if info.chat_template else f"NO ({_template_fix(info)})"
    print(f"  chat template: {template}")
    if info.unverified_tensors:
        print(f"  note: {info.unverified_tensors} tensors of a type this reader does not know")
    if load:
        got = facts["load"]
        print(
            f"  llama.cpp:     loaded, {got['completion_tokens']} tokens in "
            f"{got['seconds']:.2f} s ({got['tokens_per_second']:.1f} tokens/s)"
        )
    return 0


def _try_load(info) -> dict[str, Any]:
    from localmem.llm.host import HostEngine

    # A file without a template is still loadable: ChatML is enough for a smoke test. In the
    # model host: a file that crashes llama.cpp is reported, typed, by this command.
    template = None if info.chat_template else "chatml"
    engine = HostEngine(info.path, n_ctx=512, max_tokens=16, chat_template=template, info=info)
    gen = engine.generate_text([{"role": "user", "content": "Say hello."}], max_tokens=16)
    return {
        "completion_tokens": gen.usage.completion_tokens,
        "seconds": gen.usage.seconds,
        "tokens_per_second": gen.usage.tokens_per_second,
    }


def _list(config, *, as_json: bool) -> int:
    from localmem.llm.discovery import choose_gguf, find_models, search_dirs

    found = find_models(config.engine)
    explicit = next((m for m in found if m.source == "config" and m.kind == "gguf"), None)
    if explicit is not None and explicit.info is None:
        chosen_path, problem = None, explicit.error  # a configured file must be valid
    else:
        chosen = explicit.info if explicit is not None else choose_gguf(found, config.engine)
        chosen_path, problem = (chosen.path if chosen else None), None
    rows = []
    for m in found:
        row: dict[str, Any] = {"path": str(m.path), "kind": m.kind, "source": m.source}
        if m.info is not None:
            row |= gguf_facts(m.info)
        row["error"] = m.error
        row["selected"] = chosen_path is not None and m.path == chosen_path
        rows.append(row)
    if as_json:
        print_json(
            {
                "search": [str(p) for p, _ in search_dirs(config.engine)],
                "models": rows,
                "engine_model": str(chosen_path) if chosen_path else None,
                "problem": problem,
            }
        )
        return 0
    print("searched: " + ", ".join(str(p) for p, _ in search_dirs(config.engine)))
    if not rows:
        print("no models found; see models/README.md for where to put a GGUF file")
    for row in rows:
        mark = "*" if row["selected"] else " "
        if row["kind"] == "sentence-transformers":
            print(f"{mark} {row['path']}  sentence-transformers folder")
        elif row["error"]:
            why = row["error"].removeprefix(f"{row['path']}: ")
            print(f"{mark} {row['path']}  UNREADABLE: {why}")
        else:
            template = "chat template" if row["chat_template"] else "NO chat template"
            if row.get("guessed_template"):
                template += f" (built-in '{row['guessed_template']}' guessed)"
            print(
                f"{mark} {row['path']}  {human_size(row['size_bytes'])}, {row['architecture']}, "
                f"{row['quantization']}, context {row['context_length']}, {template}"
            )
    if chosen_path:
        print(f"* engine.kind=auto uses {chosen_path}")
    elif problem:
        print(f"engine problem: {problem}")
    else:
        print("no usable GGUF: model tasks run model-free")
    return 0
