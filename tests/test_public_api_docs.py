"""Docstrings and type hints of the public API, counted per module (``tools/public_api.py`` lists the surface).

A callable counts as *documented* when it has its own docstring (a class's, not one inherited from a base), and
as *typed* when every parameter other than ``self``/``cls`` is annotated and a function also annotates its return
(for a class, its ``__init__`` parameters; a class whose ``__init__`` takes no arguments is typed). ``FLOORS`` holds
what each module has reached: 100 % is asserted where it was reached, the reached count elsewhere, so the numbers
can only go up. ``python tests/test_public_api_docs.py`` prints the table.
"""
import enum
import inspect
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import public_api  # noqa: E402

# slug: (documented, typed) reached; "all" = every public callable of the module
FLOORS = {
    "models": ("all", "all"),
    "transforms": ("all", "all"),
    "transforms-functional": ("all", "all"),
    "transforms-v2": ("all", "all"),
    "transforms-v2-functional": ("all", "all"),
    "data": ("all", "all"),
    "datasets": ("all", "all"),
    "hub": ("all", "all"),
    "io": ("all", "all"),
    "utils": ("all", "all"),
    "ops": ("all", "all"),
    "backend": ("all", "all"),
    "compile": ("all", "all"),
    "nn-functional": ("all", "all"),
    "optim": ("all", "all"),
    "lr-scheduler": ("all", "all"),
    "utils-data": ("all", "all"),
    "memory": ("all", "all"),
}


def has_own_docstring(obj) -> bool:
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    return bool(doc and doc.strip())


def is_typed(obj) -> bool:
    if inspect.isclass(obj):
        if issubclass(obj, enum.Enum):
            return True  # members, not constructor arguments
        init = obj.__dict__.get("__init__")
        if init is None:
            for base in obj.__mro__[1:]:
                if "__init__" in base.__dict__:
                    init = base.__dict__["__init__"]
                    break
        if init is None or init is object.__init__ or not inspect.isfunction(init):
            return True  # object's or a builtin base's __init__ (e.g. RuntimeError): nothing of ours to annotate
        target, need_return = init, False
    else:
        target, need_return = obj, True
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):  # a builtin without a signature
        return False
    for p in sig.parameters.values():
        if p.name in ("self", "cls"):
            continue
        if p.annotation is inspect.Parameter.empty:
            return False
    return not need_return or sig.return_annotation is not inspect.Signature.empty


def counts(slug):
    for s, module, _title, defined_in in public_api.MODULES:
        if s == slug:
            objs = public_api.public_callables(module, defined_in)
            return (len(objs), sum(map(has_own_docstring, objs.values())), sum(map(is_typed, objs.values())),
                    sorted(n for n, o in objs.items() if not has_own_docstring(o)),
                    sorted(n for n, o in objs.items() if not is_typed(o)))
    raise KeyError(slug)


@pytest.mark.parametrize("slug", list(FLOORS))
def test_docstrings_and_type_hints_do_not_regress(slug):
    total, documented, typed, undocumented, untyped = counts(slug)
    want_doc, want_typed = FLOORS[slug]
    want_doc = total if want_doc == "all" else want_doc
    want_typed = total if want_typed == "all" else want_typed
    assert documented >= want_doc, f"{slug}: {documented}/{total} documented; missing: {undocumented}"
    assert typed >= want_typed, f"{slug}: {typed}/{total} typed; missing: {untyped}"


if __name__ == "__main__":
    print(f"{'module':26} {'callables':>9} {'docstring':>10} {'typed':>10}")
    for slug in FLOORS:
        total, documented, typed, _, _ = counts(slug)
        print(f"{slug:26} {total:9d} {documented:5d} {100 * documented / total:3.0f}% "
              f"{typed:5d} {100 * typed / total:3.0f}%")


# modules whose every public callable is typed: mypy checks them (default strictness: annotated functions are
# type-checked, imports outside the list are followed silently, third-party packages without stubs are Any)
TYPED_PATHS = ["flowvision/hub", "flowvision/utils/__init__.py", "flowvision/io", "flowvision/models/_availability.py",
               "flowvision/models/_predict_inputs.py", "flowvision/models/_predict_tasks.py",
               "flowvision/transforms", "flowvision/data", "flowvision/backend/_creation.py",
               "flowvision/backend/nn/functional.py", "flowvision/backend/nn/_functional", "flowvision/backend/optim",
               "flowvision/backend/utils/data", "flowvision/ops", "flowvision/models/_api.py",
               "flowvision/models/_builder.py", "flowvision/models/_data.py", "flowvision/models/_factory.py",
               "flowvision/models/_features.py", "flowvision/models/_pretrained.py", "flowvision/models/_registry.py",
               "flowvision/models/_predict.py"]
# modules whose docstring examples run as doctests
DOCTEST_MODULES = ["flowvision.utils", "flowvision.io.image", "flowvision.data.mixup", "flowvision.hub._env", "flowvision.hub.download", "flowvision.hub.hf",
                   "flowvision.backend._capture", "flowvision.models._registry", "flowvision.models._factory",
                   "flowvision.backend._creation", "flowvision.backend.optim.sgd",
                   "flowvision.backend.utils.data.dataset", "flowvision.backend.utils.data.dataloader",
                   # doctest collects the examples of the module that defines each function, so nn.functional's
                   # examples are run from its implementation modules
                   *(f"flowvision.backend.nn._functional.{m}" for m in (
                       "activation", "attention", "conv", "ctc", "distance", "dropout", "linear", "loss", "margin_loss",
                       "normalization", "pooling", "softmax", "sparse", "vision"))]


def test_mypy_passes_on_the_typed_modules():
    import subprocess
    pytest.importorskip("mypy", reason="the docs extra (in the test extra) brings mypy")
    proc = subprocess.run([sys.executable, "-m", "mypy", "--ignore-missing-imports", "--follow-imports=silent",
                           "--no-incremental", *TYPED_PATHS], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]


def test_docstring_examples_run():
    import doctest
    import importlib
    attempted = 0
    for name in DOCTEST_MODULES:
        mod = importlib.import_module(name)
        result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
        assert result.failed == 0, f"{name}: {result.failed} failing example(s) (run python -m doctest -v)"
        attempted += result.attempted
    assert attempted >= 10
