"""What a new user pays before localmem runs: the README's first command, timed in a fresh venv.

    python scripts/bench_install.py COMMIT [COMMIT...] [--cold] [--search-size 10000] \
        [--out .bench/install/NAME.json]

A fresh copy of each commit (``git archive``: no .venv, no caches) gets the README's first
command, as the README writes it, except that ``localmem tui --demo`` becomes ``localmem demo``
(the same sample store, printed instead of drawn: there is no terminal here), with a fresh
``LOCALMEM_HOME`` so every first-run step (an embedder export, the demo store) is counted.
``--cold`` adds ``--no-cache-dir`` to each ``pip install`` (pip then downloads or builds every
package it has no local index for). Then:

- the time of the install and of the demo, apart and together;
- the installed size: the venv's site-packages, and its ten largest distributions;
- ``pip show`` of the heavy packages the core should not need (llama-cpp-python, torch,
  sentence-transformers, transformers);
- ``localmem search`` cold (a new process each time, the OS file cache warm after the first)
  on a store of ``--search-size`` synthetic texts (scripts/lab/synthetic.py) built with that
  venv's code and default embedder: each run's wall time, the first and the median. With
  several commits the searches alternate between them, so the ratio survives a changing load.

The installs run one after the other (pip's cache is shared: the second commit's install may
find wheels the first one built, with a warm cache). The JSON result names the commits, the
machine, the load before and after, and the date.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("llama-cpp-python", "torch", "sentence-transformers", "transformers")
QUERY = "when did Ana go hiking in Lisbon"

BUILD_STORE = r"""
import sys
sys.path.insert(0, sys.argv[3])
from lab.synthetic import synthetic_texts
from localmem import Memory
with Memory.open(sys.argv[1]) as mem:
    mem.add_many(synthetic_texts(int(sys.argv[2])), kind="note")
    print(mem.embedder.name)
"""


def readme_first_command(src: Path) -> str:
    """The README's first shell command (the first ```bash block's first line)."""
    text = (src / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)\n", text)
    if not block:
        raise SystemExit("the README has no ```bash block")
    return block.group(1).strip()


def as_run(command: str, *, cold: bool) -> str:
    """The README's command as this script runs it: the demo printed, the cache as asked."""
    if not command.endswith("localmem tui --demo"):
        raise SystemExit(f"the README's first command changed shape: {command}")
    command = command[: -len("tui --demo")] + "demo"
    if cold:
        command = command.replace("pip install ", "pip install --no-cache-dir ")
    return command


def run_timed(command: str, cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system, of the command's processes) and output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode:
        raise SystemExit(f"{command} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return seconds, cpu, proc.stdout + proc.stderr


def sizes(venv: Path) -> dict:
    """The venv's site-packages in MB, and its ten largest distributions (from their RECORDs)."""
    (site,) = venv.glob("lib/python*/site-packages")
    total = sum(f.stat().st_size for f in site.rglob("*") if f.is_file() and not f.is_symlink())
    per: dict[str, int] = {}
    for record in site.glob("*.dist-info/RECORD"):
        name = record.parent.name.split("-")[0]
        size = 0
        for line in record.read_text(encoding="utf-8").splitlines():
            path = site / line.split(",")[0]
            if path.is_file():
                size += path.stat().st_size
        per[name] = size
    top = sorted(per.items(), key=lambda kv: -kv[1])[:10]
    return {
        "site_packages_mb": round(total / 1e6, 1),
        "largest_mb": {name: round(size / 1e6, 1) for name, size in top},
    }


def install(commit: str, work: Path, *, cold: bool) -> dict:
    """The README's first command on a fresh copy of ``commit``: times, sizes, heavy packages."""
    src, home = work / "src", work / "home"
    src.mkdir(parents=True)
    subprocess.run(f"git -C {ROOT} archive {commit} | tar -x -C {src}", shell=True, check=True)
    env = environment(home)
    result: dict = {"commit": commit, "cold_pip_cache": cold}
    readme = readme_first_command(src)
    install_command, demo = as_run(readme, cold=cold).rsplit(" && ", 1)
    result["readme_command"] = readme
    result["install_command"], result["demo_command"] = install_command, demo
    log(f"{commit}: {install_command}")
    result["install_s"], result["install_cpu_s"], _ = run_timed(install_command, src, env)
    log(f"  installed in {result['install_s']:.0f} s; {demo}")
    result["demo_s"], result["demo_cpu_s"], demo_out = run_timed(demo, src, env)
    result["total_s"] = result["install_s"] + result["demo_s"]
    result["demo_output_tail"] = demo_out.strip().splitlines()[-3:]
    venv = src / ".venv"
    result.update(sizes(venv))
    shown = subprocess.run(
        [str(venv / "bin" / "pip"), "show", *HEAVY], capture_output=True, text=True, check=False
    ).stdout
    result["heavy_installed"] = re.findall(r"^Name: (.+)$", shown, flags=re.M)
    log(
        f"  demo {result['demo_s']:.0f} s; {result['site_packages_mb']} MB; heavy: "
        f"{result['heavy_installed'] or 'none'}"
    )
    return result


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOCALMEM_", "VIRTUAL_ENV"))}
    env["LOCALMEM_HOME"] = str(home)
    return env


def build_store(work: Path, size: int) -> dict:
    """A store of ``size`` synthetic texts, built with the venv's own code and embedder."""
    started = time.perf_counter()
    built = subprocess.run(
        [
            str(work / "src" / ".venv" / "bin" / "python"),
            "-c",
            BUILD_STORE,
            str(work / "store"),
            str(size),
            str(work / "src" / "scripts"),
        ],
        env=environment(work / "home"),
        capture_output=True,
        text=True,
        check=False,
    )
    if built.returncode:
        raise SystemExit(f"building the store in {work} failed:\n{built.stderr[-3000:]}")
    return {
        "memories": size,
        "embedder": built.stdout.strip().splitlines()[-1],
        "build_s": round(time.perf_counter() - started, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commits", nargs="+", help="one or more commits, measured in turn")
    parser.add_argument("--cold", action="store_true", help="pip install --no-cache-dir")
    parser.add_argument("--search-size", type=int, default=10_000, help="0: skip the search")
    parser.add_argument("--searches", type=int, default=7, help="cold searches per commit")
    parser.add_argument("--keep", action="store_true", help="keep the work folders")
    parser.add_argument(
        "--reuse",
        nargs="+",
        type=Path,
        help="work folders kept from an earlier run (--keep), one per commit: no install, "
        "only the searches (and the store, when missing)",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    report: dict = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "load_before": os.getloadavg(),
        "runs": {},
    }
    works = {}
    for i, commit in enumerate(args.commits):
        short = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", commit],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if args.reuse:
            works[short] = args.reuse[i]
            report["runs"][short] = {"commit": short, "reused": str(args.reuse[i])}
            continue
        works[short] = Path(tempfile.mkdtemp(prefix=f"bench-install-{short}-"))
        report["runs"][short] = install(short, works[short], cold=args.cold)
    if args.search_size:
        for short, work in works.items():
            if not (work / "store").exists():
                report["runs"][short]["search_store"] = build_store(work, args.search_size)
        # the commits' searches alternate, so a change of load hits them alike
        times: dict[str, list[float]] = {short: [] for short in works}
        cpu: dict[str, list[float]] = {short: [] for short in works}
        for _ in range(args.searches):
            for short, work in works.items():
                venv = work / "src" / ".venv"
                command = f"{venv}/bin/localmem search '{QUERY}' --store {work / 'store'} -k 5"
                seconds, used, _ = run_timed(command, work, environment(work / "home"))
                times[short].append(round(seconds, 3))
                cpu[short].append(round(used, 3))
        for short, runs in times.items():
            report["runs"][short]["search_cold_s"] = {
                "runs": runs,
                "first": runs[0],
                "median": statistics.median(runs),
                # CPU time moves less than wall time with the machine's load
                "cpu_runs": cpu[short],
                "cpu_median": statistics.median(cpu[short]),
            }
            log(
                f"{short}: search cold median {statistics.median(runs):.2f} s wall, "
                f"{statistics.median(cpu[short]):.2f} s CPU ({runs})"
            )
    report["load_after"] = os.getloadavg()
    if not args.keep and not args.reuse:
        for work in works.values():
            shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(report, indent=2)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
