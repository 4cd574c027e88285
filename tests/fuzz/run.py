"""Run one fuzz target under atheris (coverage-guided, libFuzzer engine).

    python tests/fuzz/run.py TARGET [libFuzzer flags...] [CORPUS_DIR...]

With no corpus directory the committed seeds in ``tests/fuzz/corpus/TARGET`` are used read-only. Examples::

    python tests/fuzz/run.py npz -max_total_time=60
    mkdir -p /tmp/c && nice -n 19 python tests/fuzz/run.py image -max_total_time=3600 /tmp/c tests/fuzz/corpus/image

A crash writes ``crash-<sha1>`` into the current directory; turn it into a regression input under
``tests/fuzz/regressions/TARGET/`` (``tests/test_fuzz_targets.py`` replays those and the seeds).
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _instrument(atheris, modules) -> None:
    """Add coverage instrumentation to the functions defined in ``modules`` (packages: every file below them).

    ``atheris.instrument_imports`` misses modules that the editable install's import hook loads, and
    ``atheris.instrument_all`` takes over a minute on the whole engine, so the functions are picked by file.
    """
    import gc
    from atheris.instrument_bytecode import _is_instrumentable

    roots = []
    for mod in modules:
        m = __import__(mod, fromlist=["_"])
        f = os.path.abspath(m.__file__)
        roots.append(os.path.dirname(f) + os.sep if os.path.basename(f) == "__init__.py" else f)
    funcs = [o for o in gc.get_objects() if _is_instrumentable(o)
             and any(o.__code__.co_filename.startswith(r) for r in roots)]
    for func in funcs:
        try:
            atheris.instrument_func(func)
        except Exception as e:  # an odd code object costs coverage of that function only
            sys.stderr.write(f"WARNING: not instrumented: {func!r}: {e}\n")
    sys.stderr.write(f"INFO: instrumented {len(funcs)} functions in {modules}\n")


def main() -> None:
    import atheris

    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    name = sys.argv.pop(1)
    import targets  # noqa: E402  (after sys.path)
    if name not in targets.TARGETS:
        sys.exit(f"unknown target {name!r}; one of {sorted(targets.TARGETS)}")
    _instrument(atheris, targets.INSTRUMENT[name])
    argv = list(sys.argv)
    if not any(not a.startswith("-") for a in argv[1:]):
        # new inputs go to a scratch directory: the committed seeds stay as they are
        argv += [tempfile.mkdtemp(prefix=f"fv-corpus-{name}-"), os.path.join(HERE, "corpus", name)]
    flags = {a.split("=")[0] for a in argv if a.startswith("-")}
    defaults = {"-rss_limit_mb": "2048", "-timeout": "30", "-max_len": "65536"}
    argv[1:1] = [f"{k}={v}" for k, v in defaults.items() if k not in flags]
    target = targets.TARGETS[name]
    allowed = targets.allowed_errors(name)

    def one(data: bytes) -> None:
        try:
            target(data)
        except allowed:
            pass

    atheris.Setup(argv, one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
