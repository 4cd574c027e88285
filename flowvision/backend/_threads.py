"""Thread control for the compiled kernels."""
from . import _C


def set_num_threads(n):
    n = int(n)
    if n < 1:
        raise ValueError(f"set_num_threads expects a positive integer, got {n}")
    _C.set_num_threads(n)


def get_num_threads():
    return _C.get_num_threads()


def cpu_isa() -> str:
    """The kernel ISA chosen at import: 'avx512', 'avx2' or 'portable'."""
    return _C.cpu_isa()


def cpu_isa_reason() -> str:
    """Why :func:`cpu_isa` was chosen: what cpuid reported and whether ``FLOWVISION_ISA`` lowered it."""
    return _C.cpu_isa_reason()


def supported_isas() -> list:
    """Every kernel ISA this CPU can run, lowest first (``FLOWVISION_ISA`` may pick any of them)."""
    return list(_C.supported_isas())
