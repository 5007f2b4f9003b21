"""Memories in four languages, questions in the same and the other ones: MiniLM against E5.

    LOCALMEM_HOME=/tmp/ml python scripts/bench_multilingual.py --work /tmp/ml \
        [--embedders all-MiniLM-L6-v2 multilingual-e5-small] [--configs dense bm25 hybrid default] \
        [--json out.json] [--docs docs/benchmarks.md]

The set (``scripts/lab/data/multilingual/multilingual.json``, written by hand before any search
ran on it): 64 memories about 16 people, each person's four facts written one in English, one in
French, one in German and one in Spanish; 228 questions, each asking for one memory, in its own
language or another (36 of them without the person's name). The memories are stored among the
480 English notes of the notes set (``scripts/lab/data/notes``) as distractors, so a search has
544 memories to choose from. Scored per pair (memory language -> question language): R@10 (the
memory is in the top 10) and MRR. ``default`` is ``search(q)`` with no options, with each
embedder's own reranker weights. Also reported: how often the BM25 tokeniser told a text's
language right (``localmem.text.language``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

from lab.report import provenance, write_section

DATA = Path(__file__).parent / "lab" / "data"
LANGS = ("en", "fr", "de", "es")
NAMES = {"en": "english", "fr": "french", "de": "german", "es": "spanish"}
CONFIGS = {
    "dense": {"mode": "dense", "temporal": False, "rerank": "off"},
    "bm25": {"mode": "lexical", "temporal": False, "rerank": "off"},
    "hybrid": {"mode": "hybrid", "temporal": False, "rerank": "off"},
    "default": {},
}


def load() -> tuple[dict, list[str]]:
    """The labelled set and the distractor notes."""
    data = json.loads((DATA / "multilingual" / "multilingual.json").read_text(encoding="utf-8"))
    notes = json.loads((DATA / "notes" / "notes.json").read_text(encoding="utf-8"))["notes"]
    return data, notes


def build(folder: Path, model: str, data: dict, notes: list[str]):
    """A store of the set's memories among the notes (reused when already complete)."""
    from localmem.config import Config, EmbedderConfig
    from localmem.memory import Memory

    expected = len(data["memories"]) + len(notes)
    if folder.exists():
        memory = Memory.open(folder)
        if memory.count() == expected:
            return memory
        raise SystemExit(f"{folder} holds another store; remove it or pick another --work")
    memory = Memory.open(folder, config=Config(embedder=EmbedderConfig(model=model)))
    rows = [{"content": m["text"], "metadata": {"key": m["id"]}} for m in data["memories"]]
    rows += [{"content": n, "metadata": {"key": f"note-{i}"}} for i, n in enumerate(notes)]
    memory.add_many(rows)
    return memory


def score(memory, data: dict, options: dict) -> dict[tuple[str, str], list[float]]:
    """(memory language, question language) -> [(hit@10, reciprocal rank)] per question."""
    out: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for q in data["queries"]:
        hits = memory.search(q["query"], k=10, **options).hits
        keys = [h.memory.metadata.get("key") for h in hits]
        rank = next((i + 1 for i, key in enumerate(keys) if key in q["relevant"]), None)
        out[(q["memory_lang"], q["lang"])].append(
            (1.0 if rank else 0.0, 1.0 / rank if rank else 0.0)
        )
    return out


def summarise(rows: dict[tuple[str, str], list]) -> dict:
    """R@10 and MRR per pair, for same-language and cross-language questions, and overall."""

    def mean(xs, i):
        return sum(x[i] for x in xs) / len(xs) if xs else 0.0

    same = [x for (m, q), xs in rows.items() if m == q for x in xs]
    cross = [x for (m, q), xs in rows.items() if m != q for x in xs]
    every = same + cross
    return {
        "pairs": {
            f"{m}->{q}": {"R@10": mean(xs, 0), "MRR": mean(xs, 1), "n": len(xs)}
            for (m, q), xs in sorted(rows.items())
        },
        "same": {"R@10": mean(same, 0), "MRR": mean(same, 1), "n": len(same)},
        "cross": {"R@10": mean(cross, 0), "MRR": mean(cross, 1), "n": len(cross)},
        "overall": {"R@10": mean(every, 0), "MRR": mean(every, 1), "n": len(every)},
    }


def language_accuracy(data: dict) -> dict:
    """How often the BM25 tokeniser tells a memory's or a question's language right."""
    from localmem.text import _tokens, language

    out = {}
    for kind, items, key, lang_key in (
        ("memories", data["memories"], "text", "lang"),
        ("questions", data["queries"], "query", "lang"),
    ):
        right = defaultdict(lambda: [0, 0])
        for item in items:
            said = language(_tokens(item[key]))
            right[item[lang_key]][0] += said == NAMES[item[lang_key]]
            right[item[lang_key]][1] += 1
        out[kind] = {lang: f"{r}/{n}" for lang, (r, n) in right.items()}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", type=Path, required=True, help="folder for the stores (reused)")
    p.add_argument("--embedders", nargs="+", default=["all-MiniLM-L6-v2", "multilingual-e5-small"])
    p.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    p.add_argument("--json", type=Path, help="write every metric here")
    p.add_argument("--docs", type=Path, help="write the tables into this markdown file")
    p.add_argument("--section", default="multilingual")
    args = p.parse_args(argv)

    data, notes = load()
    results: dict = {"language_identification": language_accuracy(data), "runs": {}}
    for model in args.embedders:
        with build(args.work / model, model, data, notes) as memory:
            for name in args.configs:
                summary = summarise(score(memory, data, CONFIGS[name]))
                results["runs"][f"{model} / {name}"] = summary
                o = summary["overall"]
                print(f"{model} {name}: R@10 {o['R@10']:.3f} MRR {o['MRR']:.3f}", file=sys.stderr)
    command = "python scripts/bench_multilingual.py " + " ".join(sys.argv[1:])
    load_avg = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    results["provenance"] = provenance(command) + f"\n- load average at the end: {load_avg}"
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    text = markdown(results)
    if args.docs:
        write_section(args.docs, args.section, text)
    print(text)
    return 0


def markdown(results: dict) -> str:
    """The tables: overall, then R@10 and MRR per language pair."""
    runs = results["runs"]
    lines = [
        results["provenance"],
        "",
        "| embedder / config | R@10 same language | R@10 across languages | R@10 all | MRR all |",
        "|---|---|---|---|---|",
    ]
    for name, s in runs.items():
        lines.append(
            f"| {name} | {s['same']['R@10']:.3f} | {s['cross']['R@10']:.3f} | "
            f"{s['overall']['R@10']:.3f} | {s['overall']['MRR']:.3f} |"
        )
    pairs = next(iter(runs.values()))["pairs"]
    lines += [
        "",
        "R@10 per pair (memory language -> question language; questions per pair in brackets):",
        "",
        "| embedder / config | " + " | ".join(f"{k} ({v['n']})" for k, v in pairs.items()) + " |",
        "|---|" + "---|" * len(pairs),
    ]
    for name, s in runs.items():
        cells = [f"{s['pairs'][k]['R@10']:.2f}" for k in pairs]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    ident = results["language_identification"]
    lines += [
        "",
        "The BM25 tokeniser's language (right / all): memories "
        + ", ".join(f"{k} {v}" for k, v in ident["memories"].items())
        + "; questions "
        + ", ".join(f"{k} {v}" for k, v in ident["questions"].items())
        + " (a question told wrong is stemmed as English, the default).",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
