"""blis_gemm: blis.py's gemm over blis.cy's copy of BLIS, which the Linux bundle ships in
place of blis.py (packaging/memstrata.spec). It must compute what blis.py computes, bit for
bit, so that a parse in the bundle is the parse the tests see."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

blis_py = pytest.importorskip("blis.py")

from memstrata_app.engine.understand import blis_gemm  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("trans1", [False, True])
@pytest.mark.parametrize("trans2", [False, True])
def test_gemm_is_blis_py_bit_for_bit(trans1: bool, trans2: bool) -> None:
    rng = np.random.default_rng(7)
    for _ in range(40):
        m, k, n = (int(x) for x in rng.integers(1, 200, 3))
        a = rng.standard_normal((k, m) if trans1 else (m, k)).astype(np.float32)
        b = rng.standard_normal((n, k) if trans2 else (k, n)).astype(np.float32)
        want = blis_py.gemm(a, b, trans1=trans1, trans2=trans2, beta=0.0)
        got = blis_gemm.gemm(a, b, trans1=trans1, trans2=trans2, beta=0.0)
        assert got.shape == (m, n)
        assert np.array_equal(got, want)
        # alpha, beta and a given out: out = alpha·AB + beta·out, as blis computes it
        c0 = rng.standard_normal((m, n)).astype(np.float32)
        want_c, got_c = c0.copy(), c0.copy()
        blis_py.gemm(a, b, out=want_c, trans1=trans1, trans2=trans2, alpha=0.5, beta=2.0)
        blis_gemm.gemm(a, b, out=got_c, trans1=trans1, trans2=trans2, alpha=0.5, beta=2.0)
        assert np.array_equal(got_c, want_c)
        assert not np.array_equal(got_c, c0)


def test_gemm_refuses_what_it_cannot_compute() -> None:
    a = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match="Shape mismatch"):
        blis_gemm.gemm(a, np.ones((5, 2), np.float32))
    with pytest.raises(ValueError, match="float32"):
        blis_gemm.gemm(a.astype(np.float64), np.ones((4, 2)))
    with pytest.raises(ValueError, match="C-contiguous"):
        blis_gemm.gemm(np.ones((4, 3), np.float32).T, np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match="shape"):
        blis_gemm.gemm(a, np.ones((4, 2), np.float32), out=np.ones((3, 3), np.float32))


def test_install_leaves_blis_own_module_where_it_is_there() -> None:
    assert blis_gemm.install() is False
    assert getattr(sys.modules["blis.py"], "_memstrata", None) is None


_PARSE = textwrap.dedent("""
    import hashlib, importlib.abc, json, sys
    if sys.argv[1] == "without":
        class NoBlisPy(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "blis.py":
                    raise ImportError("not in this install")
        sys.meta_path.insert(0, NoBlisPy())
    from memstrata_app.engine.understand import parse
    texts = json.load(open(sys.argv[2]))
    h = hashlib.sha256()
    for doc in parse.parse_many(texts):
        for t in doc:
            h.update(f"{t.text}|{t.tag_}|{t.dep_}|{t.head.i}|".encode())
        h.update(doc.tensor.tobytes())
    print(json.dumps({"shim": getattr(sys.modules["blis.py"], "_memstrata", False),
                      "digest": h.hexdigest()}))
""")


def test_a_parse_without_blis_py_is_the_same_parse(tmp_path: Path) -> None:
    """The pipeline run with blis.py missing (as in the bundle) tags, parses and computes
    its token vectors to the same bits as with it, on 400 lines of the judge's corpus."""
    texts: list[str] = []
    for f in sorted((ROOT / "memstrata_app/bench/data/judge/raw").glob("w0*.jsonl"))[:4]:
        for line in f.read_text().splitlines():
            row = json.loads(line)
            texts += [row[k] for k in ("old", "new") if isinstance(row.get(k), str)]
    assert len(texts) >= 400
    src = tmp_path / "texts.json"
    src.write_text(json.dumps(texts[:400]))
    script = tmp_path / "parse.py"
    script.write_text(_PARSE)
    runs = {}
    for how in ("with", "without"):
        out = subprocess.run([sys.executable, str(script), how, str(src)], cwd=ROOT,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        runs[how] = json.loads(out.stdout.strip().splitlines()[-1])
    assert runs["with"]["shim"] is False
    assert runs["without"]["shim"] is True
    assert runs["without"]["digest"] == runs["with"]["digest"]
