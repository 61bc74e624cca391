"""`blis.py`'s `gemm`, for an install that carries only `blis.cy` (the Linux bundle).

thinc, spaCy's network library, imports both of blis' extension modules: `blis.cy` at the C
level (the parser's own layers) and `blis.py` for one Python function, `gemm` (its dense
layers: tok2vec's maxout). Each module links its own static copy of BLIS with every CPU's
kernels, 17 MiB apiece. This module is that one function over the copy `blis.cy` already
holds: the same `bli_sgemm` with the same strides and flags as blis' own
`py.pyx`, so the same kernels compute the same bits (tests/engine/test_blis_gemm.py compares
them with `blis.py`'s, and the parses with either).

parse.py installs it as `blis.py` only where `import blis.py` fails; elsewhere blis' own
module runs. It needs BLIS' symbols exported from `blis.cy`'s library (ELF and Mach-O
builds do; a Windows `.pyd` does not, so the Windows bundle keeps `blis.py`).
"""

from __future__ import annotations

import ctypes
import sys
import types
from typing import Any

import numpy as np

_NO_TRANSPOSE, _TRANSPOSE = 0x0, 0x8  # BLIS' trans_t (blis.cy.trans_t says the same)
_dim = ctypes.c_int64  # dim_t and inc_t: BLIS' 64-bit integers (blis/cy.pxd)
_ptr = ctypes.c_void_p


_sgemm: Any = None


def _routine() -> Any:
    """BLIS' `bli_sgemm` in `blis.cy`'s library (loaded already: the same handle)."""
    global _sgemm
    if _sgemm is None:
        import blis.cy

        fn = ctypes.CDLL(blis.cy.__file__).bli_sgemm
        fn.restype = None
        real = ctypes.POINTER(ctypes.c_float)
        fn.argtypes = [ctypes.c_int, ctypes.c_int, _dim, _dim, _dim, real, _ptr, _dim, _dim,
                       _ptr, _dim, _dim, real, _ptr, _dim, _dim]
        _sgemm = fn
    return _sgemm


def _matrix(a: Any, what: str) -> np.ndarray:
    if not isinstance(a, np.ndarray) or a.dtype != np.float32 or a.ndim != 2:
        raise ValueError(f"blis gemm: {what} must be a 2-d float32 array")
    if not a.flags.c_contiguous:
        raise ValueError(f"blis gemm: {what} must be C-contiguous")
    return a


def gemm(A: np.ndarray, B: np.ndarray, out: np.ndarray | None = None, trans1: bool = False,
         trans2: bool = False, alpha: float = 1.0, beta: float = 1.0) -> np.ndarray:
    """out = alpha · op(A) · op(B) + beta · out, as `blis.py.gemm` for float32, the one type
    thinc passes (its NumpyOps.gemm refuses others): C-contiguous 2-d arrays; `out` made
    when not given, empty for beta 0, else zeros."""
    A = _matrix(A, "A")
    B = _matrix(B, "B")
    m, k = (A.shape[1], A.shape[0]) if trans1 else A.shape
    k_b, n = (B.shape[1], B.shape[0]) if trans2 else B.shape
    if k != k_b:
        raise ValueError(f"Shape mismatch for blis.gemm: ({m}, {k}), ({k_b}, {n})")
    if out is None:
        out = (np.empty if beta == 0.0 else np.zeros)((m, n), dtype=np.float32)
    else:
        out = _matrix(out, "out")
        if out.shape != (m, n):
            raise ValueError(f"blis gemm: out has shape {out.shape}, not {(m, n)}")
    real = ctypes.c_float
    if m and n:
        _routine()(_TRANSPOSE if trans1 else _NO_TRANSPOSE, _TRANSPOSE if trans2 else _NO_TRANSPOSE,
           m, n, k, ctypes.byref(real(alpha)), A.ctypes.data, A.shape[1], 1,
           B.ctypes.data, B.shape[1], 1, ctypes.byref(real(beta)), out.ctypes.data,
           out.shape[1], 1)
    return out


def install() -> bool:
    """Make `import blis.py` give this module's `gemm` where blis' own module is missing.
    True when installed (or already there); False where blis' own is importable or BLIS'
    symbols cannot be reached (then thinc runs without `blis.py`, as blis' own would fail)."""
    if "blis.py" in sys.modules:
        return sys.modules["blis.py"].__dict__.get("_memstrata") is True
    try:
        import blis.py
        return False
    except ImportError:
        pass
    try:
        _routine()
    except (ImportError, OSError, AttributeError):
        return False
    import blis

    mod = types.ModuleType("blis.py", __doc__)
    mod.gemm = gemm  # type: ignore[attr-defined]
    mod._memstrata = True  # type: ignore[attr-defined]
    sys.modules["blis.py"] = mod
    blis.py = mod
    return True
