"""The CPU probe (issue 29): its decision on real children that die with real signals, the
verdict remembered and forgotten, and the probe run for real on the GGUFs of this machine."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from localmem.llm.host import probe

# a stand-in for `python -m localmem.llm.host --probe`: it dies or answers as it is told
FAKE = textwrap.dedent(
    """
    import json, os, signal, sys
    default = "--no-extra-buffer-types" not in sys.argv
    what = {what!r}[0 if default else 1]
    if what == "ok":
        print(json.dumps({{"ok": True}}))
        sys.exit(0)
    if what == "error":
        print(json.dumps({{"ok": False, "error": "llama.cpp could not load it"}}))
        sys.exit(2)
    os.kill(os.getpid(), getattr(signal, what))
    """
)


def fake_probe(tmp_path: Path, default: str, with_setting: str) -> list[str]:
    script = tmp_path / f"probe_{default}_{with_setting}.py"
    script.write_text(FAKE.format(what=(default, with_setting)))
    return [sys.executable, str(script)]


def run(tmp_path, default, with_setting):
    return probe.probe("model.gguf", command=fake_probe(tmp_path, default, with_setting))


def test_a_child_that_answers_is_ok(tmp_path):
    verdict = run(tmp_path, "ok", "SIGILL")
    assert verdict.status == "ok" and verdict.extra_buffer_types and verdict.signal is None


def test_sigill_then_an_answer_with_the_setting_is_fixed_by_setting(tmp_path):
    verdict = run(tmp_path, "SIGILL", "ok")
    assert verdict.status == "fixed-by-setting" and verdict.usable
    assert verdict.extra_buffer_types is False and verdict.signal == "SIGILL"
    assert "use_extra_bufts=False" in verdict.detail


def test_sigill_twice_is_crashed(tmp_path):
    verdict = run(tmp_path, "SIGILL", "SIGILL")
    assert verdict.status == "crashed" and not verdict.usable
    assert "SIGILL" in verdict.detail and "GGML_NATIVE=OFF" in verdict.detail


def test_another_death_is_crashed_without_trying_the_setting(tmp_path):
    verdict = run(tmp_path, "SIGSEGV", "ok")  # the setting would answer: it is not tried
    assert verdict.status == "crashed" and verdict.signal == "SIGSEGV"
    assert verdict.extra_buffer_types  # nothing learnt about the setting
    assert "memory it does not own" in verdict.detail


def test_a_failure_without_a_death_is_an_error_and_not_remembered(tmp_path):
    verdict = run(tmp_path, "error", "ok")
    assert verdict.status == "error" and "could not load" in verdict.detail
    probe.remember("k-error", verdict)
    assert probe.remembered("k-error") is None


def test_the_verdict_is_remembered_on_disk_and_forgotten(tmp_path, isolated_home):
    verdict = run(tmp_path, "SIGILL", "ok")
    probe.remember("k1", verdict)
    stored = json.loads((isolated_home / "engine" / "probe.json").read_text())
    assert stored["k1"]["status"] == "fixed-by-setting"
    probe._MEMO.clear()  # another process: only the file knows
    assert probe.remembered("k1") == verdict
    probe.forget("k1")
    assert probe.remembered("k1") is None and "k1" not in json.loads(
        (isolated_home / "engine" / "probe.json").read_text()
    )


def test_the_fingerprint_follows_the_file(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF1")
    first = probe.fingerprint(str(model))
    assert first == probe.fingerprint(str(model))
    model.write_bytes(b"GGUF22")
    assert probe.fingerprint(str(model)) != first


def test_the_probe_runs_for_real_on_the_tiny_gguf(tiny_gguf):
    verdict = probe.probe(str(tiny_gguf), n_threads=1)
    assert verdict.usable, verdict.detail


@pytest.mark.slow
def test_the_probe_runs_for_real_on_the_gemma_gguf(real_gguf):
    """On this machine (AMD EPYC, no AMX) the default build answers: the ``ok`` branch; on a VM
    that advertises AMX without granting it, this is where ``fixed-by-setting`` shows."""
    verdict = probe.probe(str(real_gguf), n_threads=1)
    assert verdict.usable, verdict.detail
    print(f"probe on this machine: {verdict.status}: {verdict.detail}")


def test_doctor_reports_the_probe_and_clears_unhealthy(tiny_gguf, isolated_home, capsys):
    from localmem.cli import main

    models = isolated_home / "models"
    models.mkdir(parents=True)
    (models / "tiny.gguf").symlink_to(tiny_gguf)
    code = main(["doctor"])
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "engine probe" in x)
    assert line.startswith("ok") and "tiny.gguf: ok" in line
    assert (isolated_home / "engine" / "cleared").exists()
    assert code in (0, 1)  # other checks (no store yet) are not this test's
