"""Built-in chat templates, the guess from the architecture, base-model detection (pure logic;
the real-weights tier runs the guessed Gemma template on a real GGUF)."""

from __future__ import annotations

from pathlib import Path

import pytest

from localmem.llm.decode import complete_json
from localmem.llm.gguf_header import GGUFInfo
from localmem.llm.templates import (
    BUILTIN_TEMPLATES,
    choose_template,
    guess_template,
    is_base_model,
    missing_template_message,
)


def _info(arch: str, *, name: str = "m", template: str | None = None, vocab: int = 32000, **meta):
    metadata = {"general.architecture": arch, "general.name": name, "tokenizer.ggml.tokens": vocab}
    if template:
        metadata["tokenizer.chat_template"] = template
    metadata.update(meta)
    return GGUFInfo(Path(f"/models/{name}.gguf"), 1, 3, 1, 1, metadata)


@pytest.mark.parametrize(
    ("arch", "vocab", "expected"),
    [
        ("gemma3", 262144, "gemma"),
        ("gemma2", 256000, "gemma"),
        ("qwen2", 151936, "chatml"),
        ("qwen3", 151936, "chatml"),
        ("llama", 128256, "llama3"),
        ("llama", 32000, None),  # Llama 2 / Mistral: no built-in template is right
        ("phi3", 32064, None),
    ],
)
def test_the_guess_follows_the_architecture_and_vocabulary(arch, vocab, expected):
    assert guess_template(_info(arch, vocab=vocab)) == expected


def test_the_files_own_template_wins_unless_config_names_one():
    own = _info("qwen2", template="{{ messages }}")
    assert choose_template(own, None).source == "gguf"
    assert choose_template(own, "auto").template == "{{ messages }}"
    assert choose_template(own, "llama3").template == BUILTIN_TEMPLATES["llama3"]
    assert choose_template(own, "{% for m in messages %}{% endfor %}").source == "config"


def test_a_guess_comes_with_a_notice_and_no_guess_with_a_message_naming_the_fix():
    guessed = choose_template(_info("gemma3", vocab=262144), None)
    assert guessed.source == "guessed:gemma" and "engine.chat_template" in guessed.notice
    none = choose_template(_info("phi3"), None)
    assert none.template is None
    message = missing_template_message(_info("phi3"))
    assert "no chat template" in message and "engine.chat_template" in message
    assert all(name in message for name in BUILTIN_TEMPLATES)


@pytest.mark.parametrize(
    ("name", "template", "meta", "base"),
    [
        ("qwen2.5-1.5b-instruct", "{{ x }}", {}, False),
        ("gemma-3-270m", None, {}, True),  # no template of its own
        ("gemma-3-270m-pt", "{{ x }}", {}, True),
        ("Llama-3.2-3B", "{{ x }}", {"general.finetune": "base"}, True),
        ("mistral-7b-pretrained", "{{ x }}", {}, True),
        ("deepseek-coder-instruct", "{{ x }}", {"general.finetune": "instruct"}, False),
        ("opt-model", "{{ x }}", {}, False),  # "pt" inside a word is not a marker
    ],
)
def test_base_models_are_recognised_by_template_name_or_metadata(name, template, meta, base):
    assert is_base_model(_info("llama", name=name, template=template, **meta)) is base


@pytest.mark.parametrize(
    ("text", "done"),
    [
        ('{"a": 1}', True),
        ('{"a": "}"', False),
        ('{"a": {"b": 2}}  ', True),
        ('{"a": {"b": 2}', False),
        ("[1]", False),
        ("", False),
    ],
)
def test_a_json_output_is_complete_when_its_object_closes(text, done):
    assert complete_json(text) is done
