"""The in-process llama.cpp engine (what the model host runs), for real on the tiny GGUF."""

from __future__ import annotations

import logging
import threading

import pytest
from pydantic import BaseModel, Field

from localmem.errors import InputError, ModelError, SchemaError
from localmem.llm.base import Message
from localmem.llm.llama import LlamaEngine
from localmem.llm.tasks import all_tasks, max_output_bytes, run_task, task_schema


@pytest.mark.parametrize("spec", all_tasks(), ids=lambda s: s.name)
def test_every_task_runs_end_to_end_on_llama_cpp(spec, tiny_llama):
    inputs = spec.example()
    # a byte-level random model may use the whole bound: give it room so nothing is cut
    result = run_task(
        spec.name, inputs, engine=tiny_llama, max_tokens=max_output_bytes(spec.name, inputs) + 8
    )
    assert result.served_by == "llama:tiny"
    assert isinstance(result.value, task_schema(spec.name, inputs))
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0
    assert result.usage.seconds > 0
    assert result.version == spec.version


class Short(BaseModel):
    answer: str = Field(max_length=30)
    ok: bool


def test_generation_is_deterministic_with_a_seed(tiny_llama):
    msgs = [{"role": "user", "content": "Say something."}]
    first = tiny_llama.generate_json(msgs, Short, max_tokens=200)
    second = tiny_llama.generate_json(msgs, Short, max_tokens=200)
    assert first.value == second.value
    assert first.engine == "llama:tiny" and first.attempts == 1


def test_text_generation_and_token_counts(tiny_llama):
    got = tiny_llama.generate_text([{"role": "user", "content": "hi"}], max_tokens=12)
    assert got.finish_reason in ("stop", "length")
    # llama-cpp-python finishes a multi-byte character past the limit: up to 3 more tokens
    assert got.usage.completion_tokens <= 12 + 3
    # the tiny vocabulary is bytes: one token per byte
    assert tiny_llama.count_tokens("hello") == 5
    assert tiny_llama.count_tokens("é") == 2


def test_prompt_uses_the_gguf_chat_template(tiny_llama):
    prompt = tiny_llama.render([Message("system", "S"), Message("user", "U")])
    assert prompt == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n" + (
        "<|im_start|>assistant\n"
    )


def test_max_tokens_hit_is_a_schema_error_after_one_retry(tiny_llama, caplog):
    class Long(BaseModel):
        text: str = Field(min_length=50, max_length=100)

    with caplog.at_level(logging.WARNING), pytest.raises(SchemaError, match="max_tokens=5"):
        tiny_llama.generate_json([{"role": "user", "content": "write"}], Long, max_tokens=5)
    assert sum("attempt" in r.message for r in caplog.records) == 2


def test_context_overflow_trims_memories_with_a_warning(tiny_gguf, caplog):
    engine = LlamaEngine(tiny_gguf, n_ctx=600, n_threads=1)
    memories = tuple(f"memory number {i}: " + "words " * 30 for i in range(20))
    msgs = [Message("user", "Which memory matters?\n{memories}", memories=memories)]
    with caplog.at_level(logging.WARNING):
        got = engine.generate_json(msgs, Short, max_tokens=150)
    assert 0 < got.memories_dropped < 20
    assert got.usage.prompt_tokens <= 600 - 150
    assert "kept" in got.warnings[0] and any("kept" in r.message for r in caplog.records)


def test_task_schema_follows_the_trimmed_memories(tiny_gguf):
    from localmem.retrieval.tasks.rerank import RerankInput

    engine = LlamaEngine(tiny_gguf, n_ctx=1000, n_threads=1)
    memories = [{"text": f"candidate {i} " + "detail " * 20} for i in range(12)]
    result = run_task(
        "rerank", RerankInput(query="which?", memories=memories), engine=engine, max_tokens=200
    )
    assert result.memories_dropped > 0
    assert result.memories_shown == 12 - result.memories_dropped
    assert len(result.value.scores) == result.memories_shown  # one score per memory seen
    assert all(1 <= s.memory <= result.memories_shown for s in result.value.scores)


def test_prompt_too_long_even_without_memories_is_an_input_error(tiny_gguf):
    engine = LlamaEngine(tiny_gguf, n_ctx=300, n_threads=1)
    with pytest.raises(InputError, match="shorten"):
        engine.generate_json([{"role": "user", "content": "x" * 1000}], Short, max_tokens=50)
    with pytest.raises(InputError, match="no room"):
        engine.generate_json([{"role": "user", "content": "x"}], Short, max_tokens=300)


def test_gguf_without_chat_template_is_refused_or_uses_the_configured_one(
    tmp_path, build_tiny_gguf
):
    plain = build_tiny_gguf(tmp_path / "plain.gguf", chat_template=False)
    with pytest.raises(ModelError, match="no chat template"):
        LlamaEngine(plain)
    engine = LlamaEngine(plain, n_ctx=2048, n_threads=1, chat_template="chatml")
    assert engine.describe()["chat_template"] == "builtin:chatml"
    assert engine.generate_json([{"role": "user", "content": "hi"}], Short, max_tokens=200)


def test_unknown_architecture_is_a_model_error(tmp_path, tiny_gguf):
    data = tiny_gguf.read_bytes().replace(b"llama", b"zzzzz", 1)  # general.architecture
    path = tmp_path / "alien.gguf"
    path.write_bytes(data)
    engine = LlamaEngine(path, n_threads=1, chat_template="chatml")
    with pytest.raises(ModelError, match="could not load"):
        engine.generate_text([{"role": "user", "content": "hi"}], max_tokens=2)


def test_one_model_is_loaded_once_and_shared(tiny_gguf):
    a = LlamaEngine(tiny_gguf, n_ctx=1024, n_threads=1)
    b = LlamaEngine(tiny_gguf, n_ctx=1024, n_threads=1)
    a.count_tokens("x")
    b.count_tokens("x")
    assert a._loaded is b._loaded
    assert not LlamaEngine(tiny_gguf, n_ctx=1024, n_threads=1).describe()["loaded"]  # lazy


def test_concurrent_calls_are_serialised_and_give_sequential_results(tiny_llama):
    prompts = [[{"role": "user", "content": f"question {i}"}] for i in range(4)]
    expected = [tiny_llama.generate_json(p, Short, max_tokens=200).value for p in prompts]
    got: dict[int, Short] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            got[i] = tiny_llama.generate_json(prompts[i], Short, max_tokens=200).value
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    assert [got[i] for i in range(4)] == expected


def test_system_role_is_folded_when_a_template_refuses_it(tmp_path, build_tiny_gguf):
    strict = (
        "{% for m in messages %}{% if m['role'] == 'system' %}"
        "{{ raise_exception('System role not supported') }}{% endif %}"
        "<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "<|im_start|>assistant\n"
    )
    engine = LlamaEngine(build_tiny_gguf(tmp_path / "t.gguf"), n_threads=1, chat_template=strict)
    prompt = engine.render([Message("system", "rules"), Message("user", "question")])
    assert "rules\n\nquestion" in prompt
