"""What the store reliability tests share: sample texts, a CLI runner, a filled store, threads
racing on one store."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from localmem.cli import main

TEXTS = [f"note {i}: the {w} of project {i % 7}" for i, w in enumerate(["plan", "risk"] * 60)]


def run(capsys, *args):
    """Run the CLI in-process: (exit code, stdout, stderr)."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def filled(open_memory, path: Path, n: int = 120) -> list[str]:
    """A closed store at ``path`` holding the first ``n`` TEXTS; their ids."""
    mem = open_memory(path)
    ids = [m.id for m in mem.add_many(TEXTS[:n])]
    mem.close()
    return ids


def race(
    write: Callable[[int], None], read: Callable[[], None], *, writers: int = 2, readers: int = 2
) -> None:
    """Run ``writers`` threads of ``write(i)`` to their end while ``readers`` threads call
    ``read()`` over and over; fails with every exception any thread raised."""
    errors: list[BaseException] = []
    stop = threading.Event()

    def writing(i: int) -> None:
        try:
            write(i)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def reading() -> None:
        try:
            while not stop.is_set():
                read()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    reading_threads = [threading.Thread(target=reading) for _ in range(readers)]
    writing_threads = [threading.Thread(target=writing, args=(i,)) for i in range(writers)]
    for t in reading_threads + writing_threads:
        t.start()
    for t in writing_threads:
        t.join()
    stop.set()
    for t in reading_threads:
        t.join()
    assert not errors, errors


def apply_lexical(lex, db, texts: dict[int, str], op: str, label: int, text: str):
    """One random step on a lexical index: ``add`` (a new label), ``remove``, ``update`` (what
    an update of a memory does: remove, add), ``reload`` (another process, or one after a
    rollback); ``texts`` follows; returns the index (a new one after a reload)."""
    from localmem.store.lexical import LexicalIndex

    if op == "add" and label not in texts:
        lex.add([label], [text])
        texts[label] = text
    elif op == "remove" and label in texts:
        lex.remove([label])
        del texts[label]
    elif op == "update" and label in texts:
        lex.remove([label])
        lex.add([label], [text])
        texts[label] = text
    elif op == "reload":
        lex = LexicalIndex(db)
    return lex
