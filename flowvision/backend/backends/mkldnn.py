"""``torch.backends.mkldnn``: the engine's own oneDNN-style kernels are always on."""

enabled = True


def is_available() -> bool:
    return False
