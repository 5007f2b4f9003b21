"""Count the surfaces of the public API (issue 31): what is declared, what is kept by hand.

Usage:
    python scripts/api_surface.py [--json]
    PYTHONPATH=/path/to/another/checkout python scripts/api_surface.py --json   # before/after

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
from pathlib import Path


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    counts = count()
    if args.json:
        print(json.dumps(counts))
    else:
        for name, value in counts.items():
            print(f"{value:6}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
