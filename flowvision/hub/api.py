"""``load_state_dict_from_url`` and the conversion of loaded arrays to engine tensors."""
import logging
import os
from typing import Any, Dict, Mapping, Optional
from collections import OrderedDict
from urllib.parse import unquote, urlparse

import numpy as np

from ._env import checkpoints_dir
from .bf16 import Bf16Array
from .download import cached_download, hash_prefix_from_filename, verify_file
from .errors import DownloadError, HashMismatchError
from .hf import (DEFAULT_FILENAME, LEGACY_FILENAME, find_in_hf_cache, hf_auth_headers, hf_hub_url, hf_local_path, is_hf_id,
                 parse_hf_id)
from .readers import load_checkpoint

__all__ = ["load_state_dict_from_url", "resolve_url_to_path", "to_backend"]

logger = logging.getLogger("flowvision.hub")


def _local_path(url):
    """The local file a ``file://`` URL or plain path names, or None for a remote URL."""
    if url.startswith("file://"):
        return unquote(urlparse(url).path)
    if "://" not in url and not is_hf_id(url):
        return os.path.abspath(os.path.expanduser(url))
    return None


def resolve_url_to_path(url: str, model_dir: Optional[str] = None, progress: bool = True, check_hash: bool = False,
                        file_name: Optional[str] = None, sha256: Optional[str] = None) -> str:
    """The local path of the checkpoint ``url`` names, downloading it first if needed.

    ``url`` is an http(s) URL, ``hf_hub:org/repo[@revision]`` (``file_name`` then names the file
    inside the repo, default ``model.safetensors``), a ``file://`` URL or a local path.
    """
    local = _local_path(url)
    if local is not None:
        if not os.path.isfile(local):
            raise FileNotFoundError(f"checkpoint file not found: {local}")
        if sha256 or check_hash:
            prefix = hash_prefix_from_filename(local) if check_hash else None
            ok, digest = verify_file(local, sha256, prefix)
            if not ok:
                raise HashMismatchError(f"sha256 mismatch for {local}: expected {sha256 or prefix}, got {digest}",
                                        url=url, path=local, expected=sha256 or prefix, actual=digest)
        return local

    if is_hf_id(url):
        repo_id, revision = parse_hf_id(url)
        if file_name:
            return _resolve_hf(repo_id, file_name, revision, model_dir, progress, sha256)
        # like timm: model.safetensors, else the older pytorch_model.bin of the same repo
        if sha256 is None:
            legacy = find_in_hf_cache(repo_id, LEGACY_FILENAME, revision)
            legacy = legacy or hf_local_path(repo_id, LEGACY_FILENAME, revision, model_dir)
            if (find_in_hf_cache(repo_id, DEFAULT_FILENAME, revision) is None
                    and not os.path.isfile(hf_local_path(repo_id, DEFAULT_FILENAME, revision, model_dir))
                    and os.path.isfile(legacy)):
                return legacy
        try:
            return _resolve_hf(repo_id, DEFAULT_FILENAME, revision, model_dir, progress, sha256)
        except DownloadError as e:
            if e.status != 404 or sha256:
                raise
            try:
                return _resolve_hf(repo_id, LEGACY_FILENAME, revision, model_dir, progress, None)
            except DownloadError as e2:
                if e2.status != 404:
                    raise
                raise e from None

    filename = file_name or os.path.basename(urlparse(url).path)
    if not filename:
        raise ValueError(f"cannot derive a file name from {url!r}; pass file_name=")
    hash_prefix = None
    if check_hash:
        hash_prefix = hash_prefix_from_filename(filename)
        if hash_prefix is None and not sha256:
            raise ValueError(f"check_hash=True but the file name {filename!r} carries no hash prefix "
                             "('name-<sha256 prefix>.ext') and no sha256 was given")
    dst = os.path.join(checkpoints_dir(model_dir), filename)
    return cached_download(url, dst, sha256=sha256, hash_prefix=hash_prefix, progress=progress)


def _resolve_hf(repo_id, filename, revision, model_dir, progress, sha256):
    hit = find_in_hf_cache(repo_id, filename, revision)
    if hit is not None:
        ok, digest = verify_file(hit, sha256)
        if ok:
            logger.debug("using %s from the Hugging Face cache", hit)
            return hit
        logger.warning("ignoring %s in the Hugging Face cache: sha256 %s, expected %s", hit, digest, sha256)
    dst = hf_local_path(repo_id, filename, revision, model_dir)
    return cached_download(hf_hub_url(repo_id, filename, revision), dst, sha256=sha256, progress=progress,
                           headers=hf_auth_headers())


def load_state_dict_from_url(url: str, model_dir: Optional[str] = None, map_location: Any = None, progress: bool = True,
                             check_hash: bool = False, file_name: Optional[str] = None, weights_only: bool = True,
                             sha256: Optional[str] = None, *, as_numpy: bool = False, use_ema: bool = True,
                             strip_prefix: Optional[str] = "module.") -> Mapping[str, Any]:
    """Download (or find in the cache) a checkpoint and return its state dict.

    torch.hub-compatible: ``model_dir`` (default ``<hub dir>/checkpoints``), ``progress``,
    ``check_hash`` (verify the ``name-<hexprefix>.ext`` hash prefix of the file name),
    ``file_name`` (cache name; for ``hf_hub:`` ids, the file inside the repo) are honoured;
    ``map_location`` is accepted and ignored (tensors are loaded on the CPU) and
    ``weights_only`` is accepted but reading is always weights-only: pickled code never runs.

    ``sha256``: the full expected sha256 (from the weights manifest); a cached file that does
    not match is downloaded again.

    Returns an ordered ``{name: tensor}``: ``flowvision.backend`` tensors when the engine is
    importable, else numpy arrays (``as_numpy=True`` forces arrays). Training wrappers
    (``state_dict_ema``/``model_ema`` when ``use_ema``, ``state_dict``, ``model``) are unwrapped and
    a ``module.`` prefix stripped, like timm.
    """
    if weights_only is False:
        logger.warning("weights_only=False is ignored: flowvision never executes pickled code")
    path = resolve_url_to_path(url, model_dir=model_dir, progress=progress, check_hash=check_hash,
                               file_name=file_name, sha256=sha256)
    state_dict = load_checkpoint(path, use_ema=use_ema, strip_prefix=strip_prefix)
    return state_dict if as_numpy else to_backend(state_dict)


def _backend():
    try:
        import flowvision.backend as backend
    except ImportError:
        return None
    return backend if callable(getattr(backend, "from_numpy", None)) else None


def to_backend(state_dict: Mapping[str, Any]) -> Mapping[str, Any]:
    """numpy arrays -> ``flowvision.backend`` tensors (no copy), or the arrays unchanged without an engine.

    bfloat16 (:class:`Bf16Array`) becomes a backend bfloat16 tensor over the same uint16 bits.
    """
    backend = _backend()
    if backend is None:
        return state_dict
    out = OrderedDict()
    for k, v in state_dict.items():
        out[k] = _array_to_tensor(backend, v)
    return out


def _array_to_tensor(backend, a):
    if not isinstance(a, np.ndarray):
        return a
    if isinstance(a, Bf16Array):
        bits = a.bits
        bf16 = getattr(backend, "bfloat16", None)
        try:
            return backend.from_numpy(bits, dtype=bf16)  # an engine that can tag the bits directly
        except TypeError:
            t = backend.from_numpy(np.ascontiguousarray(a.to_float32()))
            return t.to(bf16) if bf16 is not None and hasattr(t, "to") else t
    if not a.flags.writeable or not a.flags.c_contiguous:
        a = np.array(a, copy=True, order="C")
    return backend.from_numpy(a)
