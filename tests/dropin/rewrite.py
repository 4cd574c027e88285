"""Rewrite only the import lines of a torch/torchvision script so it runs on flowvision, and run it.

The rewrite is what a user does by hand: ``import torch`` becomes ``import flowvision.backend as torch``,
``import torchvision`` becomes ``import flowvision as torchvision`` and every ``from torch.x import y`` /
``import torchvision.x as y`` line is pointed at the matching flowvision module.  Nothing else in the script
changes.

    python -m tests.dropin.rewrite SRC_DIR SCRIPT.py [--engine flowvision|torch] -- ARGS...

copies SRC_DIR to a temporary directory, rewrites every ``.py`` file in it (for ``--engine torch`` the files
are left as they are, which checks that a script is valid torch code), runs SCRIPT.py there with ARGS and
exits with its status.  The run is offline (``FLOWVISION_OFFLINE=1``): datasets come from files the caller puts
in place (see ``tests/dropin/fixtures.py``).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_MAP = (("torchvision", "flowvision"), ("torch", "flowvision.backend"))
_IMPORT = re.compile(r"^(?P<indent>\s*)import\s+(?P<names>[\w., ]+?)\s*(?P<comment>#.*)?$")
_FROM = re.compile(r"^(?P<indent>\s*)from\s+(?P<mod>[\w.]+)\s+import\s+(?P<rest>.+)$")


def _target(module: str) -> str | None:
    """The flowvision module that stands for ``module``, or None when it is not a torch/torchvision one."""
    for src, dst in _MAP:
        if module == src or module.startswith(src + "."):
            return dst + module[len(src):]
    return None


def _rewrite_import(indent: str, names: str) -> str | None:
    parts = []
    changed = False
    for item in (p.strip() for p in names.split(",")):
        m = re.match(r"^([\w.]+)(?:\s+as\s+(\w+))?$", item)
        if not m:
            return None
        mod, alias = m.group(1), m.group(2)
        tgt = _target(mod)
        if tgt is None:
            parts.append(item)
            continue
        changed = True
        if alias:
            parts.append(f"{tgt} as {alias}")
        else:
            # `import torch.nn.parallel` binds `torch` and loads the submodule: do both
            root = mod.split(".")[0]
            if "." in mod:
                parts.append(tgt)
            parts.append(f"{_target(root)} as {root}")
    return f"{indent}import {', '.join(parts)}" if changed else None


def rewrite_source(text: str) -> str:
    """Return ``text`` with its torch/torchvision import lines pointed at flowvision; other lines unchanged."""
    out = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        eol = line[len(body):]
        m = _IMPORT.match(body)
        if m:
            new = _rewrite_import(m.group("indent"), m.group("names"))
            if new is not None:
                out.append(new + (" " + m.group("comment") if m.group("comment") else "") + eol)
                continue
        m = _FROM.match(body)
        if m and m.group("mod") != "__future__":
            tgt = _target(m.group("mod"))
            if tgt is not None:
                out.append(f"{m.group('indent')}from {tgt} import {m.group('rest')}{eol}")
                continue
        out.append(line)
    return "".join(out)


def prepare(src_dir: Path, dst_dir: Path, engine: str = "flowvision") -> Path:
    """Copy ``src_dir`` to ``dst_dir`` and rewrite its ``.py`` files' imports for ``engine``."""
    shutil.copytree(src_dir, dst_dir, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    if engine == "flowvision":
        for p in dst_dir.rglob("*.py"):
            p.write_text(rewrite_source(p.read_text()))
    return dst_dir


def run(src_dir: Path, script: str, args: list[str], engine: str = "flowvision", timeout: float = 600,
        workdir: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``script`` from a rewritten copy of ``src_dir``; returns the completed process (output captured)."""
    tmp = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="dropin_"))
    code = prepare(Path(src_dir), tmp / "code", engine)
    e = dict(os.environ if env is None else env)
    e["PYTHONPATH"] = os.pathsep.join([str(code)] + ([e["PYTHONPATH"]] if e.get("PYTHONPATH") else []))
    e["FLOWVISION_OFFLINE"] = "1"
    e.setdefault("FLOWVISION_NUM_THREADS", "2")
    e.setdefault("OMP_NUM_THREADS", "2")
    e["DROPIN_ENGINE"] = engine
    return subprocess.run([sys.executable, str(code / script), *args], cwd=str(code), env=e, timeout=timeout,
                          capture_output=True, text=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src_dir")
    ap.add_argument("script")
    ap.add_argument("--engine", default="flowvision", choices=("flowvision", "torch"))
    ap.add_argument("--show", action="store_true", help="print the rewritten import lines and exit")
    ap.add_argument("--mnist", nargs="?", const="../data", metavar="REL",
                    help="write tiny MNIST idx files under this path relative to the script directory "
                         "(default ../data, the pytorch/examples path)")
    ap.add_argument("--image-folder", action="append", default=[], metavar="REL[:C1,C2]",
                    help="write a tiny ImageFolder tree (sub-folders C1, C2; default a,b) at this path relative "
                         "to the script directory")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    if a.show:
        for p in sorted(Path(a.src_dir).rglob("*.py")):
            old, new = p.read_text().splitlines(), rewrite_source(p.read_text()).splitlines()
            for o, n in zip(old, new):
                if o != n:
                    print(f"{p}: {o!r} -> {n!r}")
        return
    from .fixtures import write_image_folder, write_mnist_raw
    work = Path(tempfile.mkdtemp(prefix="dropin_"))
    (work / "code").mkdir()
    if a.mnist:
        write_mnist_raw(str(work / "code" / a.mnist))
    for spec in a.image_folder:
        rel, _, classes = spec.partition(":")
        write_image_folder(str(work / "code" / rel), tuple(classes.split(",")) if classes else ("a", "b"))
    r = run(Path(a.src_dir), a.script, args, a.engine, workdir=work)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    sys.exit(r.returncode)


if __name__ == "__main__":
    main()
