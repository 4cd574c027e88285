"""``torch.backends``: switches scripts set at start-up.

The engine has one kernel set per ISA and picks the algorithm itself, so ``cudnn.benchmark``,
``cudnn.allow_tf32`` and ``cuda.matmul.allow_tf32`` are accepted and recorded but change nothing (documented
no-ops). ``cudnn.deterministic = True`` is honoured trivially: the CPU kernels are deterministic.
``mps`` is never available.
"""
from . import cudnn, cpu, cuda, mps, mkldnn, openmp  # noqa: F401

__all__ = ["cudnn", "cpu", "cuda", "mps", "mkldnn", "openmp"]
