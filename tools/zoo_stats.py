"""Write ``flowvision/models/_zoo_stats.json``: parameters and GFLOPs of every registered model.

    python tools/zoo_stats.py            # needs timm and torch (the test extra)

Counts come from timm's definition of the same architecture built on PyTorch's ``meta`` device (no memory, no
weights): parameters are the sum of ``numel``; FLOPs are ``torch.utils.flop_counter.FlopCounterMode``'s total for
one image at the model's default input size, i.e. 2 FLOPs per multiply-add of convolutions, matrix products and
attention (elementwise ops, norms and pooling are not counted, like timm's and torchvision's published GFLOPs).
flowvision's models are parity-tested against timm's, so the architecture is the same; the models timm lacks
(the paper families: CSWin, FAN, PVT v1, ...) are counted on flowvision's own model: parameters, and 2 x the
multiply-adds ``flowvision.utils.flops.count_macs`` finds (convolutions, linears, matrix products, attention: the
ops FlopCounterMode counts). ``flowvision models`` and the documentation's zoo
table read the file; ``tests/test_zoo_docs.py`` rebuilds a sample with flowvision and compares.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "flowvision", "models", "_zoo_stats.json")


_TIMM = []


def _timm_names():
    if not _TIMM:
        import timm
        _TIMM.append(set(timm.list_models()))
    return _TIMM[0]


def torch_counts(name, input_size):
    """(params, gflops) of timm's ``name`` on the meta device, or None when timm lacks it."""
    import timm
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    if name not in _timm_names():
        return None
    with torch.device("meta"):
        model = timm.create_model(name, pretrained=False).eval()
        x = torch.empty(1, *input_size)
    params = sum(p.numel() for p in model.parameters())
    model.requires_grad_(False)  # FlopCounterMode's module tracker wants a grad_fn for inputs that require grad
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        model(x)
    return params, counter.get_total_flops() / 1e9


def own_counts(name, input_size):
    """(params, gflops) of flowvision's ``name``: 2 FLOPs per multiply-add, like ``torch_counts``."""
    import flowvision.models as fm
    from flowvision import backend as flow
    from flowvision.utils.flops import count_macs
    model = fm.create_model(name).eval()
    params = sum(int(p.numel()) for p in model.parameters())
    return params, 2 * count_macs(model, flow.zeros(1, *input_size)) / 1e9


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=OUT)
    ap.add_argument("pattern", nargs="?", default="")
    ap.add_argument("--missing", action="store_true",
                    help="keep the entries already in --out; count only new models and those without GFLOPs")
    args = ap.parse_args(argv)
    import flowvision.models as fm
    from tqdm import tqdm

    stats = {}
    if args.missing and os.path.isfile(args.out):
        with open(args.out) as f:
            stats = {k: v for k, v in json.load(f)["models"].items() if v.get("gflops") is not None}
    todo = [n for n in fm.list_models(args.pattern) if n not in stats]
    for name in tqdm(todo, desc="models", unit="model"):
        cfg = fm.get_pretrained_cfg(name)
        size = tuple(cfg.input_size) if cfg is not None else (3, 224, 224)
        try:
            counted = torch_counts(name, size)
        except Exception as e:  # a reference model that cannot run on the meta device: count with flowvision
            tqdm.write(f"{name}: {type(e).__name__}: {e}")
            counted = None
        by = "timm-meta"
        if counted is None:
            counted, by = own_counts(name, size), "flowvision"
        stats[name] = {"params": counted[0], "gflops": round(counted[1], 3), "input_size": list(size),
                       "counted_by": by}
    with open(args.out, "w") as f:  # one model a line: small diffs when models are added
        f.write('{"schema_version": 1, "models": {\n')
        f.write(",\n".join(f"{json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in sorted(stats.items())))
        f.write("\n}}\n")
    print(f"wrote {len(stats)} models to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
