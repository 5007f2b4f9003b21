"""A token tagger over MiniLM's contextual token states, measured beside the shipped one.

Usage:
    python -P scripts/tagger_states.py fit [--per-slot 900] [--seed 35] [--pca 64]
        [--modes lexical,both,states] [--cache states.npz] [--out tagger-states.npz]
    python -P scripts/tagger_states.py fit-mlp --base tagger-states.npz --cache states.npz
        [--hidden 256] [--epochs 40] --out tagger-mlp.npz
    python -P scripts/tagger_states.py score --tagger FILE[:MODE] -- \
        [compare_readers.py's arguments]
    python -P scripts/tagger_states.py bench --tagger FILE[:MODE] -- \
        [bench_understanding.py's arguments]

Token states: the default embedder's int8 graph (the store's own) with one more graph output,
added in memory: the last layer's hidden states, the tensor the graph's mean pooling reads
(``/encoder/encoder/layer.5/output/LayerNorm/LayerNormalization_output_0``); its sentence
vectors are the embedder's, bit for bit. Each of the reader's tokens
(``localmem.infer.reading.TOKEN``, over the text the reader reads) gets the mean of the states
of the wordpieces its characters overlap (the tokenizer's offsets).

``fit`` generates the sentences ``train_infer.py`` does (``lab.infer_training.generate``, the
same seed, deduplicated; the tagger is fitted on every token, a leading "Name:" too, as
there), computes every token's state, and fits a logistic regression per MODE (:data:`MODES`):
``lexical`` (the shipped tagger's features alone: ``train_infer.py``'s tagger again, the
control), ``both`` (those plus the state, PCA-reduced to ``--pca`` components and
standardised), ``states`` (the state alone, all 384 dimensions standardised), ``shape`` and
``shape-full`` (the features that name no word, plus the state reduced or whole), ``-xN`` on
any (the state's columns scaled by N: penalised N^2 times less). Each is scored on the
validation sentences of another seed (``seed + 1000``, as ``train_infer.py``), minus any
sentence trained on: token accuracy, all and per tag. Each is written folded into lexical
weights, a (384, tags) matrix over the raw state and a bias. ``fit-mlp`` adds a network with
one hidden layer over the state alone (MODE ``mlp-xW``: the lexical tagger's log-probabilities
plus W times the network's).

``score`` runs ``compare_readers.py`` with the shipped reader's tagger replaced by one of
them (``lexical`` through this wrapper gives main's figures exactly); the slot and ending
classifiers and every rule stay the package's. ``bench`` does the same for
``bench_understanding.py``. Every reading computes its text's token states with a second run
of the graph (a measurement: a shipped form would take them from the run that embeds the
text).
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from localmem.embed import make_embedder
from localmem.infer import reading
from localmem.infer.reading import TAGS, token_features

HERE = Path(__file__).resolve().parent
STATES = "/encoder/encoder/layer.5/output/LayerNorm/LayerNormalization_output_0"


class TokenStates:
    """The default embedder's graph with its last hidden states as a second output."""

    def __init__(self, embedder=None) -> None:
        import onnx
        import onnxruntime as ort

        self.embedder = embedder or make_embedder()
        self.embedder.embed_batch(["warm"])  # loads the graph (assembled once, cached)
        graph_file = Path(self.embedder.model_file)
        model = onnx.load(str(graph_file), load_external_data=True)
        model.graph.output.append(
            onnx.helper.make_tensor_value_info(STATES, onnx.TensorProto.FLOAT, None)
        )
        options = ort.SessionOptions()
        options.intra_op_num_threads = 0
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self.session = ort.InferenceSession(model.SerializeToString(), options)
        self.tokenizer = self.embedder._tokenizer
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.calls = 0
        self.seconds = 0.0

    def run(
        self, texts: list[str], batch: int = 64, *, whole: bool = False
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Sentence vectors (the graph's own, normalised) and each text's wordpiece states."""
        from localmem.embed.onnx import _feeds

        started = time.perf_counter()
        encodings = self.tokenizer.encode_batch(list(texts))
        lengths = np.array([len(e.ids) for e in encodings])
        order = np.argsort(lengths, kind="stable")
        vectors = np.zeros((len(texts), 384), np.float32)
        states: list[np.ndarray] = [np.zeros(0)] * len(texts)
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            feeds = _feeds([encodings[i] for i in rows], int(lengths[rows].max()))
            vec, hidden = self.session.run(None, {n: feeds[n] for n in self.inputs})
            for k, i in enumerate(rows):
                vectors[i] = vec[k]
                states[i] = hidden[k, : lengths[i]]
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12
        self.calls += 1
        self.seconds += time.perf_counter() - started
        return vectors, [
            pool(text, enc.offsets, s, whole=whole)
            for text, enc, s in zip(texts, encodings, states, strict=True)
        ]


def spans(text: str, *, whole: bool = False) -> list[tuple[str, int, int]]:
    """The reader's tokens of ``text`` (``reading.tokens_of``) with their character spans
    (``whole``: every token, a leading "Name:" too, as the generator tags them)."""
    if whole:
        return [(m.group(), m.start(), m.end()) for m in reading.TOKEN.finditer(text)]
    said = reading._SAID_BY.match(text)
    start = said.end() if said else 0
    rest = text[start:]
    resolved = reading._RESOLVED.search(rest)
    end = start + (resolved.start() if resolved else len(rest))
    return [
        (m.group(), start + m.start(), start + m.end())
        for m in reading.TOKEN.finditer(text[start:end])
    ]


def pool(text: str, offsets, states: np.ndarray, *, whole: bool = False) -> np.ndarray:
    """One state per reader token: the mean of the wordpieces its characters overlap."""
    toks = spans(text, whole=whole)
    out = np.zeros((len(toks), states.shape[1] if states.ndim == 2 else 384), np.float32)
    for j, (_, s, e) in enumerate(toks):
        pieces = [k for k, (a, b) in enumerate(offsets) if b > a and a < e and b > s]
        if pieces:
            out[j] = states[pieces].mean(axis=0)
    return out


# -- fitting ----------------------------------------------------------------------------------


def token_rows(examples, states):
    """Examples whose reader tokens are the generator's tokens, with their states and tags."""
    feats, dense, tags, kept = [], [], [], 0
    for e, st in zip(examples, states, strict=True):
        toks = [t for t, _, _ in spans(e.text, whole=True)]
        if toks != list(e.tokens):
            continue
        kept += 1
        feats += token_features(e.tokens)
        dense.append(st)
        tags += [TAGS.index(t) for t in e.tags]
    return feats, np.vstack(dense), np.array(tags), kept


def sparse_x(feats, index, dense=None):
    from scipy.sparse import csr_matrix, hstack

    data, ind, ptr = [], [], [0]
    for f in feats:
        cols = sorted({index[x] for x in f if x in index})
        ind += cols
        data += [1.0] * len(cols)
        ptr.append(len(ind))
    x = csr_matrix((data, ind, ptr), shape=(len(feats), len(index)), dtype=np.float32)
    if dense is None:
        return x.tocsr()
    return hstack([x, csr_matrix(dense.astype(np.float32))]).tocsr()


def accuracy(pred: np.ndarray, y: np.ndarray) -> dict[str, float]:
    out = {"all": round(float((pred == y).mean()), 4)}
    for k, t in enumerate(TAGS):
        if (y == k).any():
            out[t] = round(float((pred[y == k] == k).mean()), 4)
    return out


#: the tagger's features that name a word (the rest: its shape, its neighbours' shapes, where)
WORD_FEATURES = ("w=", "suf=", "p1=", "p2=", "n1=", "n2=", "p1w=")
#: MODE: which lexical features (all, shapes only, none) and which form of the state
MODES = {
    "lexical": ("lex", "none"),
    "both": ("lex", "pca"),
    "states": ("none", "full"),
    "shape": ("shape", "pca"),
    "shape-full": ("shape", "full"),
    "both-full": ("lex", "full"),
}


def parse_mode(mode: str) -> tuple[str, str, float]:
    """``both``, ``shape-x3`` ...: lexical part, state part, the state's scale (a scale
    of 3 penalises the state's weights 9 times less than the lexical ones)."""
    name, _, scale = mode.partition("-x")
    lexical, dense = MODES[name]
    return lexical, dense, float(scale or 1)


def _data(args):
    """(lexical features, states, tags) of the training and the validation tokens (the
    states computed once and kept in ``--cache``)."""
    from lab.infer_training import generate
    from train_infer import _dedupe  # the same sentences train_infer.py fits on

    train = _dedupe(generate(args.per_slot, seed=args.seed))
    seen = {e.text.lower() for e in train}
    valid = [
        e
        for e in _dedupe(generate(max(100, args.per_slot // 5), seed=args.seed + 1000))
        if e.text.lower() not in seen
    ]
    cache = Path(args.cache) if args.cache else None
    if cache and cache.exists():
        saved = np.load(cache)
        st = np.split(saved["train"], np.cumsum([len(e.tokens) for e in train])[:-1])
        sv = np.split(saved["valid"], np.cumsum([len(e.tokens) for e in valid])[:-1])
    else:
        states = TokenStates()
        _, st = states.run([e.text for e in train], whole=True)
        _, sv = states.run([e.text for e in valid], whole=True)
        if cache:
            np.savez(cache, train=np.vstack(st), valid=np.vstack(sv))
    feats, dense, y, kept = token_rows(train, st)
    vfeats, vdense, vy, vkept = token_rows(valid, sv)
    # every generated sentence's tokens are the reader's (a leading "Name:" kept)
    assert kept == len(train) and vkept == len(valid)
    return (feats, dense, y), (vfeats, vdense, vy)


def _normaliser(dense: np.ndarray, k: int):
    """The states' mean, their first ``k`` principal axes (by the covariance's
    eigenvectors), the projections' and the states' standard deviations."""
    mean = dense.mean(axis=0)
    centred = dense - mean
    cov = centred.T @ centred / len(centred)
    _, evecs = np.linalg.eigh(cov.astype(np.float64))
    comps = evecs[:, ::-1][:, :k].T.astype(np.float32)  # (k, 384)
    zstd = (centred @ comps.T).std(axis=0) + 1e-6
    return mean, comps, zstd, dense.std(axis=0) + 1e-6


def _fold(w, b, mode: str, n_lex: int, shape_cols, norm) -> tuple:
    """A fitted model's weights as lexical weights over the vocabulary, a (384, tags)
    matrix over the raw states and a bias (the PCA and the standardising folded in)."""
    lexical, dense_kind, scale = parse_mode(mode)
    mean, comps, zstd, sd = norm
    lex_w = np.zeros((len(shape_cols), len(TAGS)), np.float32)
    if lexical == "lex":
        lex_w = w[:n_lex]
    elif lexical == "shape":
        lex_w[shape_cols] = w[:n_lex]
    dense_w = np.zeros((384, len(TAGS)), np.float32)
    if dense_kind == "pca":
        dense_w = (comps.T / zstd * scale) @ w[n_lex:]
    elif dense_kind == "full":
        dense_w = w[n_lex:] * (scale / sd)[:, None]
    return lex_w.astype(np.float32), dense_w.astype(np.float32), (b - mean @ dense_w)


def _design(mode: str, lx, dense: np.ndarray, shape_cols, norm):
    """The design matrix of one tagger form: lexical columns and / or the state's."""
    from scipy.sparse import csr_matrix, hstack

    lexical, dense_kind, scale = parse_mode(mode)
    mean, comps, zstd, sd = norm
    if lexical == "shape":  # the word's identity and its neighbours' words left out
        lx = lx[:, shape_cols]
    if dense_kind == "none":
        return lx, lx.shape[1]
    d = ((dense - mean) @ comps.T / zstd if dense_kind == "pca" else (dense - mean) / sd) * scale
    if lexical == "none":
        return d, 0
    return hstack([lx, csr_matrix(d)]).tocsr(), lx.shape[1]


def fit(args) -> int:
    from sklearn.linear_model import LogisticRegression

    started = time.time()
    (feats, dense, y), (vfeats, vdense, vy) = _data(args)
    print(f"{len(y)} train tokens, {len(vy)} valid tokens, {time.time() - started:.0f} s")
    counts: Counter[str] = Counter()
    for f in feats:
        counts.update(f)
    vocab = sorted(f for f, n in counts.items() if n >= 3)
    index = {f: i for i, f in enumerate(vocab)}
    norm = _normaliser(dense, args.pca)
    lx, vlx = sparse_x(feats, index), sparse_x(vfeats, index)
    shape_cols = np.array([not f.startswith(WORD_FEATURES) for f in vocab])
    out: dict[str, np.ndarray] = {}
    report = {}
    for mode in args.modes.split(","):
        t0 = time.time()
        x, n_lex = _design(mode, lx, dense, shape_cols, norm)
        vx, _ = _design(mode, vlx, vdense, shape_cols, norm)
        model = LogisticRegression(C=args.c, max_iter=args.max_iter)
        model.fit(x, y)
        assert list(model.classes_) == list(range(len(TAGS)))
        pred = model.predict(vx)
        report[mode] = accuracy(pred, vy)
        w = model.coef_.T.astype(np.float32)  # (features, tags)
        lex_w, dense_w, b = _fold(w, model.intercept_, mode, n_lex, shape_cols, norm)
        out[f"{mode}_lex_w"], out[f"{mode}_dense_w"] = lex_w, dense_w
        out[f"{mode}_b"] = b.astype(np.float32)
        # the folded form must reproduce the model
        agree = float(((vlx @ lex_w + vdense @ dense_w + b).argmax(axis=1) == pred).mean())
        print(
            f"{mode}: {report[mode]} (folded agrees {agree:.4f}; {time.time() - t0:.0f} s)",
            file=sys.stderr,
        )
    meta = {
        "seed": args.seed,
        "per_slot": args.per_slot,
        "pca": args.pca,
        "c": args.c,
        "train_tokens": len(y),
        "valid_tokens": len(vy),
        "validation": report,
        "features": vocab,
    }
    np.savez_compressed(args.out, meta=np.array(json.dumps(meta)), **out)
    print(json.dumps({k: v for k, v in meta.items() if k != "features"}, indent=1))
    print(f"wrote {args.out} in {time.time() - started:.0f} s")
    return 0


def fit_mlp(args) -> int:
    """A one-hidden-layer network over the token state alone (standardised), written beside
    the lexical tagger of ``--base`` (a ``fit`` file): read as the sum of the two log-probs."""
    from sklearn.neural_network import MLPClassifier

    started = time.time()
    (_, dense, y), (vfeats, vdense, vy) = _data(args)
    mean, sd = dense.mean(axis=0), dense.std(axis=0) + 1e-6
    model = MLPClassifier(
        hidden_layer_sizes=(args.hidden,),
        alpha=1e-3,
        batch_size=512,
        max_iter=args.epochs,
        early_stopping=True,
        random_state=args.seed,
    )
    model.fit((dense - mean) / sd, y)
    base = dict(np.load(args.base, allow_pickle=False))
    meta = json.loads(str(base["meta"]))
    index = {f: i for i, f in enumerate(meta["features"])}
    mlp_logits = model.predict_log_proba((vdense - mean) / sd)
    lex = sparse_x(vfeats, index) @ base["lexical_lex_w"] + base["lexical_b"]
    lex = (
        lex
        - np.log(np.exp(lex - lex.max(1, keepdims=True)).sum(1, keepdims=True))
        - lex.max(1, keepdims=True)
    )
    report = {"mlp": accuracy(mlp_logits.argmax(1), vy)}
    for weight in (0.5, 1.0, 2.0):
        report[f"lexical+mlp x{weight}"] = accuracy((lex + weight * mlp_logits).argmax(1), vy)
    out = {
        **base,
        "mlp_mean": mean.astype(np.float32),
        "mlp_sd": sd.astype(np.float32),
        "mlp_w1": model.coefs_[0].astype(np.float32),
        "mlp_b1": model.intercepts_[0].astype(np.float32),
        "mlp_w2": model.coefs_[1].astype(np.float32),
        "mlp_b2": model.intercepts_[1].astype(np.float32),
    }
    meta["mlp"] = {"hidden": args.hidden, "epochs": model.n_iter_, "validation": report}
    out["meta"] = np.array(json.dumps(meta))
    np.savez_compressed(args.out, **out)
    print(json.dumps(report, indent=1))
    print(f"wrote {args.out} in {time.time() - started:.0f} s")
    return 0


# -- the reader with the new tagger -----------------------------------------------------------
def log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


class StatesReader(reading.Reader):
    """The shipped reader (slot and ending classifiers) with a tagger over token states."""

    def __init__(self, base: reading.Reader, path: str, mode: str, states: TokenStates) -> None:
        data = dict(np.load(path, allow_pickle=False))
        meta = json.loads(str(data["meta"]))
        self.__dict__.update(base.__dict__)
        self._cache = {}
        # "mlp-xW": the lexical tagger's log-probs plus W times the network's
        # "mlp-oov-xW": the network only for a word the lexical tagger never saw
        self.oov = mode.startswith("mlp-oov")
        self.mlp = float(mode.rpartition("-x")[2]) if mode.startswith("mlp") else 0.0
        if self.mlp:
            mode = "lexical"
            self.net = {k: data[f"mlp_{k}"] for k in ("mean", "sd", "w1", "b1", "w2", "b2")}
        self.lex_w = data[f"{mode}_lex_w"]
        self.dense_w = data[f"{mode}_dense_w"]
        self.tag_b = data[f"{mode}_b"]
        self.vocab = {f: i for i, f in enumerate(meta["features"])}
        self.states = states
        self._text: str | None = None

    def read(self, text: str, vector: np.ndarray) -> reading.Reading:
        with self._lock:
            hit = self._cache.get(text)
        if hit is not None:
            return hit
        self._text = text
        try:
            return super().read(text, vector)
        finally:
            self._text = None

    def tag(self, tokens) -> list[str]:
        if not tokens:
            return []
        scores = reading.tag_scores(tokens, self.vocab, self.lex_w, self.tag_b)
        if self._text is not None:
            _, (st,) = self.states.run([self._text])
            if len(st) == len(tokens) and self.mlp:
                n = self.net
                hidden = np.maximum(((st - n["mean"]) / n["sd"]) @ n["w1"] + n["b1"], 0)
                net = self.mlp * log_softmax(hidden @ n["w2"] + n["b2"])
                if self.oov:
                    net[[f"w={t.lower()}" in self.vocab for t in tokens]] = 0.0
                scores = log_softmax(scores) + net
            elif len(st) == len(tokens):
                scores += st @ self.dense_w
        return [self.tags[j] for j in scores.argmax(axis=1)]


def install(spec: str) -> StatesReader:
    path, _, mode = spec.partition(":")
    base = reading.shipped.__wrapped__()
    candidate = StatesReader(base, path, mode or "both", TokenStates())
    reading.shipped = lambda: candidate
    return candidate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("fit", "fit-mlp", "score", "bench"))
    parser.add_argument("--base", default=None, help="fit-mlp: the fit file it extends")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--per-slot", type=int, default=900)
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--pca", type=int, default=64)
    parser.add_argument("--c", type=float, default=1.0)
    parser.add_argument("--max-iter", type=int, default=300)
    parser.add_argument("--modes", default="lexical,both,states")
    parser.add_argument("--cache", default=None, help="the token states, kept between runs")
    parser.add_argument("--out", default="tagger-states.npz")
    parser.add_argument("--tagger", default=None, help="PATH[:MODE] for score / bench")
    argv = sys.argv[1:]
    rest = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: len(argv) - len(rest) - (1 if "--" in argv else 0)])
    if args.command == "fit":
        return fit(args)
    if args.command == "fit-mlp":
        return fit_mlp(args)
    candidate = install(args.tagger)
    script = HERE / ("compare_readers.py" if args.command == "score" else "bench_understanding.py")
    if args.command == "score":
        import compare_readers

        original_load = compare_readers.load_reader
        compare_readers.load_reader = lambda p: candidate if p == "shipped" else original_load(p)
        # compare_readers restores reading.shipped to what it found: the candidate
        sys.argv = [str(script), *rest]
        code = compare_readers.main()
    else:
        sys.argv = [str(script), *rest]
        try:
            runpy.run_path(str(script), run_name="__main__")
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
    print(
        f"token states: {candidate.states.calls} runs, {candidate.states.seconds:.1f} s",
        file=sys.stderr,
    )
    return code


if __name__ == "__main__":
    raise SystemExit(main())
