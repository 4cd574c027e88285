"""``torch.backends.cudnn``: flags accepted for compatibility; the engine does not use cuDNN."""

enabled = True
#: recorded, no effect: convolution algorithms are chosen by the engine's own selector
benchmark = False
#: the engine's kernels are deterministic whatever this says
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """False: this engine's CUDA part has its own kernels and never calls cuDNN."""
    return False


def version():
    """None, as torch reports when cuDNN is not available."""
    return None


def is_acceptable(tensor) -> bool:
    return False
