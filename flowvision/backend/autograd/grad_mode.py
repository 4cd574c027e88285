"""Grad-mode switches: no_grad, enable_grad, set_grad_enabled, inference_mode (thread-local, like torch)."""
import functools
import threading

_state = threading.local()


def is_grad_enabled():
    return getattr(_state, "enabled", True)


def _set_enabled(mode):
    _state.enabled = bool(mode)


class _GradModeContext:
    """Base for context managers that double as decorators."""

    _mode = True

    def __enter__(self):
        self._prev = is_grad_enabled()
        _set_enabled(self._mode)
        return self

    def __exit__(self, *exc):
        _set_enabled(self._prev)
        return False

    def __call__(self, func):
        mode = self._mode

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            prev = is_grad_enabled()
            _set_enabled(mode)
            try:
                return func(*args, **kwargs)
            finally:
                _set_enabled(prev)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_GradModeContext):
    _mode = False


class enable_grad(_GradModeContext):
    _mode = True


class set_grad_enabled(_GradModeContext):
    def __init__(self, mode):
        self._mode = bool(mode)
        self._prev = is_grad_enabled()
        _set_enabled(mode)  # like torch, it also works as a plain function call

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set_enabled(self._prev)
        return False


class inference_mode(_GradModeContext):
    """Like torch.inference_mode: no graph is recorded inside (we have no separate inference tensors)."""

    def __init__(self, mode=True):
        self._mode = not mode


def is_inference_mode_enabled():
    return not is_grad_enabled()
