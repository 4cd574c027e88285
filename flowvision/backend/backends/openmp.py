"""``torch.backends.openmp``: the engine runs its own thread pool."""


def is_available() -> bool:
    return False
