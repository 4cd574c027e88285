"""mkdocs hook: generates the model zoo page, the API reference pages and the changelog page at build time."""
import os
import sys

from mkdocs.structure.files import File

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import public_api  # noqa: E402
import zoo_table  # noqa: E402


def reference_page(slug: str) -> str:
    """Markdown for one API reference page: a mkdocstrings block per public callable."""
    for s, module, title, defined_in in public_api.MODULES:
        if s == slug:
            break
    else:
        raise KeyError(slug)
    names = public_api.public_callables(module, defined_in)
    lines = [f"# {title}", ""]
    if slug == "models":
        lines += ["The registered model builders themselves are listed in the [model zoo](../zoo.md).", ""]
    for name, obj in names.items():
        # the defining module's path: static analysis cannot follow lazy re-exports (module __getattr__)
        path = f"{getattr(obj, '__module__', module)}.{getattr(obj, '__qualname__', name)}"
        first = _PRIMARY.setdefault(path, slug)
        if first != slug:
            # an object several modules export (InterpolationMode, ...) is documented once: a second full entry
            # would give its anchor two pages; here it gets its own anchor and a link to that entry
            lines += [f'<h2 id="{module}.{name}"><code>{name}</code></h2>', "",
                      f"The same object as [`{name}`][{path}] (documented in "
                      f"[{first}]({first}.md)).", ""]
            continue
        if _statically_found(path):
            lines += [f"::: {path}", "    options:", f"      heading: {name}", ""]
        else:  # built at import time (a factory's closure, functools.partial): render from the live object
            lines += _live_entry(module, name, obj)
    return "\n".join(lines)


_GRIFFE = {}
_PRIMARY: dict = {}  # an object's path -> the reference page that documents it in full


def _statically_found(path: str) -> bool:
    """Whether mkdocstrings' static analysis (griffe) can collect ``path``."""
    import griffe
    if "<locals>" in path:
        return False
    if "pkg" not in _GRIFFE:
        _GRIFFE["pkg"] = griffe.load("flowvision", search_paths=[ROOT], resolve_aliases=False,
                                     allow_inspection=False)
    try:
        _GRIFFE["pkg"][path.split(".", 1)[1]]
        return True
    except (KeyError, IndexError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return False


def _live_entry(module: str, name: str, obj) -> list:
    """Markdown for a callable that only exists at run time: anchor, signature and docstring from ``inspect``."""
    import inspect
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        sig = "(...)"
    doc = inspect.getdoc(obj) or ""
    return [f'<a id="{module}.{name}"></a>', "", f"## `{name}`", "", "```python", f"{name}{sig}", "```", "",
            doc, ""]


def reference_index() -> str:
    lines = ["# API reference", "", "Generated from the docstrings and type hints of the public API.", "",
             "| module | public callables |", "|---|---|"]
    for slug, module, title, defined_in in public_api.MODULES:
        lines.append(f"| [{title}]({slug}.md) | {len(public_api.public_callables(module, defined_in))} |")
    return "\n".join(lines) + "\n"


def on_files(files, config):
    pages = {"zoo.md": zoo_table.zoo_markdown(), "reference/index.md": reference_index()}
    for slug, *_ in public_api.MODULES:
        pages[f"reference/{slug}.md"] = reference_page(slug)
    with open(os.path.join(ROOT, "CHANGELOG.md")) as f:
        pages["changelog.md"] = f.read()
    for path, content in pages.items():
        files.append(File.generated(config, path, content=content))
    return files
