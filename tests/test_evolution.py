"""A-Mem evolution on a real store: neighbours re-contextualised, links, undo, search stage."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from localmem import Config, InputError, LocalMemError
from localmem import evolution as evo
from localmem.evolution import decide, steps
from localmem.evolution.keyphrases import new_phrases, rare_filter, shared_phrases
from localmem.evolution.modelfree import MARK, Rules, merged_context
from localmem.evolution.modelfree import decide as decide_model_free
from localmem.evolution.stage import decayed, expand

RATE_LIMITING = [
    "Our public API needs rate limiting: a few clients send bursts that slow everyone down.",
    "Current rate limiter: a counter per client that resets at the top of every minute.",
    "Clients that time retries to the reset can send twice the limit across a minute boundary.",
    "Redis is already in the stack, so the limiter state can live there with expiring keys.",
    "We moved the CI runners to the new cluster last week.",
]
NEW = "The rate limiter should use a sliding window, not fixed buckets."


def _evolve_config(**fields) -> Config:
    return Config().with_updates(evolution=fields) if fields else Config()


def _seed(mem) -> list:
    return mem.add_many(RATE_LIMITING, kind="thought")


# -- pure parts --------------------------------------------------------------------------------
def test_shared_phrases_by_stems_longest_first():
    shared = shared_phrases(
        "The rate limiter should use a sliding window.",
        "Rate limiting with a fixed window per client.",
    )
    assert shared[0] == "rate limiter"  # "rate limiting" has the same stems
    assert "window" in shared
    assert "rate" not in shared and "limiter" not in shared  # hidden inside "rate limiter"
    common = shared_phrases(
        "Caroline went hiking", "Caroline baked bread", is_rare=lambda s: s != "carolin"
    )
    assert common == []


def test_rare_filter_only_judges_big_stores():
    assert rare_filter({"a": 40}, 49, max_share=0.05)("a")  # too few memories to judge
    judge = rare_filter({"a": 40, "b": 2}, 100, max_share=0.05)
    assert not judge("a") and judge("b") and judge("never-seen")


def test_model_free_decision_rules():
    rules = Rules(min_similarity=0.3, link_similarity=0.34, max_context_chars=400)
    adds = new_phrases(NEW, "Current rate limiter: a counter per client that resets each minute.")
    assert adds == ["fixed buckets", "sliding window"]  # "rate limiter" is not new to it
    first = decide_model_free(None, similarity=0.4, shared=["rate limiter"], adds=adds, rules=rules)
    assert first.link and first.update
    assert first.link_reason == 'shares "rate limiter" (similarity 0.40 >= 0.34)'
    line = f'{MARK} on "rate limiter" that adds: "fixed buckets", "sliding window".'
    assert first.context == line
    d = decide_model_free(None, similarity=0.6, shared=[], adds=adds, rules=rules)
    assert d.link and d.update and d.context.startswith(f"{MARK}, similar note that adds")
    assert d.link_reason == "similar (similarity 0.60 >= 0.34)"
    d = decide_model_free(None, similarity=0.4, shared=["rate limiter"], adds=[], rules=rules)
    assert d.link and not d.update and d.context is None  # NO_UPDATE, still linked
    # a shared phrase says what links them but never lowers the calibrated bar (issue 35)
    d = decide_model_free(None, similarity=0.33, shared=["rate limiter"], adds=adds, rules=rules)
    assert not d.link and not d.update
    d = decide_model_free(None, similarity=0.2, shared=["rate limiter"], adds=adds, rules=rules)
    assert not d.link
    again = decide_model_free(line, similarity=0.4, shared=["rate limiter"], adds=adds, rules=rules)
    assert again.link and not again.update  # the same line is not written twice


def test_link_similarity_is_calibrated_per_embedder_unless_configured():
    from localmem.evolution.modelfree import CALIBRATED, UNCALIBRATED, link_similarity_for

    minilm = CALIBRATED["all-MiniLM-L6-v2"]
    assert link_similarity_for("all-MiniLM-L6-v2+int8", None) == minilm
    assert link_similarity_for("all-MiniLM-L6-v2", None) == minilm
    assert link_similarity_for("multilingual-e5-small", None) == UNCALIBRATED
    assert link_similarity_for("all-MiniLM-L6-v2", 0.7) == 0.7


def test_merged_context_drops_oldest_evolution_lines_never_a_persons():
    mine = "Written by a person."
    ctx = mine
    for i in range(10):
        ctx = merged_context(ctx, f'{MARK} on "x{i}": note {i} ' + "w" * 40, 200)
    lines = ctx.split("\n")
    assert lines[0] == mine and lines[-1].startswith(f'{MARK} on "x9"')
    assert len(ctx) <= 200 and '"x0"' not in ctx
    assert merged_context(ctx, lines[-1], 200) == ctx  # the same line is not added twice


def test_link_expansion_scores():
    assert decayed(1.0, 0.9) == pytest.approx(0.9)
    assert decayed(-1.0, 0.9) == pytest.approx(-1.1)  # lower, also for negative scores
    earned = expand(
        [(1, 1.0), (2, 0.5)],
        {1: [(10, 0.2), (11, 0.9), (12, 0.5)], 2: [(10, 0.9)]},
        decay=0.8,
        fanout=2,
    )
    assert set(earned) == {11, 12, 10}  # 10 is not among 1's two strongest links
    assert earned[11] == (pytest.approx(0.8), 1) and earned[10] == (pytest.approx(0.4), 2)


# -- on a real store ---------------------------------------------------------------------------
def test_add_with_evolve_updates_links_and_reembeds(memory):
    older = _seed(memory)
    new = memory.add(NEW, kind="thought", evolve=True)
    done = steps.steps_of(memory.store.db, new.id)
    assert 1 <= len(done) <= 3 and all(s.status != steps.PLANNED for s in done)
    ci = older[4].id
    assert ci not in {s.neighbour for s in done}  # unrelated memories are not neighbours
    updated = [s for s in done if s.status == steps.UPDATED]
    assert updated, [(s.status, s.similarity, s.reason) for s in done]
    for s in updated:
        item = memory.get(s.neighbour)
        assert '"sliding window"' in item.context
        ev = [e for e in memory.history(item.id) if e.event == "EVOLVE"]
        assert len(ev) == 1 and ev[0].id == s.history_id
        assert ev[0].old_value is None and ev[0].new_value == item.context
        assert ev[0].actor == "evolution" and ev[0].info["source"] == new.id
        # re-embedded on content + context: the stored vector is the one of the new text (int8
        # vectors move a little with their batch, so "the one" is "the nearer one, closely")
        stored = memory.store.vectors.get([item.label])[0]
        expect, content_only = memory.embedder.embed_batch([item.text_for_embedding, item.content])
        assert float(np.dot(stored, expect)) > 0.98
        assert float(np.dot(stored, expect)) > float(np.dot(stored, content_only))
    linked = {x.other for x in evo.links(memory, new.id)}
    assert {s.neighbour for s in done if s.status in (steps.UPDATED, steps.LINKED)} == linked
    assert all(x.direction == "to" for x in evo.links(memory, new.id))
    assert memory.get(new.id).context is None  # the new memory itself is not changed
    # BM25 sees the evolved context too: the old thoughts now match the new insight's words
    lexical = memory.search("sliding window", k=5, mode="lexical")
    assert {s.neighbour for s in updated} <= {h.memory.id for h in lexical}


def test_neighbours_are_older_and_in_scope(memory):
    memory.add("Alice: the rate limiter resets every minute", user_id="alice")
    bob = memory.add("Bob: our rate limiter resets every minute too", user_id="bob")
    later = memory.add(NEW, user_id="alice", evolve=True)
    assert bob.id not in {s.neighbour for s in steps.steps_of(memory.store.db, later.id)}
    first = memory.add("The rate limiter should use a sliding window", user_id="carol", evolve=True)
    assert steps.steps_of(memory.store.db, first.id) == []  # nothing older in its scope


def test_links_stage_adds_linked_memories_flagged(store_path, open_memory):
    mem = open_memory(store_path, config=_evolve_config(rewrite_context=False))
    older = _seed(mem)
    new = mem.add(NEW, kind="note", evolve=True)
    linked = {x.other for x in evo.links(mem, new.id)}
    alone = {"temporal": False, "rerank": "off"}  # the links stage alone, not the reranker
    assert linked and all(mem.get(i).context is None for i in linked)  # links only
    plain = mem.search("sliding window buckets", k=5, mode="lexical", **alone)
    assert [h.memory.id for h in plain] == [new.id]
    result = mem.search("sliding window buckets", k=5, mode="lexical", **alone, links=True)
    ids = [h.memory.id for h in result]
    assert ids[0] == new.id and set(ids[1:]) == linked
    assert all(h.flags == ("linked",) and h.evidence["link"] < result[0].score for h in result[1:])
    report = next(r for r in result.stages if r.stage == "links")
    assert report.notes["added"] == len(linked) and report.implementation == "evolution-links"
    # explain() says why each joined memory is linked: the reason recorded with its link
    for other in linked:
        assert f"{other[:8]} via {new.id[:8]}: " in report.notes["why"]
    assert ">= 0.34" in report.notes["why"] and "why " in result.explain()
    # filters still apply to linked memories, and deleted ones never come back
    other_user = mem.search(
        "sliding window buckets", k=5, mode="lexical", **alone, links=True, kinds="note"
    )
    assert [h.memory.id for h in other_user] == [new.id]
    gone = next(iter(linked))
    mem.delete(gone)
    again = mem.search("sliding window buckets", k=5, mode="lexical", **alone, links=True)
    assert gone not in [h.memory.id for h in again]
    assert older  # seeded


def test_deferred_jobs_run_pending(store_path, open_memory):
    mem = open_memory(store_path, config=_evolve_config(mode="deferred"))
    _seed(mem)
    new = mem.add(NEW, evolve=True)
    assert steps.steps_of(mem.store.db, new.id) == []
    assert mem.store.jobs.pending(["evolve"]) == 1
    report = evo.run_pending(mem)
    assert (report.done, report.failed, report.remaining) == (1, 0, 0)
    assert steps.steps_of(mem.store.db, new.id)


def test_new_memory_deleted_while_its_job_waits(store_path, open_memory):
    mem = open_memory(store_path, config=_evolve_config(mode="deferred"))
    _seed(mem)
    new = mem.add(NEW, evolve=True)
    mem.delete(new.id)
    report = evo.run_pending(mem)
    assert (report.done, report.failed, report.remaining) == (0, 0, 0)
    status = mem.store.db.scalar("SELECT status FROM jobs WHERE memory_id = ?", [new.id])
    assert status == "dropped" and mem.store.db.scalar("SELECT count(*) FROM links") == 0


def test_engine_failure_then_neighbour_deleted_then_resume(store_path, open_memory, monkeypatch):
    """The memory stays, the job is retryable, a deleted neighbour is skipped, nothing twice."""
    mem = open_memory(store_path, config=_evolve_config(mode="deferred", min_similarity=0.0))
    _seed(mem)
    new = mem.add(NEW, evolve=True)
    real, calls = decide.ask, []

    def failing_second(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("engine died")
        return real(*args, **kwargs)

    monkeypatch.setattr(decide, "ask", failing_second)
    report = evo.run_pending(mem)
    assert report.failed == 1 and mem.get(new.id).content == NEW
    error = mem.store.db.scalar("SELECT error FROM jobs WHERE memory_id = ?", [new.id])
    assert "engine died" in error
    plan = steps.steps_of(mem.store.db, new.id)
    assert len(plan) == 3 and all(s.status == steps.PLANNED for s in plan)
    mem.delete(plan[1].neighbour)
    monkeypatch.setattr(decide, "ask", real)
    assert mem.store.jobs.retry_failed(["evolve"]) == 1
    report = evo.run_pending(mem)
    assert (report.done, report.failed) == (1, 0)
    after = steps.steps_of(mem.store.db, new.id)
    assert [s.neighbour for s in after] == [s.neighbour for s in plan]  # the same plan
    assert after[1].status == steps.GONE
    assert after[0].status != steps.PLANNED and after[2].status != steps.PLANNED
    for s in after:
        evolves = [e for e in mem.history(s.neighbour) if e.event == "EVOLVE"]
        assert len(evolves) == (1 if s.status == steps.UPDATED else 0)
    assert evo.run_pending(mem).done == 0  # nothing left to run


def test_revert_latest_and_to_an_event(memory):
    older = _seed(memory)
    new = memory.add(NEW, evolve=True)
    target = next(
        s for s in steps.steps_of(memory.store.db, new.id) if s.status == steps.UPDATED
    ).neighbour
    memory.add(
        "Sliding windows need per-request timestamps; a rate limiter keeps them in Redis.",
        evolve=True,
    )
    versions = evo.context_versions(memory, target)
    assert versions[0].context is None and versions[0].event == "ADD"
    assert [v.event for v in versions[1:]] and all(v.event == "EVOLVE" for v in versions[1:])
    before = memory.get(target).context
    item = evo.revert(memory, target)
    assert item.context == versions[-2].context and item.context != before
    last = memory.history(target)[-1]
    assert last.event == "REVERT" and last.info["reverted"] == [versions[-1].event_id]
    with pytest.raises(InputError, match="not an evolution"):
        evo.revert(memory, target)  # the latest change is now the REVERT itself
    item = evo.revert(memory, target, to=versions[1].event_id)
    assert item.context is None
    assert new.id not in {x.other for x in evo.links(memory, target)}  # its link went with it
    status = {s.source: s.status for s in steps.steps_on(memory.store.db, target)}
    assert status[new.id] == steps.REVERTED
    with pytest.raises(InputError, match="not a context change"):
        evo.revert(memory, target, to=1)
    with pytest.raises(InputError, match="no context change"):
        evo.revert(memory, older[4].id)


def test_evolve_an_existing_memory_once(memory):
    _seed(memory)
    new = memory.add(NEW)
    first = evo.evolve(memory, new.id)
    assert first and evo.evolve(memory, new.id) == first  # not evolved twice


def test_evolve_reports_a_failure(memory, monkeypatch):
    _seed(memory)
    new = memory.add(NEW)

    def broken(*args, **kwargs):
        raise RuntimeError("engine died")

    monkeypatch.setattr(decide, "ask", broken)
    with pytest.raises(LocalMemError, match="jobs retry"):
        evo.evolve(memory, new.id)


@pytest.mark.slow
def test_killed_mid_job_resumes_without_applying_a_step_twice(store_path, open_memory):
    """SIGKILL inside the second step's transaction; reopen; the job finishes; nothing twice."""
    script = textwrap.dedent(
        """
        import os, signal, sys
        from localmem import Config, Memory, evolution
        from localmem.evolution import steps
        cfg = Config().with_updates(evolution={"mode": "deferred", "min_similarity": 0.0})
        m = Memory.open(sys.argv[1], config=cfg)
        m.add_many(sys.argv[2].split("|"), kind="thought")
        m.add(sys.argv[3], evolve=True)
        real, calls = steps.record, []
        def dying(*args, **kwargs):
            real(*args, **kwargs)
            calls.append(1)
            if len(calls) == 2:  # the 2nd step's writes are in, its transaction not committed
                os.kill(os.getpid(), signal.SIGKILL)
        steps.record = dying
        evolution.run_pending(m)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(store_path), "|".join(RATE_LIMITING), NEW],
        timeout=600,
    )
    assert proc.returncode == -signal.SIGKILL
    mem = open_memory(store_path)
    assert any("will run again" in n for n in mem.store.notices)
    new_id = mem.store.db.scalar("SELECT memory_id FROM jobs WHERE kind = 'evolve'")
    before = steps.steps_of(mem.store.db, new_id)
    assert len(before) == 3 and before[0].status != steps.PLANNED
    assert [s.status for s in before[1:]] == [steps.PLANNED, steps.PLANNED]  # rolled back
    assert evo.run_pending(mem).done == 1
    after = steps.steps_of(mem.store.db, new_id)
    assert after[0] == before[0] and all(s.status != steps.PLANNED for s in after)
    for s in after:
        item = mem.get(s.neighbour)
        evolves = [e for e in mem.history(item.id) if e.event == "EVOLVE"]
        assert len(evolves) == (1 if s.status == steps.UPDATED else 0)
        if s.status == steps.UPDATED:
            assert item.context.count(MARK) == 1
            hit = mem.search(item.text_for_embedding, k=1, mode="dense").hits[0]
            assert hit.memory.id == item.id and hit.score > 0.99  # the index has the new vector
    links = mem.store.db.scalar("SELECT count(*) FROM links WHERE src = ?", [new_id])
    assert links == sum(s.status in (steps.UPDATED, steps.LINKED) for s in after)
    check = mem.store.check()
    assert check["vectors_in_step"] and check["lexical_in_step"]


def test_cli_evolve_show_history_revert(tmp_path, capsys, open_memory):
    from localmem.cli import main

    store = str(tmp_path / "cli")
    seeded = open_memory(store)
    ids = [item.id for item in _seed(seeded)]
    seeded.close()

    def run(*args):
        code = main([*args, "--store", store])
        out, err = capsys.readouterr()
        return code, out, err

    code, out, _ = run("add", NEW, "--kind", "thought", "--evolve")
    new = out.strip()
    code, out, _ = run("show", new)
    assert code == 0 and "links (" in out and "->" in out
    updated = [i for i in ids if '"sliding window"' in (run("show", i)[1])]
    assert updated
    code, out, _ = run("history", updated[0], "--full")
    assert "EVOLVE context by evolution" in out and "sliding window" in out
    code, out, _ = run("revert", updated[0])
    assert code == 0 and "context now: (none)" in out
    code, out, err = run("revert", updated[0])
    assert code == 1 and "not an evolution" in err and "Traceback" not in err
    code, out, _ = run("evolve", ids[2], "--json")
    assert code == 0 and json.loads(out)["source"] == ids[2]
    code, out, _ = run("evolve", "--pending")
    assert code == 0 and "0 done" in out
    code, _, err = run("evolve")
    assert code == 1 and "--pending" in err
    code, _, err = run("revert", "nope0000")
    assert code == 1 and "no memory" in err


def test_purging_a_source_takes_its_words_out_of_the_contexts_it_evolved(memory):
    _seed(memory)
    new = memory.add(NEW, evolve=True)
    updated = [s for s in steps.steps_of(memory.store.db, new.id) if s.status == steps.UPDATED]
    assert len(updated) >= 2
    # one neighbour changes again later: its context is left alone (and reported)
    memory.update(updated[1].neighbour, context="Rewritten by a person about sliding windows.")
    memory.purge(new.id)
    first = memory.get(updated[0].neighbour)
    assert first.context is None
    assert all(
        "sliding" not in (e.new_value or "") + (e.old_value or "") for e in memory.history(first.id)
    )
    assert (
        memory.history(first.id)[-1].event == "REVERT"
        and memory.history(first.id)[-1].actor == "purge"
    )
    assert memory.get(updated[1].neighbour).context.startswith("Rewritten by a person")
    db = memory.store.db
    assert db.scalar("SELECT count(*) FROM evolution_steps WHERE source = ?", [new.id]) == 0
    assert db.scalar("SELECT count(*) FROM links WHERE src = ? OR dst = ?", [new.id, new.id]) == 0
