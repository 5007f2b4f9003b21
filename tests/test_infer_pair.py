"""The pair model of issue 35's ninth pass ("do two facts fill the same slot?"), on the
shipped weights and the real MiniLM (the sentences are new: neither the generator's frames nor
the evaluation dialogues)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from localmem.infer import conflict, pair
from localmem.infer.reading import Reader, reader_for


@pytest.fixture(scope="module")
def reader(embedder) -> Reader:
    found = reader_for(embedder.name, embedder.dim)
    assert found is not None
    return found


def test_shipped_pair_model_fits_the_readers_embedder(reader: Reader) -> None:
    model = pair.shipped()
    assert model.fits(reader.embedder, reader.dim)
    assert not model.fits("multilingual-e5-small", 384)
    assert not model.fits(reader.embedder, 768)
    assert model.w1.shape == (2 * model.dim, model.w.shape[0])
    assert 0.0 < model.bar < 1.0


_VECTOR = arrays(np.float32, 384, elements=st.floats(-1, 1, width=32))


@settings(max_examples=30, deadline=None)
@given(_VECTOR, _VECTOR)
def test_the_pair_reading_is_a_probability_and_symmetric(a: np.ndarray, b: np.ndarray) -> None:
    model = pair.shipped()
    q = model.same_slot(a, b)
    assert 0.0 <= q <= 1.0
    assert q == pytest.approx(model.same_slot(b, a), abs=1e-6)


def _scores(reader: Reader, embedder, old: str, new: str) -> tuple[float, float, float]:
    """(product of the slot distributions, pair probability, the gate's score)."""
    vec, vector = embedder.embed_batch([old, new])
    o, n = reader.read(old, vec), reader.read(new, vector)
    none = reader.slots.index("none")
    product = float(np.dot(n.probs, o.probs)) - n.p(none) * o.p(none)
    return (
        product,
        pair.shipped().same_slot(vector, vec),
        conflict.same_slot(reader, n, o, vector, vec),
    )


@pytest.mark.parametrize(
    ("old", "same", "other"),
    [
        ("Ines lives in Porto.", "Ines moved to Braga in May.", "Ines is allergic to shellfish."),
        (
            "The ledger service runs Go 1.20.",
            "The ledger service was bumped to Go 1.22.",
            "The ledger service is owned by the payments squad.",
        ),
    ],
)
def test_a_pair_of_one_slot_reads_above_a_pair_of_two(
    reader: Reader, embedder, old: str, same: str, other: str
) -> None:
    assert _scores(reader, embedder, old, same)[1] > _scores(reader, embedder, old, other)[1]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Pia cycles to the lab every morning.", "Pia takes the tram to the lab now."),
        ("Our nightly export runs at 1am.", "Tove adopted a greyhound."),
        ("Hamid works at Spotify.", "Hamid's favourite colour is teal."),
    ],
)
def test_the_gate_never_scores_below_the_product(
    reader: Reader, embedder, old: str, new: str
) -> None:
    product, q, gate = _scores(reader, embedder, old, new)
    assert gate >= product
    if q < conflict.PAIR_P:
        assert gate == product  # below its bar the pair model changes nothing
    else:
        assert gate >= max(q, conflict.SAME_SLOT_P)
