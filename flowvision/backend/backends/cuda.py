"""``torch.backends.cuda``: matmul precision switches (recorded; the CUDA GEMM always accumulates in fp32)."""


class _Matmul:
    allow_tf32 = False
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True


matmul = _Matmul()


def is_built() -> bool:
    """True when this install carries the CUDA extension."""
    from .. import cuda
    return cuda.is_built()
