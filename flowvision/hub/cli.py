"""``flowvision download MODEL...`` and ``flowvision cache list|clear`` (also ``python -m flowvision.hub``).

The top-level ``flowvision`` console script hands these sub-commands to :func:`main`.
"""
import argparse
import os
import shutil
import sys

from ._env import get_dir
from .errors import DownloadError, HubError

__all__ = ["main", "add_subcommands", "find_tag", "cache_entries"]


def find_tag(name, manifest=None):
    """A manifest tag for ``name``: the tag itself, or the first ``name.<tag>`` entry."""
    from .manifest import load_manifest

    weights = (manifest or load_manifest())["weights"]
    if name in weights:
        return name
    for tag in weights:
        if tag.startswith(name + ".") or tag.startswith(f"torchvision/{name}."):
            return tag
    raise KeyError(f"no pretrained weights for {name!r} (try one of: {', '.join(list(weights)[:8])}, ...)")


def cache_entries(root=None):
    """``[(path, size)]`` of the complete files in the checkpoint cache (no .partial/.lock files)."""
    root = root or os.path.join(get_dir(), "checkpoints")
    out = []
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            if f.endswith((".partial", ".lock", ".tmp", ".validator")):
                continue
            p = os.path.join(dirpath, f)
            out.append((p, os.path.getsize(p)))
    return sorted(out)


def _human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024


def _cmd_download(args):
    from .manifest import resolve_weights

    status = 0
    for name in args.models:
        try:
            tag = find_tag(name)
            path, source = resolve_weights(tag, progress=not args.quiet)
            print(f"{tag}: {path} ({source['kind']})")
        except DownloadError as e:
            for err in getattr(e, "errors", None) or [e]:
                _print_download_error(name, err)
            status = 1
        except (HubError, KeyError) as e:
            print(f"{name}: error: {str(e).strip(chr(34) + chr(39))}", file=sys.stderr)
            status = 1
    return status


def _print_download_error(name, err):
    """One line for the failure, one for where to put the file by hand (never urllib3's nested text twice)."""
    first = str(err).splitlines()[0]
    print(f"{name}: error: {first}", file=sys.stderr)
    if err.url and err.path:
        print(f"  to use it without network: fetch {err.url} and put the file at {err.path}", file=sys.stderr)


def _cmd_cache(args):
    root = os.path.join(get_dir(), "checkpoints")
    if args.action == "list":
        entries = cache_entries(root)
        for p, size in entries:
            print(f"{_human(size):>10}  {os.path.relpath(p, root)}")
        print(f"{len(entries)} file(s), {_human(sum(s for _, s in entries))} in {root}")
        return 0
    if os.path.isdir(root):
        shutil.rmtree(root)
    print(f"removed {root}")
    return 0


def add_subcommands(subparsers):
    d = subparsers.add_parser("download", help="prefetch pretrained weights into the cache")
    d.add_argument("models", nargs="+", help="model names or manifest tags (e.g. tf_efficientnet_lite0)")
    d.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    d.set_defaults(func=_cmd_download)
    c = subparsers.add_parser("cache", help="list or clear the weights cache")
    c.add_argument("action", choices=("list", "clear"))
    c.set_defaults(func=_cmd_cache)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="flowvision", description="flowvision weights cache")
    add_subcommands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
