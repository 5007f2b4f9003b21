"""An averaged reader (``scripts/train_infer.py --seeds``) scores as the mean of its members'
scores, the tagger's over the union of their features; the real shipped weights, made-up members.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import train_infer  # scripts/ is not a package: on the path above

from localmem.infer.reading import TAGS, Reader, shipped, token_features, tokens_of


def _arrays(reader: Reader) -> tuple[dict, list]:
    arrays = {
        "slot_w": reader.slot_w,
        "slot_b": reader.slot_b,
        "end_w": reader.end_w,
        "end_b": np.array(reader.end_b, np.float32),
        "tag_w": reader.tag_w.astype(np.float16),
        "tag_b": reader.tag_b,
    }
    return arrays, sorted(reader.vocab, key=reader.vocab.get)


def _member(base: Reader, rng: np.random.Generator, keep: float) -> tuple[dict, list]:
    """The shipped reader with its weights shaken and some tagger features dropped."""
    arrays, vocab = _arrays(base)
    kept = np.flatnonzero(rng.random(len(vocab)) < keep)
    shaken = {k: (v + rng.normal(0, 0.1, v.shape)).astype(v.dtype) for k, v in arrays.items()}
    shaken["tag_w"] = shaken["tag_w"][kept]
    return shaken, [vocab[i] for i in kept]


def _tag_scores(arrays: dict, vocab: list, tokens: list[str]) -> np.ndarray:
    index = {f: i for i, f in enumerate(vocab)}
    w = arrays["tag_w"].astype(np.float32)
    rows = []
    for feats in token_features(tokens):
        idx = [index[f] for f in feats if f in index]
        rows.append(arrays["tag_b"] + (w[idx].sum(axis=0) if idx else 0))
    return np.array(rows)


def test_the_average_scores_as_the_mean_of_its_members(embedder) -> None:
    rng = np.random.default_rng(7)
    members = [_member(shipped(), rng, keep) for keep in (0.9, 0.7, 0.8)]
    arrays, vocab = train_infer.average(members)
    assert set(vocab) == {f for _, v in members for f in v}
    text = "Priya handed the on-call rotation to Marco last week."
    vector = embedder.embed_batch([text])[0]
    tokens = tokens_of(text)
    slot = np.mean([m["slot_w"] @ vector + m["slot_b"] for m, _ in members], axis=0)
    np.testing.assert_allclose(arrays["slot_w"] @ vector + arrays["slot_b"], slot, atol=1e-4)
    tags = np.mean([_tag_scores(m, v, tokens) for m, v in members], axis=0)
    # float16 storage of the tagger's weights: a few thousandths
    np.testing.assert_allclose(_tag_scores(arrays, vocab, tokens), tags, atol=2e-2)
    assert tags.shape == (len(tokens), len(TAGS))


def test_one_reader_averaged_is_itself() -> None:
    arrays, vocab = _arrays(shipped())
    same, same_vocab = train_infer.average([(arrays, vocab)])
    assert same_vocab == vocab
    for key, value in arrays.items():
        assert np.array_equal(same[key], value)
