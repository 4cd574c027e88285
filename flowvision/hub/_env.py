"""Cache location and environment switches shared by the hub modules."""
import os
from typing import Optional

_UNSET = object()
_hub_dir_override = None

_TRUE = {"1", "true", "yes", "on", "y", "t"}


def _truthy(value):
    return value is not None and value.strip().lower() in _TRUE


def get_home() -> str:
    """The flowvision home: ``$FLOWVISION_HOME``, else ``$XDG_CACHE_HOME/flowvision``, else ``~/.cache/flowvision``."""
    home = os.environ.get("FLOWVISION_HOME")
    if home:
        return os.path.abspath(os.path.expanduser(home))
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = os.path.expanduser(xdg) if xdg else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.abspath(os.path.join(base, "flowvision"))


def get_dir() -> str:
    """The hub directory (torch.hub.get_dir's counterpart): ``set_dir``'s value, else ``<home>/hub``."""
    if _hub_dir_override is not None:
        return _hub_dir_override
    return os.path.join(get_home(), "hub")


def set_dir(d: Optional[str]) -> None:
    """Set the hub directory for this process (``None`` goes back to the environment's)."""
    global _hub_dir_override
    _hub_dir_override = None if d is None else os.path.abspath(os.path.expanduser(str(d)))


def checkpoints_dir(model_dir=None):
    if model_dir is not None:
        return os.path.abspath(os.path.expanduser(str(model_dir)))
    return os.path.join(get_dir(), "checkpoints")


def offline_reason():
    """The environment variable that switched offline mode on, or None when online."""
    for name in ("FLOWVISION_OFFLINE", "HF_HUB_OFFLINE"):
        if _truthy(os.environ.get(name)):
            return f"{name}={os.environ[name]}"
    return None


def is_offline() -> bool:
    """Whether offline mode is on (``FLOWVISION_OFFLINE=1`` or ``HF_HUB_OFFLINE=1``): no download is attempted.

    Examples:
        >>> import os
        >>> from flowvision.hub import is_offline
        >>> os.environ["FLOWVISION_OFFLINE"] = "1"; is_offline()
        True
        >>> del os.environ["FLOWVISION_OFFLINE"]
    """
    return offline_reason() is not None


def _env_float(name, default):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        return default


def _env_int(name, default):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        return default


def download_settings():
    """Retry and timeout knobs (read at each call so tests and users can change them)."""
    return {
        "retries": max(0, _env_int("FLOWVISION_DOWNLOAD_RETRIES", 5)),
        "backoff": max(0.0, _env_float("FLOWVISION_DOWNLOAD_BACKOFF", 1.0)),
        "max_backoff": max(0.0, _env_float("FLOWVISION_DOWNLOAD_MAX_BACKOFF", 60.0)),
        "connect_timeout": _env_float("FLOWVISION_DOWNLOAD_CONNECT_TIMEOUT", 10.0),
        "read_timeout": _env_float("FLOWVISION_DOWNLOAD_READ_TIMEOUT", 60.0),
    }
