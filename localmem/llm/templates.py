"""Built-in chat templates for GGUFs published without one, and base-model detection.

A GGUF normally carries its Jinja chat template (``tokenizer.chat_template``). Some do not:
base (pretrained, not instruction-tuned) models, and conversions that dropped it. For those the
engine uses a built-in template, named in config (``engine.chat_template = "gemma"``) or, when
none is named, guessed from the header's ``general.architecture`` (and vocabulary size, which
tells Llama 3 from older Llamas); a guess is logged as a notice so nobody is surprised.

A base model is accepted, with a warning that says what to expect: it continues text rather
than following instructions, so the grammar still makes every output schema-valid, but what it
writes inside the fields is weak.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from localmem.llm.gguf_header import GGUFInfo

# Gemma has no system role: a system message becomes the start of the first user turn (what
# Google's own Gemma 3 template does).
GEMMA_TEMPLATE = (
    "{{ bos_token }}"
    "{% if messages[0]['role'] == 'system' %}"
    "{% set prefix = messages[0]['content'] | trim + '\n\n' %}{% set rest = messages[1:] %}"
    "{% else %}{% set prefix = '' %}{% set rest = messages %}{% endif %}"
    "{% for m in rest %}<start_of_turn>{{ 'model' if m['role'] == 'assistant' else 'user' }}\n"
    "{{ prefix if loop.first else '' }}{{ m['content'] | trim }}<end_of_turn>\n{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)
CHATML_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
LLAMA3_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m['role'] }}<|end_header_id|>"
    "\n\n{{ m['content'] | trim }}<|eot_id|>{% endfor %}"
    "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
)
BUILTIN_TEMPLATES = {"gemma": GEMMA_TEMPLATE, "chatml": CHATML_TEMPLATE, "llama3": LLAMA3_TEMPLATE}
"""Built-in templates by the name ``engine.chat_template`` may give."""

_LLAMA3_VOCAB = 128_000  # Llama 3's vocabulary has 128,256 tokens; Llama 2's and Mistral's 32k


@dataclass(frozen=True)
class TemplateChoice:
    """The template an engine uses and where it came from.

    Attributes:
        template: The Jinja text, or None when there is none (the engine then refuses the model).
        source: ``gguf`` (the file's own), ``config`` (a Jinja text from config),
            ``builtin:<name>`` (named in config) or ``guessed:<name>`` (from the architecture).
        notice: What a person should be told about the choice (a guess), or None.
    """

    template: str | None
    source: str
    notice: str | None = None


def guess_template(info: GGUFInfo) -> str | None:
    """The built-in template that fits the architecture in the header, or None."""
    arch = info.architecture.lower()
    if arch.startswith("gemma"):
        return "gemma"
    if arch.startswith("qwen"):
        return "chatml"
    if arch == "llama" and (info.vocab_size or 0) >= _LLAMA3_VOCAB:
        return "llama3"
    return None


def choose_template(info: GGUFInfo, configured: str | None) -> TemplateChoice:
    """The chat template for ``info``: the configured one, else the file's, else a guess.

    ``configured`` is a built-in name, a Jinja template, ``"auto"`` or None (both: the file's
    own template, else a guess from the architecture).
    """
    name = (configured or "").strip()
    if name in BUILTIN_TEMPLATES:
        return TemplateChoice(BUILTIN_TEMPLATES[name], f"builtin:{name}")
    if name and name != "auto":
        return TemplateChoice(configured, "config")
    if info.chat_template is not None:
        return TemplateChoice(info.chat_template, "gguf")
    guess = guess_template(info)
    if guess is None:
        return TemplateChoice(None, "none")
    notice = (
        f"{info.path.name} has no chat template; using the built-in '{guess}' template "
        f"guessed from its architecture ({info.architecture}); set engine.chat_template to "
        f"choose another ({', '.join(BUILTIN_TEMPLATES)} or a Jinja template)"
    )
    return TemplateChoice(BUILTIN_TEMPLATES[guess], f"guessed:{guess}", notice)


def missing_template_message(info: GGUFInfo) -> str:
    """What to tell a person whose GGUF has no template and no guess fits."""
    return (
        f"{info.path.name} has no chat template and its architecture ({info.architecture}) "
        "matches no built-in one, so prompts cannot be formatted for it; set "
        f"engine.chat_template to one of {', '.join(BUILTIN_TEMPLATES)} or a Jinja template, "
        "or use an instruct model's GGUF"
    )


_BASE_WORDS = re.compile(r"(?:^|[-_. ])(?:base|pt|pretrained?)(?:$|[-_. ])", re.IGNORECASE)


def is_base_model(info: GGUFInfo) -> bool:
    """Whether the header says this is a base (pretrained, not instruction-tuned) model.

    Evidence: no chat template of its own, or ``base``/``pt``/``pretrained`` in its name,
    ``general.finetune``, ``general.type`` or file name (``gemma-3-270m-pt``).
    """
    if info.chat_template is None:
        return True
    meta = info.metadata
    fields = [info.path.stem, info.name, meta.get("general.finetune"), meta.get("general.type")]
    return any(isinstance(f, str) and _BASE_WORDS.search(f) for f in fields)


def base_model_warning(info: GGUFInfo) -> str:
    """The warning shown when a base model serves the model tasks."""
    return (
        f"{info.path.name} looks like a base model (not instruction-tuned): it continues text "
        "rather than following instructions. Outputs stay schema-valid (the grammar enforces "
        "the form), but expect weak content: repeated or generic values, labels that ignore "
        "the text. For real use pick an instruct GGUF (models/README.md)."
    )


_WARNED: set[str] = set()


def warn_once(message: str) -> None:
    """Log a notice about a model once per process (stores open an engine each)."""
    if message not in _WARNED:
        _WARNED.add(message)
        logging.getLogger("localmem.llm").warning(message)
