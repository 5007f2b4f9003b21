"""The task registry, run_task's routing, make_engine and describe_engines, prompt fitting."""

from __future__ import annotations

# the judge task is the lab's (scripts/lab/judge.py), registered when imported: import it here
# so this file passes alone, not only after another test file has imported it
import lab.judge  # noqa: F401
import pytest

from localmem.config import Config, EngineConfig
from localmem.errors import EngineUnavailableError, InputError, ModelError
from localmem.llm import ENGINES, describe_engines, get_task, make_engine, run_task
from localmem.llm.base import Message, fit_messages
from localmem.llm.host import HostEngine
from localmem.llm.tasks import TaskContext, all_tasks, register

EXPECTED_TASKS = {
    "attributes",
    "evolution",
    "procedure",
    "reflection",
    "expand_query",
    "rerank",
    "answer",
    "rag_answer",
    "judge",
    "facts",
    "entities",
    "consolidate",
    "reconcile",
}


def test_every_task_is_registered_with_prompt_schema_and_example():
    specs = {s.name: s for s in all_tasks()}
    assert set(specs) == EXPECTED_TASKS
    for spec in specs.values():
        inputs = spec.example()
        messages = spec.build_prompt(inputs)
        assert messages and messages[0].role == "system"
        assert "JSON" in messages[0].content
        assert all(m.render().strip() for m in messages)
        assert spec.version >= 1


def test_memories_are_numbered_in_prompts_not_ids():
    spec = get_task("rerank")
    user = spec.build_prompt(spec.example())[-1].render()
    assert "[1] (8 May 2023) Caroline: I went" in user and "[3]" in user


def test_registry_refuses_duplicates_and_lists_names():
    with pytest.raises(InputError, match="already registered"):
        register(get_task("answer"))
    with pytest.raises(InputError, match="known: answer, attributes"):
        get_task("nope")
    with pytest.raises(InputError, match="already registered"):
        ENGINES.register("llama", lambda c: None)
    with pytest.raises(InputError, match="known: http, llama"):
        ENGINES.get("cloud")


def test_model_free_tasks_run_without_an_engine():
    result = run_task(
        "judge",
        {"question": "When?", "reference": "7 May 2023", "answer": "on May 7th, 2023"},
        engine=None,
    )
    assert result.served_by == "model-free" and result.value.label == "CORRECT"
    assert result.usage.prompt_tokens == 0 and result.usage.seconds >= 0


def _without_model_free():
    """A task that still has no model-free implementation (they get one, issue by issue)."""
    missing = [t for t in all_tasks() if t.model_free is None and t.example is not None]
    if not missing:
        pytest.skip("every task has a model-free implementation")
    return missing[0]


def test_a_task_without_engine_or_model_free_names_itself():
    spec = _without_model_free()
    with pytest.raises(EngineUnavailableError, match=f"task '{spec.name}' needs a model"):
        run_task(spec.name, spec.example(), engine=None)


def test_implementation_can_be_forced(tiny_engine):
    inputs = get_task("judge").example()
    forced = run_task("judge", inputs, engine=tiny_engine, implementation="model-free")
    assert forced.served_by == "model-free"
    with pytest.raises(EngineUnavailableError, match="asked to use a model"):
        run_task("judge", inputs, engine=None, implementation="model")
    with pytest.raises(EngineUnavailableError, match="asked to run model-free"):
        spec = _without_model_free()
        run_task(spec.name, spec.example(), engine=tiny_engine, implementation="model-free")


def test_bad_inputs_are_input_errors():
    with pytest.raises(InputError, match="task judge: invalid input reference"):
        run_task("judge", {"question": "q", "answer": "a"}, engine=None)


def test_attribute_labels_come_from_the_config(tiny_engine):
    inputs = {"text": "a note", "intents": ["alpha", "beta"], "topics": ["gamma"]}
    result = run_task("attributes", inputs, engine=tiny_engine, max_tokens=3000)
    assert result.value.intent in ("alpha", "beta") and result.value.topic == "gamma"


def test_make_engine_kinds(tmp_path, monkeypatch, tiny_gguf):
    monkeypatch.chdir(tmp_path)  # no ./models here
    assert make_engine(EngineConfig(kind="none", model_path=str(tiny_gguf))) is None
    assert make_engine(EngineConfig()) is None  # auto, nothing found: model-free
    with pytest.raises(EngineUnavailableError, match="no model was found"):
        make_engine(EngineConfig(kind="llama"))
    with pytest.raises(InputError, match="http_url"):
        make_engine(EngineConfig(kind="http"))
    engine = make_engine(Config().with_updates(engine={"model_path": str(tiny_gguf)}))
    assert isinstance(engine, HostEngine) and engine.name == "llama:tiny"
    http = make_engine(EngineConfig(kind="http", http_url="http://127.0.0.1:9", http_model="m"))
    assert http.name == "http:m"


def test_auto_finds_a_gguf_in_the_home_models_folder(
    isolated_home, tiny_gguf, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (isolated_home / "models").mkdir(parents=True)
    (isolated_home / "models" / "qwen-test.gguf").write_bytes(tiny_gguf.read_bytes())
    assert make_engine(EngineConfig()).name == "llama:qwen-test"


def test_describe_engines_says_who_serves_each_task(tmp_path, monkeypatch, tiny_gguf):
    monkeypatch.chdir(tmp_path)
    rows = {r["task"]: r for r in describe_engines(Config())}
    assert set(rows) == EXPECTED_TASKS
    assert rows["answer"]["served_by"] == "model-free" and rows["answer"]["ok"]
    assert rows["attributes"]["served_by"] == "model-free"
    with_model = describe_engines(EngineConfig(model_path=str(tiny_gguf)))
    assert {r["served_by"] for r in with_model} == {"llama:tiny"}
    assert with_model[0]["engine_info"]["loaded"] is False  # doctor never loads weights
    broken = describe_engines(EngineConfig(model_path=str(tmp_path / "gone.gguf")))
    assert not broken[0]["ok"] and "not found" in broken[0]["problem"]


def test_explicit_bad_model_path_raises_a_model_error(tmp_path):
    with pytest.raises(ModelError):
        make_engine(EngineConfig(model_path=str(tmp_path / "gone.gguf")))


# -- fitting prompts to a budget (pure logic; the llama tests cover it with real tokens) --


def _count(messages: list[Message]) -> int:
    return sum(len(m.render()) for m in messages)


def test_fit_keeps_everything_that_fits():
    msgs = [Message("user", "Q {memories}", memories=("a" * 10, "b" * 10))]
    fit = fit_messages(msgs, count=_count, budget=1000)
    assert fit.messages == msgs and fit.memories_dropped == 0 and not fit.warnings


def test_fit_drops_the_last_memories_first_and_shortens_one():
    mems = tuple(f"memory {i} " + "x" * 90 for i in range(10))
    msgs = [Message("user", "Q\n{memories}", memories=mems)]
    fit = fit_messages(msgs, count=_count, budget=480)
    kept = fit.messages[0].memories
    assert _count(fit.messages) <= 480
    assert kept[: len(kept) - 1] == mems[: len(kept) - 1]  # the first ones, untouched
    assert kept[-1].endswith("[...]")  # the next one, shortened
    assert fit.memories_dropped == 10 - len(kept)
    assert "kept 4 of 10 memories plus part of one more" in fit.warnings[0]


def test_fit_without_memories_to_drop_raises():
    with pytest.raises(InputError, match="shorten the input"):
        fit_messages([Message("user", "x" * 100)], count=_count, budget=50)


def test_fit_trims_the_last_message_first():
    msgs = [
        Message("system", "{memories}", memories=("s" * 50,)),
        Message("user", "{memories}", memories=("u" * 50,)),
    ]
    fit = fit_messages(msgs, count=_count, budget=60)
    assert fit.messages[0].memories == ("s" * 50,) and fit.messages[1].memories == ()


def test_task_context_defaults():
    ctx = TaskContext()
    assert ctx.embedder is None and ctx.config == Config() and ctx.now is None


def test_plain_messages_are_sent_as_written():
    literal = "format with {memories} in a code sample"
    assert Message("user", literal).render() == literal
    fit = fit_messages([Message("user", literal)], count=_count, budget=1000)
    assert fit.messages[0].render() == literal
    assert Message("user", "M:\n{memories}", memories=()).render() == "M:\n(none)"


def test_validation_retries_once_then_raises():
    from pydantic import BaseModel

    from localmem.errors import SchemaError
    from localmem.llm.base import FitResult, Usage, retry_temperature, validated

    class Out(BaseModel):
        n: int

    fit = FitResult([], 0)
    answers = iter([("not json", "stop", Usage(5, 2, 0.1)), ('{"n": 3}', "stop", Usage(5, 3, 0.1))])
    got = validated("fake", Out, lambda n: next(answers), max_tokens=10, fit=fit)
    assert got.value.n == 3 and got.attempts == 2 and got.usage.completion_tokens == 5
    with pytest.raises(SchemaError, match="max_tokens=10"):
        validated("fake", Out, lambda n: ('{"n": ', "length", Usage()), max_tokens=10, fit=fit)
    with pytest.raises(SchemaError, match="n: Input should be a valid integer"):
        validated("fake", Out, lambda n: ('{"n": "x"}', "stop", Usage()), max_tokens=10, fit=fit)
    assert retry_temperature(0.0, 1) == 0.0 and retry_temperature(0.0, 2) == 0.7
