"""Inference on add (issue 20): extraction, reconciliation and time validity, on real stores
(DuckDB, hnswlib, MiniLM). The peers' three traps are tests here:

- mem0 #1674: adding the same memory twice deleted the old one;
- mem0 PR #4580: a contradicted fact was deleted and the new one never added;
- mem0 #4540 / #4526: malformed model JSON silently dropped every extracted fact.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from localmem.errors import InputError, SchemaError
from localmem.infer import slots
from localmem.infer.plan import Candidate, Invalidate
from localmem.infer.task import Known, ReconcileInput, model_free
from localmem.llm.tasks import TaskContext


def t(year: int, month: int = 1, day: int = 1) -> str:
    return datetime(year, month, day, tzinfo=timezone.utc).isoformat()


# -- the rules (logic) ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "slot", "value", "negated"),
    [
        ("Ann lives in Paris.", "home", "paris", False),
        ("Ann moved to Berlin last month. (February 2024)", "home", "berlin", False),
        ("Ann moved out of Paris", "home", "paris", True),
        ("Ann works at Google.", "employer", "google", False),
        ("Ann joined Spotify last week", "employer", "spotify", False),
        ("Ann quit her job at Google", "employer", "google", True),
        ("Ann works as a nurse.", "role", "nurse", False),
        ("Ann is married to Tom.", "partner", "tom", False),
        ("Ann divorced Tom", "partner", "tom", True),
        ("Ann is 31 years old.", "age", "31", False),
        ("Ann has three cats now.", "count cat", "3", False),
        ("Ann's favourite colour is blue.", "favourite colour", "blue", False),
        ("Ann likes tea.", "likes tea", "yes", False),
        ("Ann no longer likes coffee.", "likes coffee", "yes", True),
    ],
)
def test_a_fact_is_read_into_its_slot(text, slot, value, negated):
    read = slots.read(text)
    assert read is not None and (read.subject, read.slot, read.value, read.negated) == (
        "ann",
        slot,
        value,
        negated,
    )


@pytest.mark.parametrize(
    "text", ["Ann visited Rome last year.", "she lives in Rome", "Ann is happy", "hello there"]
)
def test_a_fact_that_fills_no_slot_is_not_read(text):
    assert slots.read(text) is None


def test_first_person_is_the_speaker():
    assert slots.read("I live in Oslo", speaker="Bo") == slots.read("Bo lives in Oslo")


def _decide(fact: str, *known: str, sims: tuple[float, ...] = ()):
    memories = tuple(
        Known(text=k, similarity=sims[i] if i < len(sims) else None) for i, k in enumerate(known)
    )
    return model_free(ReconcileInput(fact=fact, memories=memories), TaskContext())


def test_rules_supersede_a_new_value_and_keep_look_alikes():
    assert _decide("Ann moved to Berlin.", "Ann likes tea.", "Ann lives in Paris.").model_dump(
        include={"event", "target"}
    ) == {"event": "INVALIDATE", "target": 2}
    assert _decide("Ann likes coffee.", "Ann likes tea.", sims=(0.9,)).event == "ADD"
    assert _decide("Ann no longer likes tea.", "Ann likes tea.").event == "INVALIDATE"
    assert _decide("ann lives in paris", "Ann lives in Paris.").event == "NONE"
    assert _decide("Bob lives in Rome.", "Ann lives in Paris.").event == "ADD"  # another person
    assert _decide("Ann has 3 cats.", "Ann has 2 cats.").event == "INVALIDATE"
    assert _decide("Ann has 3 dogs.", "Ann has 2 cats.").event == "ADD"


def test_near_duplicates_are_none_or_an_update_with_more_detail():
    assert _decide("Ann went hiking", "Ann went hiking in the Alps", sims=(0.95,)).event == "NONE"
    out = _decide("Ann went hiking in the Alps", "Ann went hiking", sims=(0.95,))
    assert (out.event, out.target, out.text) == ("UPDATE", 1, "Ann went hiking in the Alps")
    assert _decide("Ann went hiking in the Alps", "Ann went hiking", sims=(0.5,)).event == "ADD"


def test_an_invalidation_without_the_fact_that_replaces_it_cannot_be_built(memory):
    import numpy as np

    target = memory.add("Ann lives in Paris.")
    with pytest.raises(ValueError, match="replaces"):
        Invalidate(Candidate("  ", np.zeros(3)), target, "why", "model-free")
    with pytest.raises(ValueError, match="another memory"), memory.kernel.writing() as write:
        write.supersede(target.id, "", datetime.now(timezone.utc), actor="infer")
    assert memory.get(target.id).valid_to is None  # the failed unit rolled back


# -- the store ------------------------------------------------------------------------------
def test_trap_1674_adding_the_same_memory_twice_keeps_the_first(memory):
    first = memory.add("Ann lives in Paris.", user_id="u", infer=True)
    again = memory.add("Ann lives in Paris.", user_id="u", infer=True)
    assert again.id == first.id and memory.count() == 1
    kept = memory.get(first.id)
    assert not kept.deleted and kept.valid_to is None
    events = [h.event for h in memory.history(first.id)]
    assert events == ["ADD", "INFER", "REPEAT"]


def test_trap_4580_a_contradiction_keeps_the_old_fact_and_adds_the_new(memory):
    old = memory.add("Ann lives in Paris.", user_id="u", event_time=t(2021), infer=True)
    (applied,) = memory.infer("Ann moved to Berlin.", user_id="u", event_time=t(2024))
    assert applied.event == "INVALIDATE" and applied.target.id == old.id
    new = applied.memory
    gone = memory.get(old.id)
    assert not gone.deleted and not new.deleted and memory.count() == 2
    assert gone.superseded_by == new.id and gone.valid_to == new.valid_from
    assert gone.valid_to == datetime(2024, 1, 1, tzinfo=timezone.utc)
    last = memory.history(old.id)[-1]
    assert last.event == "INVALIDATE" and last.info["superseded_by"] == new.id
    assert last.info["decider"] == "model-free" and "paris -> berlin" in last.info["reason"]
    # now: only Berlin; in 2022: only Paris
    now = [h.memory.id for h in memory.search("where does Ann live", user_id="u").hits]
    assert now == [new.id]
    then = memory.search("where does Ann live", user_id="u", as_of=t(2022))
    assert [h.memory.id for h in then.hits] == [old.id]
    assert "valid 2022-01-01" in then.explain()


def test_searches_see_each_supersede_delete_and_restore_at_once(memory):
    # a DuckDB store keeps "is any memory superseded?" between its writes: each write must
    # make the next search ask again
    def now() -> list[str]:
        return [h.memory.id for h in memory.search("where does Ann live").hits]  # no filter

    old = memory.add("Ann lives in Paris.", user_id="u", event_time=t(2021))
    assert now() == [old.id]
    (applied,) = memory.infer("Ann moved to Berlin.", user_id="u", event_time=t(2024))
    new = applied.memory
    assert now() == [new.id]
    memory.delete(old.id)  # no live memory is superseded now
    assert now() == [new.id]
    memory.restore(old.id)  # and now one is again: it must stay out
    assert now() == [new.id]
    memory.delete(new.id)
    assert now() == []


def test_a_fact_older_than_what_it_contradicts_is_the_one_that_ended(memory):
    new = memory.add("Ann lives in Berlin.", user_id="u", event_time=t(2024), infer=True)
    (late,) = memory.infer("Ann lives in Paris.", user_id="u", event_time=t(2021))
    assert late.event == "INVALIDATE"
    assert memory.get(late.memory.id).superseded_by == new.id
    assert memory.get(new.id).valid_to is None


def test_look_alike_preferences_both_stay_true(memory):
    memory.add("Ann likes tea.", user_id="u", infer=True)
    memory.add("Ann likes coffee.", user_id="u", infer=True)
    assert memory.count() == 2
    assert all(m.valid_to is None for m in memory.list())


def test_scopes_do_not_reconcile_with_each_other(memory):
    memory.add("Ann lives in Paris.", user_id="a", infer=True)
    memory.add("Ann lives in Rome.", user_id="b", infer=True)
    assert all(m.valid_to is None for m in memory.list())


def test_raw_storage_stays_the_default(memory):
    memory.add("Ann lives in Paris.")
    memory.add("Ann lives in Paris.")
    assert memory.count() == 2
    with pytest.raises(InputError, match="infer"):
        memory.add("x", infer="yes")


def test_the_store_config_turns_inference_on(open_memory, store_path):
    from localmem.config import Config

    mem = open_memory(store_path, config=Config.from_dict({"infer": {"on_add": True}}))
    mem.add("Ann lives in Paris.")
    mem.add("Ann lives in Paris.")
    assert mem.count() == 1
    mem.add("Ann lives in Paris.", infer=False)
    assert mem.count() == 2


def test_messages_and_speakers(memory):
    out = memory.infer(
        [
            {"role": "user", "name": "Ann", "content": "Hi! I moved to Lisbon in May."},
            {"role": "user", "name": "Bo", "content": "ok"},
        ],
        user_id="u",
    )
    texts = [a.memory.content for a in out]
    assert texts == ["Hi! Ann moved to Lisbon in May.", "Bo: ok"]  # a message each, none dropped
    with pytest.raises(InputError):
        memory.infer([{"role": "user"}])
    with pytest.raises(InputError):
        memory.infer([])


def test_one_message_is_taken_as_it_is(memory):
    out = memory.infer({"role": "user", "name": "Cy", "content": "I live in Rome."}, user_id="c")
    assert [a.memory.content for a in out] == ["Cy lives in Rome."]
    with pytest.raises(InputError):
        memory.infer({"role": "user", "content": ""})


def test_add_many_infers_item_after_item(memory):
    got = memory.add_many(
        ["Ann lives in Paris.", "Ann lives in Paris.", "Ann moved to Oslo."],
        user_id="u",
        infer=True,
    )
    assert got[0].id == got[1].id and memory.count() == 2
    assert memory.get(got[0].id).superseded_by == got[2].id


# -- the engine path ------------------------------------------------------------------------
class _Malformed:
    """An engine whose output stays invalid after its retry (what the llama.cpp engine raises
    then): the logic after the failure is what is tested here."""

    name = "llama:broken"

    def fit(self, messages, max_tokens):  # pragma: no cover - never reached
        raise SchemaError("broken did not produce a valid Facts after 2 attempts: truncated")

    def generate_json(self, *a, **k):  # pragma: no cover - never reached
        raise SchemaError("unreachable")


def test_trap_4540_malformed_model_output_stores_the_text_and_records_why(open_memory, store_path):
    mem = open_memory(store_path, engine=_Malformed())
    (applied,) = mem.infer("I adopted a dog named Max. I live in Oslo.", user_id="u")
    assert applied.event == "ADD"
    assert applied.memory.content == "I adopted a dog named Max. I live in Oslo."
    info = mem.history(applied.memory.id)[-1].info
    assert info["extracted_by"] == "failed" and "after 2 attempts" in info["note"]
    assert info["decider"] == "failed"  # the reconcile failed too: the fact was added


@pytest.mark.slow
def test_the_engine_path_runs_on_the_tiny_gguf_and_loses_nothing(
    open_memory, store_path, tiny_engine
):
    mem = open_memory(store_path, engine=tiny_engine)
    mem.add("Ann lives in Paris.", user_id="u")
    out = mem.infer("Ann moved to Berlin.", user_id="u", event_time=t(2024))
    assert out  # at least one fact stored, updated or recognised
    for a in out:
        assert a.decider in (tiny_engine.name, "failed")
        assert not mem.get(a.memory.id).deleted
    assert not any(m.deleted for m in mem.list(include_deleted=True))
    for m in mem.list():
        if m.superseded_by:  # the successor exists and is live
            assert not mem.get(m.superseded_by).deleted


# -- properties -----------------------------------------------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PEOPLE = ("Ann", "Bo")
_FACTS = st.one_of(
    st.builds(
        "{} lives in {}.".format,
        st.sampled_from(_PEOPLE),
        st.sampled_from(("Paris", "Oslo", "Rome")),
    ),
    st.builds(
        "{} works at {}.".format, st.sampled_from(_PEOPLE), st.sampled_from(("Acme", "Initech"))
    ),
    st.builds("{} has {} cats.".format, st.sampled_from(_PEOPLE), st.integers(1, 4)),
    st.builds("{} likes {}.".format, st.sampled_from(_PEOPLE), st.sampled_from(("tea", "coffee"))),
    st.builds(
        "{} no longer likes {}.".format,
        st.sampled_from(_PEOPLE),
        st.sampled_from(("tea", "coffee")),
    ),
    st.builds(
        "{} went hiking with {}.".format, st.sampled_from(_PEOPLE), st.sampled_from(("Cy", "Di"))
    ),
)


@pytest.mark.slow
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(facts=st.lists(st.tuples(_FACTS, st.integers(2000, 2030)), min_size=1, max_size=7))
def test_reconciling_never_loses_a_memory(open_memory, tmp_path_factory, facts):
    mem = open_memory(tmp_path_factory.mktemp("prop") / "store")
    for text, year in facts:
        out = mem.infer(text, user_id="u", event_time=t(year))
        assert out, "every add leaves at least one decision"
    stored = mem.list(include_deleted=True, limit=1000)
    by_id = {m.id: m for m in stored}
    assert not any(m.deleted for m in stored)  # nothing is ever deleted by inference
    texts = {m.content for m in stored}
    for text, _ in facts:  # every fact said is stored (added, or repeated as an existing one)
        assert text in texts
    for m in stored:
        if m.valid_to is not None:  # every superseded memory has a live successor
            successor = by_id[m.superseded_by]
            assert not successor.deleted and successor.id != m.id
            assert m.valid_to == (successor.valid_from or successor.when) or successor.valid_to
    # one current value per person and single-valued slot
    current = [slots.read(m.content) for m in stored if m.valid_to is None]
    keys = [(s.subject, s.slot) for s in current if s and not s.slot.startswith("likes")]
    assert len(keys) == len(set(keys))


# -- the command line -----------------------------------------------------------------------
def _cli(capsys, *args):
    from localmem.cli import main

    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_cli_shows_each_decision_and_what_was_superseded(capsys, tmp_path):
    s = ["--store", str(tmp_path / "s")]
    when = "--event-time"
    code, out, _ = _cli(
        capsys, "add", *s, "--infer", "--user", "u", when, t(2021), "Ann lives in Paris."
    )
    assert code == 0 and out.startswith("ADD")
    code, out, _ = _cli(
        capsys, "add", *s, "--infer", "--user", "u", when, t(2021, 6), "Ann lives in Paris."
    )
    assert out.startswith("NONE")
    code, out, _ = _cli(
        capsys,
        "add",
        *s,
        "--infer",
        "--user",
        "u",
        "--speaker",
        "Ann",
        when,
        t(2024),
        "I moved to Oslo.",
    )
    assert out.startswith("INVALIDATE") and "paris -> oslo" in out
    _, out, _ = _cli(capsys, "list", *s, "--json")
    paris = next(m for m in json.loads(out) if "Paris" in m["content"])
    oslo = next(m for m in json.loads(out) if "Oslo" in m["content"])
    assert paris["superseded_by"] == oslo["id"] and paris["valid_to"].startswith("2024-01-01")
    _, out, _ = _cli(capsys, "show", *s, paris["id"])
    assert f"superseded by {oslo['id']}" in out
    _, out, _ = _cli(capsys, "history", *s, paris["id"])
    assert "INVALIDATE valid_to by infer" in out and "why: new home" in out
    _, out, _ = _cli(capsys, "search", *s, "where does Ann live", "--json")
    assert [h["id"] for h in json.loads(out)["hits"]] == [oslo["id"]]
    _, out, _ = _cli(capsys, "search", *s, "where does Ann live", "--as-of", t(2022), "--json")
    assert [h["id"] for h in json.loads(out)["hits"]] == [paris["id"]]
    code, _, err = _cli(capsys, "search", *s, "x", "--as-of", "not a time")
    assert code != 0 and err.startswith("localmem: error:") and "Traceback" not in err
    code, _, err = _cli(capsys, "add", *s, "--speaker", "Ann", "x")
    assert code != 0 and "--speaker needs --infer" in err


def test_validity_defaults_to_the_event_time_and_follows_it(memory):
    a = memory.add("Ann lives in Paris.", event_time=t(2020))
    assert a.valid_from == datetime(2020, 1, 1, tzinfo=timezone.utc) and a.valid_to is None
    assert memory.get(a.id).valid_from == a.valid_from
    b = memory.add("no time given")
    assert memory.get(b.id).valid_from == memory.get(b.id).created_at
    memory.update(a.id, event_time=t(2019))
    assert memory.get(a.id).valid_from == datetime(2019, 1, 1, tzinfo=timezone.utc)
    hits = memory.search("Paris", as_of=t(2019, 6)).hits
    assert [h.memory.id for h in hits] == [a.id]
    assert memory.search("Paris", as_of=t(2018)).hits == []


def test_a_near_duplicate_with_more_detail_updates_and_keeps_the_old_text(memory):
    first = memory.add("Ann adopted a beagle puppy named Max.", user_id="u", infer=True)
    (applied,) = memory.infer("Ann adopted a beagle puppy named Max from the shelter.", user_id="u")
    assert applied.event == "UPDATE" and applied.memory.id == first.id
    assert memory.get(first.id).content.endswith("from the shelter.") and memory.count() == 1
    update = next(h for h in memory.history(first.id) if h.event == "UPDATE")
    assert update.old_value == "Ann adopted a beagle puppy named Max." and update.actor == "infer"
    assert memory.search("shelter", mode="lexical").hits[0].memory.id == first.id  # re-indexed


def test_asking_for_the_engine_without_one_is_an_error_and_stores_nothing(open_memory, store_path):
    from localmem.config import Config
    from localmem.errors import EngineUnavailableError

    mem = open_memory(store_path, config=Config.from_dict({"infer": {"extractor": "engine"}}))
    with pytest.raises(EngineUnavailableError):
        mem.add("Ann lives in Paris.", infer=True)
    assert mem.count() == 0


def test_a_message_ingested_again_after_it_was_superseded_is_a_repeat(memory):
    # the fact's time is before the supersession: one search of now would not see the old
    # memory, so the neighbours come from a second search of what was true then
    old = memory.add("Ann lives in Paris.", user_id="u", event_time=t(2020), infer=True)
    memory.add("Ann moved to Berlin.", user_id="u", event_time=t(2022), infer=True)
    assert memory.get(old.id).valid_to is not None
    (again,) = memory.infer("Ann lives in Paris.", user_id="u", event_time=t(2020, 6))
    assert again.event == "NONE"
    assert again.memory.id == old.id


def test_one_search_serves_a_fact_added_in_time_order(memory):
    from localmem.store import records

    kernel = memory.kernel
    memory.add("Ann lives in Paris.", user_id="u", event_time=t(2020), infer=True)
    memory.add("Ann moved to Berlin.", user_id="u", event_time=t(2022), infer=True)
    at = datetime(2023, 1, 1, tzinfo=timezone.utc)
    assert records.true_now_as_at(kernel.db, at, user_id="u")
    # before the move: Paris was true then, not now
    assert not records.true_now_as_at(kernel.db, datetime(2021, 1, 1, tzinfo=timezone.utc))
    # a memory that begins after the moment
    assert not records.true_now_as_at(kernel.db, datetime(2019, 1, 1, tzinfo=timezone.utc))
    # another user's history is not this one's
    assert records.true_now_as_at(kernel.db, datetime(2021, 1, 1, tzinfo=timezone.utc), user_id="v")
