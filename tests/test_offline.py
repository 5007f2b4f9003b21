"""Nothing localmem does on its main paths touches the network or writes outside its folders.

The main paths (the first-run ONNX export and int8 quantisation, add, sessions, search, the CLI's
search, add and doctor) run in a fresh process with a fresh ``LOCALMEM_HOME``, and fail on:

- any socket but a local (AF_UNIX) one, any name lookup, any connect: seen by a Python audit
  hook, and, where ``strace`` is installed, at the system-call level too (libraries written in
  C, such as onnxruntime's telemetry client, never pass through Python's socket module);
- any file opened for writing, folder made or file renamed outside the store and
  ``LOCALMEM_HOME``: seen by the audit hook, and, for writers in C, by listing ``HOME``, the temp
  folder and the working folder afterwards: each must still be empty.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap

WATCH_AND_RUN = textwrap.dedent(
    """
    import os, socket, sys
    allowed = [os.path.realpath(p) for p in sys.argv[1:3]] + ["/dev/"]
    seen = []

    def inside(path):
        try:
            path = os.path.realpath(os.fsdecode(path))
        except TypeError:  # a file descriptor
            return True
        return any(path == a.rstrip("/") or path.startswith(a.rstrip("/") + "/") for a in allowed)

    def watch(event, args):
        if event == "socket.__new__" and args[1] != socket.AF_UNIX:
            seen.append(("socket", args[1]))
        elif event in ("socket.connect", "socket.sendto", "socket.bind"):
            seen.append((event, args[1]))
        elif event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr"):
            seen.append((event, args[0]))
        elif event == "open":
            path, mode, flags = args
            writes = (mode and any(c in mode for c in "wax+")) or (
                flags and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
            )
            if writes and path is not None and not inside(path):
                seen.append(("write", path))
        elif event in ("os.mkdir", "os.rename", "os.replace", "os.symlink", "os.link"):
            for path in args[:2]:
                if isinstance(path, (str, bytes)) and not inside(path):
                    seen.append((event, path))

    sys.addaudithook(watch)

    from localmem import Memory
    from localmem.cli import main

    store = sys.argv[1]
    with Memory.open(store) as mem:  # the first embedding exports MiniLM and quantises it
        mem.add_many(["Caroline went to a support group", "Melanie paints sunrises"],
                     kind="message", user_id="c1")
        session = mem.start_session("offline session")
        mem.add_thought(session.id, "thinking without a network")
        hits = mem.search("who paints?", k=1)
        assert hits[0].memory.content == "Melanie paints sunrises", hits[0].memory.content
        mem.search("support", mode="lexical")
    assert main(["search", "support group", "--store", store, "--json"]) == 0
    assert main(["add", "added from the CLI", "--store", store]) == 0
    assert main(["doctor", "--store", store]) == 0
    print("SEEN", seen)
    """
)

#: system calls that reach the network (a connect or send to an address that is not a local
#: socket)
_NET_CALL = re.compile(r"\b(connect|sendto|sendmsg)\(\d+, \{sa_family=AF_INET6?\b")


def test_main_paths_stay_offline_and_inside_their_folders(tmp_path):
    home, temp, cwd = tmp_path / "home", tmp_path / "tmp", tmp_path / "cwd"
    lm_home, store = tmp_path / "localmem-home", tmp_path / "store"
    for folder in (home, temp, cwd):
        folder.mkdir()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(temp),
        "LOCALMEM_HOME": str(lm_home),
        "PYTHONDONTWRITEBYTECODE": "1",  # Python's own .pyc caches are not localmem's doing
    }
    command = [sys.executable, "-c", WATCH_AND_RUN, str(store), str(lm_home)]
    trace = tmp_path / "strace.txt"
    if shutil.which("strace"):
        command = ["strace", "-f", "-qq", "-e", "trace=network", "-o", str(trace), *command]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env, cwd=cwd)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "SEEN []" in proc.stdout, proc.stdout[-3000:]
    for folder in (home, temp, cwd):
        left = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
        assert left == [], f"written outside the store and LOCALMEM_HOME, in {folder}: {left}"
    if trace.exists():
        reached = [line for line in trace.read_text().splitlines() if _NET_CALL.search(line)]
        assert reached == []
    assert store.exists() and any(lm_home.iterdir())


def test_onnxruntime_is_told_before_import():
    """localmem's import sets the switches the dependencies read at their own import."""
    code = "import localmem, os; print(os.environ.get('ORT_DISABLE_TELEMETRY'))"
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert out.strip() == "1"
    mine = {**env, "ORT_DISABLE_TELEMETRY": "0"}  # the user's own choice is left alone
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=mine, check=True
    ).stdout
    assert out.strip() == "0"
