"""Hugging Face hub URLs and reuse of an existing Hugging Face cache, without huggingface_hub.

timm publishes its weights as ``model.safetensors`` files in ``timm/<model>.<tag>`` repos.
An id ``hf_hub:org/repo`` (optionally ``hf_hub:org/repo@revision``) resolves to::

    {HF_ENDPOINT or https://huggingface.co}/{org/repo}/resolve/{revision}/model.safetensors

If the file is already in a Hugging Face cache (``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
``~/.cache/huggingface/hub``; layout ``models--org--repo/refs/<revision>`` holding a commit
hash and ``models--org--repo/snapshots/<commit>/<filename>``), it is read from there and
nothing is downloaded. New downloads go to flowvision's own cache (see docs/hub.md).
"""
import os
from typing import Optional, Tuple
import re
from urllib.parse import quote

__all__ = [
    "HF_PREFIX", "DEFAULT_FILENAME", "LEGACY_FILENAME", "is_hf_id", "parse_hf_id", "hf_endpoint", "hf_hub_url",
    "hf_cache_dir", "find_in_hf_cache", "hf_local_path", "hf_auth_headers",
]

HF_PREFIX = "hf_hub:"
DEFAULT_FILENAME = "model.safetensors"
LEGACY_FILENAME = "pytorch_model.bin"  # what older timm repos hold instead
DEFAULT_REVISION = "main"
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*/[A-Za-z0-9][A-Za-z0-9_.\-]*$")


def is_hf_id(url):
    return isinstance(url, str) and url.startswith(HF_PREFIX)


def parse_hf_id(hub_id: str) -> Tuple[str, str]:
    """``'hf_hub:org/repo[@revision]'`` (the prefix is optional) -> ``(repo_id, revision)``."""
    s = hub_id[len(HF_PREFIX):] if hub_id.startswith(HF_PREFIX) else hub_id
    revision = DEFAULT_REVISION
    if "@" in s:
        s, revision = s.split("@", 1)
    if not _REPO.match(s) or ".." in s:
        raise ValueError(f"invalid Hugging Face repo id {hub_id!r}: expected 'hf_hub:org/name[@revision]'")
    if not revision or ".." in revision or revision.startswith("/"):
        raise ValueError(f"invalid revision {revision!r} in {hub_id!r}")
    return s, revision


def hf_endpoint():
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def hf_hub_url(repo_id: str, filename: str = DEFAULT_FILENAME, revision: str = DEFAULT_REVISION,
               endpoint: Optional[str] = None) -> str:
    """The resolve URL of ``filename`` in ``repo_id`` at ``revision``."""
    endpoint = (endpoint or hf_endpoint()).rstrip("/")
    return f"{endpoint}/{repo_id}/resolve/{quote(revision, safe='')}/{quote(filename)}"


def hf_cache_dir() -> str:
    """The Hugging Face hub cache a huggingface_hub install would use."""
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(name):
            return os.path.expanduser(os.environ[name])
    if os.environ.get("HF_HOME"):
        return os.path.join(os.path.expanduser(os.environ["HF_HOME"]), "hub")
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = os.path.expanduser(xdg) if xdg else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "huggingface", "hub")


def _repo_folder(repo_id):
    return "models--" + repo_id.replace("/", "--")


def find_in_hf_cache(repo_id: str, filename: str = DEFAULT_FILENAME, revision: str = DEFAULT_REVISION,
                     cache_dir: Optional[str] = None) -> Optional[str]:
    """The path of ``filename`` in an existing Hugging Face cache, or None when it is not there."""
    root = os.path.join(cache_dir or hf_cache_dir(), _repo_folder(repo_id))
    if not os.path.isdir(root):
        return None
    commit = revision if _COMMIT.match(revision) else None
    if commit is None:
        ref = os.path.join(root, "refs", revision)
        try:
            with open(ref, encoding="utf-8") as f:
                commit = f.read().strip()
        except OSError:
            return None
        if not _COMMIT.match(commit):
            return None
    path = os.path.join(root, "snapshots", commit, *filename.split("/"))
    # a snapshot entry is normally a symlink into ../../blobs; a dangling one is a miss
    if os.path.isfile(path):
        return path
    return None


def hf_local_path(repo_id, filename=DEFAULT_FILENAME, revision=DEFAULT_REVISION, model_dir=None):
    """Where flowvision keeps its own downloads of Hugging Face files."""
    from ._env import checkpoints_dir

    return os.path.join(checkpoints_dir(model_dir), _repo_folder(repo_id), revision.replace("/", "--"),
                        *filename.split("/"))


def hf_auth_headers():
    """An Authorization header from ``HF_TOKEN`` (for gated repos), else nothing."""
    token = os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")
    return {"Authorization": f"Bearer {token}"} if token else {}
