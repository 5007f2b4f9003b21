"""Procedural memory on a real store with the real MiniLM: abstraction, find, record, retire."""

from __future__ import annotations

import pytest

from localmem.errors import InputError, NotFoundError, SchemaError

TASK_A = "Debug: API returns 500 error when user field is null"
TASK_B = "Debug: API returns 500 error when email field is missing"
THOUGHTS_A = [
    "Reproduce with a request that has user=null: 500 confirmed.",
    "The stack trace points at the serializer calling user.name in serializers/order.py.",
    "Restarting the worker did not help.",
    "Add a null check and return 400 with a clear message.",
    "Write a regression test that posts user=null; it passes.",
]
DESIGN_TASK = "Design a rate limiter for the public search API"
DESIGN_THOUGHTS = [
    "Clarify the limit per API key: 10 requests per second with short bursts.",
    "Compare fixed window, sliding window and token bucket.",
    "Choose a token bucket per key, kept in Redis so every server shares it.",
    "Answer limited clients with 429 and a Retry-After header.",
]


@pytest.fixture
def memory(store_path, open_memory):
    """A fresh store with no engine (model-free), whatever is in models/."""
    from localmem import Config

    return open_memory(store_path, config=Config().with_updates(engine={"kind": "none"}))


def session(mem, title=TASK_A, thoughts=THOUGHTS_A):
    s = mem.start_session(title, user_id="u1")
    for t in thoughts:
        mem.add_thought(s.id, t)
    return s


def abstracted(mem, title=TASK_A, thoughts=THOUGHTS_A, level="hybrid"):
    s = session(mem, title, thoughts)
    done = mem.complete_session(s.id, "success", abstract=True, level=level)
    return mem.procedures.get(done.metadata["procedure_id"])


def test_complete_session_abstracts_a_procedure(memory):
    s = session(memory)
    done = memory.complete_session(s.id, "success", abstract=True)
    assert done.status == "completed" and done.outcome == "success"
    proc = memory.procedures.get(done.metadata["procedure_id"])
    assert proc.level == "hybrid" and proc.served_by == "model-free"
    assert proc.task_type == "debugging" and proc.version == 1 and proc.status == "active"
    assert proc.source_session_id == s.id
    assert proc.trigger == "Debug: API returns 500 error when a field is null"
    assert proc.steps[0] == "Reproduce with a request that has <field>=<value>"
    assert all("did not help" not in step for step in proc.steps)
    assert "user=null" in proc.example and "serializers/order.py" in proc.example
    # the trigger is a memory of kind procedure: embedded, searchable, scoped like the session
    trigger = memory.get(proc.memory_id)
    assert trigger.kind == "procedure" and trigger.content == proc.trigger
    assert trigger.user_id == "u1" and trigger.metadata["procedure_id"] == proc.id
    hits = memory.search("500 error on a null field", kinds=["procedure"])
    assert [h.memory.id for h in hits] == [proc.memory_id]
    assert [e.event for e in memory.procedures.history(proc.id)] == ["CREATE"]


def test_levels_keep_or_strip_the_specifics(memory):
    concrete = abstracted(memory, level="concrete")
    abstract = abstracted(memory, level="abstract")
    assert any("user=null" in s for s in concrete.steps) and concrete.example is None
    assert concrete.trigger == TASK_A
    joined = " ".join(abstract.steps)
    assert "user=null" not in joined and "order.py" not in joined and "<field>" in joined
    assert abstract.example is None


def test_find_returns_the_similar_procedure_or_none(memory):
    proc = abstracted(memory)
    design = abstracted(memory, DESIGN_TASK, DESIGN_THOUGHTS)
    assert design.task_type == "design"
    match = memory.procedures.find(TASK_B)
    assert match is not None and match.procedure.id == proc.id
    assert match.type_match is True and match.task_type == "debugging"
    assert match.score == pytest.approx(match.similarity + 0.1)
    assert memory.procedures.find("Plan the office move to the new building") is None
    assert memory.procedures.find(TASK_B, threshold=match.score + 0.01) is None
    ignored = memory.procedures.find(TASK_B, task_type="any", threshold=0.0)
    assert ignored.type_match is None and ignored.score == pytest.approx(ignored.similarity)
    ranked = memory.procedures.matches("Design a rate limiter for the login endpoint", k=5)
    assert [m.procedure.id for m in ranked] == [design.id, proc.id]
    assert "PROCEDURE (debugging):\n1. Reproduce" in memory.procedures.render(match)


def test_find_many_orders_procedures_by_the_parts_of_the_task(memory):
    debug = abstracted(memory)
    design = abstracted(memory, DESIGN_TASK, DESIGN_THOUGHTS)
    task = (
        "Design a rate limiter for the login endpoint; "
        "then debug the 500 error when a field is null"
    )
    found = memory.procedures.find_many(task, threshold=0.3)
    assert [m.procedure.id for m in found] == [design.id, debug.id]
    assert memory.procedures.find_many(TASK_B, threshold=0.3)[0].procedure.id == debug.id


def test_record_revises_on_failure_retires_and_restores(memory):
    proc = abstracted(memory)
    ok = memory.procedures.record(proc.id, True, task=TASK_B)
    assert ok.procedure.use_count == 1 and ok.procedure.success_count == 1 and not ok.revised
    failed = memory.procedures.record(
        proc.id,
        False,
        ["Added the null check, still 500.", "The error came from the validation middleware."],
        task=TASK_B,
    )
    p = failed.procedure
    assert failed.revised and p.version == 2 and p.failure_count == 1
    assert p.caveats == ("The error came from the validation middleware",)
    assert p.steps == proc.steps  # model-free: the steps stay, the failure becomes a caveat
    versions = memory.procedures.versions(proc.id)
    assert [v.version for v in versions] == [1, 2] and versions[0].caveats == ()
    assert memory.procedures.find(TASK_B).reliability == pytest.approx(2 / 4)
    result = memory.procedures.record(proc.id, False, note="wrong layer")
    assert result.retired and result.procedure.status == "retired"
    assert memory.procedures.find(TASK_B, threshold=0.0) is None
    assert memory.get(proc.memory_id, include_deleted=True).deleted
    with pytest.raises(InputError, match="retired"):
        memory.procedures.record(proc.id, True)
    assert [p.id for p in memory.procedures.list(status="retired")] == [proc.id]
    back = memory.procedures.restore(proc.id)
    assert back.status == "active" and back.use_count == 3 and back.version == 3
    assert memory.procedures.find(TASK_B, threshold=0.0).procedure.id == proc.id
    events = [e.event for e in memory.procedures.history(proc.id)]
    assert events == ["CREATE", "USE", "USE", "REVISE", "USE", "REVISE", "RETIRE", "RESTORE"]
    assert memory.procedures.history(proc.id)[4].info["note"] == "wrong layer"


def test_a_failed_use_can_take_its_trace_from_a_session(memory):
    proc = abstracted(memory)
    attempt = session(
        memory, TASK_B, ["Checked the handler.", "It turned out the proxy strips the body."]
    )
    memory.complete_session(attempt.id, "failure")
    result = memory.procedures.record(proc.id, False, session_id=attempt.id[:8])
    assert result.procedure.caveats == ("It turned out the proxy strips the body",)
    assert memory.procedures.history(proc.id)[1].info["session_id"] == attempt.id


def test_revisions_stand_in_for_the_thought_they_revise(memory):
    s = session(memory, thoughts=["Check the logs", "Restart the server", "Add a null check"])
    memory.add_thought(s.id, "Reproduce the error with user=null first", revises=2)
    assert memory.procedures.abstract  # the completed-session path is exercised below
    done = memory.complete_session(s.id, "success")
    proc = memory.procedures.abstract(done.id, level="concrete")
    assert proc.steps == (
        "Check the logs",
        "Reproduce the error with user=null first",
        "Add a null check",
    )


def test_procedures_survive_reopening(store_path, open_memory, memory):
    proc = abstracted(memory)
    memory.close()
    again = open_memory(store_path)
    assert again.procedures.get(proc.id[:6]).steps == proc.steps
    assert again.procedures.find(TASK_B).procedure.id == proc.id


def test_empty_or_failed_sessions_are_refused_and_stay_open(memory):
    empty = memory.start_session("Debug: nothing yet")
    with pytest.raises(InputError, match="has no thoughts"):
        memory.complete_session(empty.id, "success", abstract=True)
    assert memory.get_session(empty.id).status == "open"
    failed = session(memory)
    with pytest.raises(InputError, match="ended in failure"):
        memory.complete_session(failed.id, "failure", abstract=True)
    assert memory.get_session(failed.id).status == "open"
    thin = session(memory, thoughts=["Hmm."])
    with pytest.raises(InputError, match="at least 2"):
        memory.complete_session(thin.id, "success", abstract=True)
    assert memory.get_session(thin.id).status == "open"
    assert memory.procedures.list(status=None) == []
    assert memory.count() == 1 + 5 + 0  # the thoughts only, no trigger memory
    memory.complete_session(failed.id, "failure")
    with pytest.raises(InputError, match="ended in failure"):
        memory.procedures.abstract(failed.id)
    with pytest.raises(InputError, match="still open"):
        memory.procedures.abstract(thin.id)


def test_an_engine_answer_without_steps_is_rejected_not_stored(memory):
    """A fake engine for the rule itself; the real llama.cpp path is in test_procedures_llama."""
    from localmem.llm.base import Generation, Usage
    from localmem.procedures.tasks.procedure import Procedure as ProcedureAnswer

    class NoSteps:
        name = "fake"

        def fit(self, messages, *, max_tokens):
            from localmem.llm.base import FitResult

            return FitResult(list(messages), 10)

        def generate_json(self, messages, schema, *, max_tokens=None):
            value = ProcedureAnswer.model_construct(
                task_type="debugging", trigger="x", steps=["   ", "42"], example=""
            )
            return Generation(value, Usage(10, 5, 0.1), "fake")

    memory.kernel._engine = NoSteps()  # the engine this store's model tasks use
    s = session(memory)
    with pytest.raises(SchemaError, match="nothing was stored"):
        memory.complete_session(s.id, "success", abstract=True)
    assert memory.get_session(s.id).status == "open"
    assert memory.procedures.list(status=None) == []


def test_bad_input(memory):
    proc = abstracted(memory)
    procs = memory.procedures
    with pytest.raises(NotFoundError):
        procs.get("p_nope")
    with pytest.raises(InputError, match="True or False"):
        procs.record(proc.id, "yes")
    with pytest.raises(InputError, match="list of thoughts"):
        procs.record(proc.id, False, "one string")
    with pytest.raises(InputError, match="level must be"):
        memory.complete_session(session(memory).id, "success", abstract=True, level="vague")
    with pytest.raises(InputError, match="threshold"):
        procs.find(TASK_B, threshold="high")
    with pytest.raises(InputError, match="task is empty"):
        procs.find("  ")
    with pytest.raises(InputError, match="status must be"):
        procs.list(status="gone")
    with pytest.raises(InputError, match="at least 2"):
        procs.add("When x", ["only one"], task_type="design")
    with pytest.raises(InputError, match="steps must be a list"):
        procs.add("When x", "a string", task_type="design")
    hand = procs.add("When a design needs a cache", ["Measure", "Choose a TTL"], task_type="Design")
    assert hand.task_type == "design" and hand.served_by == "user"
    assert procs.get(proc.id).use_count == 0  # nothing was recorded by the refused calls
