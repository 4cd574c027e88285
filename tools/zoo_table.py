"""The model zoo table of the documentation, generated from the registry (``docs/hooks/generate.py`` calls it).

Columns: model, parameters and GFLOPs (``flowvision/models/_zoo_stats.json``, see ``tools/zoo_stats.py``), input
size / crop / interpolation and the weights source of the default pretrained tag, the published ImageNet-1K top-1
where torchvision's weights metadata carries it (tags ``tv_in1k``/``tv2_in1k``, source named), and the captured-path
latency measured by a recorded benchmark run (``benchmarks/results/zoo_latency.json``) when one is present.
"""
import json
import os
from typing import Dict, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LATENCY_FILE = os.path.join(ROOT, "benchmarks", "results", "zoo_latency.json")
_TV_TAGS = {"IMAGENET1K_V1": "tv_in1k", "IMAGENET1K_V2": "tv2_in1k"}


def _source(cfg) -> str:
    if cfg is None or not cfg.has_weights:
        return "-"
    if cfg.in_manifest:
        from flowvision.hub import load_manifest
        kinds = [s["kind"] for s in load_manifest()["weights"][f"{cfg.architecture}.{cfg.tag}"]["sources"]]
        if "package" in kinds:
            return "bundled (package)"
    if cfg.hf_hub_id:
        return f"HF `{cfg.hf_hub_id}`"
    if cfg.url:
        url = cfg.url if isinstance(cfg.url, str) else cfg.url[0]
        return f"`{url.split('/')[2]}`" if "://" in url else "file"
    return "manifest"


def published_top1(arch: str) -> Optional[str]:
    """``"76.13 (tv_in1k, torchvision)"``-style text for the torchvision weights of ``arch``, or None."""
    from flowvision.models import get_arch_pretrained_cfgs, get_model_weights
    tags = {k.split(".", 1)[1] for k in get_arch_pretrained_cfgs(arch) if "." in k}
    try:
        weights = list(get_model_weights(arch))
    except (KeyError, ValueError):
        return None
    found = []
    for w in weights:
        tag = _TV_TAGS.get(w.name)
        acc = w.meta.get("_metrics", {}).get("ImageNet-1K", {}).get("acc@1")
        if tag in tags and acc is not None:
            found.append(f"{acc:.2f} ({tag})")
    return ", ".join(found) + ", torchvision" if found else None


def _latency() -> Dict[str, Dict]:
    try:
        with open(LATENCY_FILE) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def zoo_rows() -> List[List[str]]:
    """One row of table cells per registered architecture, in registry order."""
    import flowvision.models as fm
    from flowvision.models._availability import zoo_stats
    lat = _latency().get("models", {})
    rows = []
    for name in fm.list_models():
        cfg = fm.get_pretrained_cfg(name)
        st = zoo_stats(name) or {}
        params = f"{st['params'] / 1e6:.2f}" if st.get("params") is not None else "?"
        gflops = f"{st['gflops']:.2f}" if st.get("gflops") is not None else "?"
        if cfg is not None:
            size = "x".join(str(s) for s in cfg.input_size[1:])
            prep = f"{size} / {cfg.crop_pct:g} / {cfg.interpolation}"
            tag = cfg.tag or ""
        else:
            prep, tag = "-", ""
        top1 = published_top1(name) or ""
        ms = lat.get(name, {}).get("captured_ms")
        rows.append([f"`{name}`", tag, params, gflops, prep, _source(cfg), top1, f"{ms:.1f}" if ms else ""])
    return rows


def zoo_markdown() -> str:
    """The whole zoo page as Markdown."""
    rows = zoo_rows()
    lat = _latency()
    head = ["model", "default tag", "params (M)", "GFLOPs", "input / crop / interpolation", "weights source",
            "published top-1 (%)", "captured ms"]
    lines = [
        "# Model zoo", "",
        f"{len(rows)} architectures are registered (`flowvision.models.list_models()`); this table is generated "
        "from the registry when the site is built. `flowvision models` prints the same data and whether each "
        "model's weights load without network on your machine now.", "",
        "- **params / GFLOPs**: counted once by `tools/zoo_stats.py` for one image at the input size shown; "
        "GFLOPs are 2 x multiply-adds of convolutions, matrix products and attention (PyTorch's "
        "`torch.utils.flop_counter` over timm's definition of the same architecture on the meta device; the "
        "families timm lacks -- CSWin, FAN, PVT v1, ... -- by `flowvision.utils.flops.count_macs` over the same ops "
        "of flowvision's model). Model papers' FLOPs columns count multiply-adds (half these numbers) and some "
        "leave out the attention products.",
        "- **published top-1**: ImageNet-1K validation accuracy as torchvision's weights metadata publishes it, for "
        "the tags that are torchvision's weights; other tags carry no accuracy in their source's metadata and none "
        "is shown (not our measurement).",
        "- **captured ms**: " + (f"batch-1 latency of `flowvision.compile`, the median of the calling thread's "
                                 f"CPU time per call, from {lat.get('source', 'a recorded run')}; "
                                 f"{sum('captured_ms' in v for v in lat.get('models', {}).values())} of {len(rows)} "
                                 "models are recorded (`tools/record_zoo_latency.py --all` resumes the run), the others "
                                 "show no number."
                                 if lat else "no recorded benchmark file (`benchmarks/results/zoo_latency.json`, "
                                 "written by `tools/record_zoo_latency.py` on an idle machine) in this build; see "
                                 "[Benchmarks](benchmarks.md) for measured models."), "",
        "| " + " | ".join(head) + " |", "|" + "---|" * len(head),
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"
