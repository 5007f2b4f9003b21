"""Build a tiny llama-architecture GGUF with random weights, for tests and engine benchmarks.

The model is nonsense on purpose: random weights, a vocabulary of the 256 byte tokens plus a few
control tokens, and a ChatML-style chat template. What it proves is the plumbing: llama.cpp loads
it, renders the chat template, tokenizes, decodes, and with a JSON-schema grammar the output is
always valid JSON, so every task's schema can be run end to end through the real runtime.

Needs the ``gguf`` package (a test dependency, not a runtime one).

Usage::

    python scripts/make_tiny_gguf.py OUT.gguf [--no-chat-template]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

# Small enough to stay far under a megabyte, large enough for llama.cpp's kernels.
N_EMBD = 64
N_HEAD = 4
N_LAYER = 2
N_FF = 128
N_CTX_TRAIN = 32768
CLOSING_SCALE = 4.0

CONTROL_TOKENS = ("<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>")
UNK_ID, BOS_ID, EOS_ID, IM_START_ID, IM_END_ID = range(len(CONTROL_TOKENS))

# ChatML-like: what many small instruct models use; our own wording of the format.
TINY_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _vocab() -> tuple[list[bytes], list[int], list[float]]:
    import gguf

    tokens = [t.encode() for t in CONTROL_TOKENS]
    types = [gguf.TokenType.UNKNOWN] + [gguf.TokenType.CONTROL] * (len(CONTROL_TOKENS) - 1)
    for b in range(256):  # SentencePiece byte-fallback pieces: every text tokenizes to bytes
        tokens.append(f"<0x{b:02X}>".encode())
        types.append(gguf.TokenType.BYTE)
    scores = [0.0] * len(tokens)
    return tokens, [int(t) for t in types], scores


def build_tiny_gguf(
    path: str | Path, *, chat_template: bool = True, seed: int = 0, name: str = "tiny-test"
) -> Path:
    """Write the tiny model to ``path`` and return the path.

    Args:
        path: Where to write the ``.gguf`` file (its folder is created).
        chat_template: Include the chat template (False builds the "no template" bad case).
        seed: Seed of the random weights (same seed, same file).
        name: ``general.name`` written into the header.
    """
    import gguf

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    tokens, types, scores = _vocab()
    n_vocab = len(tokens)

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(name)
    writer.add_context_length(N_CTX_TRAIN)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_scores(scores)
    writer.add_unk_token_id(UNK_ID)
    writer.add_bos_token_id(BOS_ID)
    writer.add_eos_token_id(EOS_ID)
    writer.add_add_bos_token(False)  # the template decides, as in many chat models
    writer.add_add_space_prefix(False)
    if chat_template:
        writer.add_chat_template(TINY_CHAT_TEMPLATE)

    def weight(*shape: int, scale: float = 0.2) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float16)

    # Shapes are numpy order (rows = output features); f16 keeps the file near 300 KB.
    writer.add_tensor("token_embd.weight", weight(n_vocab, N_EMBD))
    writer.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    output = weight(n_vocab, N_EMBD)
    # Larger rows for the tokens that close things make random outputs end sooner, which
    # keeps the tests fast; every token stays possible, so the grammar still decides.
    for token in (EOS_ID, *(len(CONTROL_TOKENS) + ord(c) for c in '"]}')):
        output[token] *= CLOSING_SCALE
    writer.add_tensor("output.weight", output)
    for i in range(N_LAYER):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        for part in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"blk.{i}.{part}.weight", weight(N_EMBD, N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", weight(N_FF, N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", weight(N_FF, N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", weight(N_EMBD, N_FF))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="where to write the .gguf file")
    parser.add_argument("--no-chat-template", action="store_true", help="omit the template")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random weights")
    args = parser.parse_args(argv)
    out = build_tiny_gguf(args.out, chat_template=not args.no_chat_template, seed=args.seed)
    print(f"wrote {out} ({out.stat().st_size / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
