"""flowvision.hub: one cached, verified, resumable downloader and checkpoint readers that need no torch.

Public API (torch.hub-compatible where torch.hub has the same name)::

    load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=True, sha256=None)
    download_url_to_file(url, dst, hash_prefix=None, progress=True)
    get_dir() / set_dir(d)
    load_checkpoint(path)                # safetensors / torch zip / legacy torch / npz -> {name: ndarray}
    read_safetensors, read_torch_checkpoint, read_npz, save_safetensors
    hf_hub_url, find_in_hf_cache         # hf_hub:org/repo ids without huggingface_hub
    load_manifest, resolve_weights, load_pretrained   # the weights/ manifest: package -> cache -> download

See docs/hub.md for environment variables, the cache layout and the security model.
"""
from ._env import get_dir, get_home, is_offline, set_dir
from .api import load_state_dict_from_url, resolve_url_to_path, to_backend
from .bf16 import Bf16Array, bf16_to_float32, float32_to_bf16
from .download import (cached_download, download_url_to_file, file_lock, hash_prefix_from_filename,
                       sha256_file, verify_file)
from .errors import (CheckpointError, DownloadError, HashMismatchError, HubError, OfflineError,
                     UnsafeCheckpointError)
from .hf import find_in_hf_cache, hf_cache_dir, hf_hub_url, parse_hf_id
from .manifest import get_weight_entry, load_manifest, load_pretrained, resolve_weights, validate_manifest
from .pickle_reader import read_torch_checkpoint
from .readers import detect_format, load_checkpoint, read_npz, read_safetensors, save_safetensors, unwrap_state_dict
from .remap import REMAPS, apply_remap

__all__ = [
    "get_dir", "set_dir", "get_home", "is_offline",
    "load_state_dict_from_url", "download_url_to_file", "cached_download", "resolve_url_to_path", "to_backend",
    "file_lock", "hash_prefix_from_filename", "sha256_file", "verify_file",
    "load_checkpoint", "read_safetensors", "read_torch_checkpoint", "read_npz", "save_safetensors",
    "detect_format", "unwrap_state_dict",
    "Bf16Array", "bf16_to_float32", "float32_to_bf16",
    "hf_hub_url", "find_in_hf_cache", "hf_cache_dir", "parse_hf_id",
    "load_manifest", "validate_manifest", "get_weight_entry", "resolve_weights", "load_pretrained",
    "REMAPS", "apply_remap",
    "HubError", "DownloadError", "HashMismatchError", "OfflineError", "CheckpointError", "UnsafeCheckpointError",
]
