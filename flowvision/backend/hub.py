"""``torch.hub``: cached weight downloads (``flowvision.hub``'s downloader) and ``load``/``list`` of hub models.

``load("pytorch/vision", name, ...)`` and the timm repository map to flowvision's own model builders (same
names and arguments); ``source="local"`` imports ``hubconf.py`` from a directory the caller trusts, as torch
does.  Other GitHub repositories would need their Python code downloaded and run, which this engine does not
do: that raises ``NotImplementedError``.
"""
from __future__ import annotations

import importlib.util
import os
import sys

from ..hub import download_url_to_file, get_dir, load_state_dict_from_url, set_dir  # noqa: F401

__all__ = ["load", "list", "help", "load_state_dict_from_url", "download_url_to_file", "get_dir", "set_dir"]

_TV = ("pytorch/vision",)
_TIMM = ("huggingface/pytorch-image-models", "rwightman/pytorch-image-models", "rwightman/gen-efficientnet-pytorch")


def _repo(repo_or_dir: str) -> str:
    return repo_or_dir.split(":", 1)[0].rstrip("/")


def _local_hubconf(path: str):
    conf = os.path.join(path, "hubconf.py")
    if not os.path.isfile(conf):
        raise FileNotFoundError(f"no hubconf.py in {path}")
    spec = importlib.util.spec_from_file_location("hubconf", conf)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, path)
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(path)
    return mod


def _entry(repo_or_dir: str, model: str, source: str):
    if source == "local":
        fn = getattr(_local_hubconf(repo_or_dir), model, None)
        if fn is None or not callable(fn):
            raise RuntimeError(f"Cannot find callable {model} in hubconf")
        return fn
    if source != "github":
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    repo = _repo(repo_or_dir)
    from .. import models
    if repo in _TV:
        return models.get_model_builder(model)
    if repo in _TIMM:
        return lambda *a, **k: models.create_model(model, *a, **k)
    raise NotImplementedError(f"torch.hub.load would download and run the Python code of {repo!r}; flowvision "
                              "runs only its own builders ('pytorch/vision', timm) or a local hubconf.py "
                              "(source='local').")


def load(repo_or_dir: str, model: str, *args, source: str = "github", trust_repo=None, force_reload: bool = False,
         verbose: bool = True, skip_validation: bool = False, **kwargs):
    """Build hub model ``model`` from ``repo_or_dir`` with ``args``/``kwargs`` (see the module docstring)."""
    return _entry(repo_or_dir, model, source)(*args, **kwargs)


def list(github: str, force_reload: bool = False, skip_validation: bool = False, trust_repo=None,  # noqa: A001
         verbose: bool = True):
    """Names of the entry points of ``github`` (the torchvision / timm model names for those repositories)."""
    repo = _repo(github)
    from .. import models
    if repo in _TV or repo in _TIMM:
        return sorted(models.list_models())
    if os.path.isdir(github):
        mod = _local_hubconf(github)
        return sorted(n for n in dir(mod) if callable(getattr(mod, n)) and not n.startswith("_"))
    raise NotImplementedError(f"can't list {repo!r} without downloading and running its code")


def help(github: str, model: str, force_reload: bool = False, skip_validation: bool = False,  # noqa: A001
         trust_repo=None) -> str:
    source = "local" if os.path.isdir(github) else "github"
    return _entry(github, model, source).__doc__ or ""
