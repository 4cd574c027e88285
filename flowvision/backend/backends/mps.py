"""``torch.backends.mps``: Apple's Metal backend does not exist in this engine."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
