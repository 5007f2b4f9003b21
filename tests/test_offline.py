"""Nothing localmem does on its main paths touches the network."""

from __future__ import annotations

import subprocess
import sys
import textwrap

BLOCK_AND_RUN = textwrap.dedent(
    """
    import socket, sys
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("network blocked by test_offline")

    # every way out: connect, DNS, and creating sockets other than local pairs
    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse
    socket.gethostbyname = refuse

    from localmem import Memory
    from localmem.cli import main

    store = sys.argv[1]
    with Memory.open(store) as mem:
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
    print("ATTEMPTS", len(attempts))
    """
)


def test_main_paths_run_with_the_network_blocked(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "LOCALMEM_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", BLOCK_AND_RUN, str(tmp_path / "store")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ATTEMPTS 0" in proc.stdout, proc.stdout
