"""Where a model's pretrained weights would come from right now, checked on disk (no network request)."""
import json
import os
from functools import lru_cache
from typing import Any, Dict, Optional

__all__ = ["weights_availability", "zoo_stats"]


def _url_cache_hit(url: str) -> bool:
    from flowvision.hub._env import checkpoints_dir
    from flowvision.hub.hf import DEFAULT_FILENAME, LEGACY_FILENAME, find_in_hf_cache, hf_local_path, is_hf_id, \
        parse_hf_id

    if is_hf_id(url):
        repo_id, revision = parse_hf_id(url)
        return any(find_in_hf_cache(repo_id, f, revision) or os.path.isfile(hf_local_path(repo_id, f, revision))
                   for f in (DEFAULT_FILENAME, LEGACY_FILENAME))
    if "://" not in url:
        return os.path.isfile(os.path.expanduser(url))
    return os.path.isfile(os.path.join(checkpoints_dir(), os.path.basename(url.split("?")[0])))


def weights_availability(cfg: Any) -> str:
    """How the weights of a pretrained cfg can be loaded at this moment.

    Args:
        cfg: a :class:`~flowvision.models.PretrainedCfg` (or None).

    Returns:
        ``"offline:package"`` (an installed package carries the file), ``"offline:cache"`` (the file is in
        flowvision's or Hugging Face's cache, or is a local file), ``"online"`` (a download is needed first) or
        ``"-"`` (no pretrained weights). Files are checked for presence, not re-hashed; loading verifies them.
    """
    if cfg is None or not cfg.has_weights:
        return "-"
    if cfg.state_dict is not None:
        return "offline:cache"
    if cfg.file:
        return "offline:cache" if os.path.isfile(os.path.expanduser(cfg.file)) else "online"
    if cfg.in_manifest:
        from flowvision.hub import HubError, resolve_weights
        try:
            _path, source = resolve_weights(f"{cfg.architecture}.{cfg.tag}", progress=False, allow_download=False)
        except (HubError, KeyError):
            return "online"
        return "offline:package" if source["kind"] == "package" else "offline:cache"
    if cfg.hf_hub_id:
        return "offline:cache" if _url_cache_hit(f"hf_hub:{cfg.hf_hub_id}") else "online"
    if cfg.url:
        url = cfg.url if isinstance(cfg.url, str) else cfg.url[0]
        return "offline:cache" if _url_cache_hit(url) else "online"
    return "online"


@lru_cache(maxsize=1)
def _stats() -> Dict[str, Dict[str, Any]]:
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_zoo_stats.json")
    try:
        with open(path) as f:
            return json.load(f)["models"]
    except (OSError, ValueError, KeyError):
        return {}


def zoo_stats(name: str) -> Optional[Dict[str, Any]]:
    """Recorded ``{"params", "gflops", "input_size", "counted_by"}`` of a registered architecture, or None.

    Args:
        name: a model name; a ``.tag`` suffix is ignored.

    Returns:
        The entry written by ``tools/zoo_stats.py`` (GFLOPs of one image at ``input_size``; None where no reference
        implementation could count them), or None for an unknown name.
    """
    return _stats().get(name.split(".", 1)[0])
