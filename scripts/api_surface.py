"""Count the surfaces of the public API (issue 31): what is declared, what is kept by hand.

Usage:
    python scripts/api_surface.py [--json] [--before CHECKOUT --docs docs/benchmarks.md]

With ``--before`` (a checkout of the code before, e.g. ``git archive main | tar -x -C DIR``)
the same counts are taken there too (``PYTHONPATH=CHECKOUT``) and both go to the
``api-surface`` section of ``--docs``.

Counts, for the checkout whose ``localmem`` is imported: the operations the declaration holds
(localmem/api; 0 before it existed), Memory's public names, the methods written by hand in the
remote client (RemoteMemory and RemoteProcedures: their own definitions, not those made from
the declaration), the server's methods and the names of its hand-kept read list, the MCP tools,
their parameters and how many are described, and the lines of mcp_server.py and server/app.py.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))


def count() -> dict[str, int]:
    import localmem
    from localmem.mcp_server import build_server
    from localmem.memory import Memory
    from localmem.remote import RemoteMemory
    from localmem.remote.procedures import RemoteProcedures
    from localmem.server import app

    root = Path(localmem.__file__).parent
    try:
        from localmem.api import operations

        declared = len(operations())
    except ImportError:
        declared = 0

    def by_hand(cls: type) -> int:
        """Definitions in the class's own module (a method made from the declaration is not)."""
        return sum(
            1
            for name, value in vars(cls).items()
            if not name.startswith("__")
            and (inspect.isfunction(value) or isinstance(value, (property, staticmethod)))
            and getattr(getattr(value, "fget", value), "__module__", cls.__module__)
            == cls.__module__
            and getattr(value, "__qualname__", cls.__name__).startswith(cls.__name__)
        )

    class Nothing:
        procedures = None

    tools = asyncio.run(build_server(Nothing()).list_tools())
    params = [s for t in tools for s in t.input_schema.get("properties", {}).values()]
    methods = getattr(app, "METHODS", None)
    return {
        "operations declared once": declared,
        "Memory public names": len([n for n in dir(Memory) if not n.startswith("_")]),
        "RemoteMemory methods written by hand": by_hand(RemoteMemory),
        "RemoteProcedures methods written by hand": by_hand(RemoteProcedures),
        "server methods listed by hand": len(methods) if methods is not None else 0,
        "server read names listed by hand": len(getattr(app, "_READS", ())),
        "MCP tools": len(tools),
        "MCP parameters": len(params),
        "MCP parameters with a description": sum(1 for p in params if p.get("description")),
        "lines of mcp_server.py": len((root / "mcp_server.py").read_text().splitlines()),
        "lines of server/app.py": len((root / "server" / "app.py").read_text().splitlines()),
    }


def counted_in(checkout: Path) -> dict[str, int]:
    """The counts of another checkout (its localmem imported first)."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    out = subprocess.run(
        [sys.executable, __file__, "--json"], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--before", type=Path, help="a checkout of the code before")
    ap.add_argument("--before-label", default="the checkout given", help="what --before is")
    ap.add_argument("--docs", type=Path, help="write the api-surface section here")
    args = ap.parse_args()
    counts = count()
    if args.json:
        print(json.dumps(counts))
        return 0
    before = counted_in(args.before) if args.before else {}
    lines = ["| | before | after |", "|---|---|---|"]
    lines += [f"| {name} | {before.get(name, '')} | {value} |" for name, value in counts.items()]
    table = "\n".join(lines)
    print(table)
    if args.docs:
        from lab.report import provenance, write_section

        command = "python scripts/api_surface.py --before CHECKOUT --docs docs/benchmarks.md"
        text = (
            "## The public API's surfaces, counted (issue 31)\n\n"
            f"{provenance(command)}\n\nBefore: {args.before_label}; after: this commit. A "
            "method of the remote client made from the declaration is not counted as written "
            "by hand; the transport (call, connections) and the described store's "
            "properties are.\n\n" + table
        )
        write_section(args.docs, "api-surface", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
