"""``torch.backends.cpu``."""


def get_cpu_capability() -> str:
    """The kernel ISA in use, in torch's spelling ("AVX512", "AVX2" or "DEFAULT")."""
    from .._threads import cpu_isa
    return {"avx512": "AVX512", "avx2": "AVX2"}.get(str(cpu_isa()).lower(), "DEFAULT")
