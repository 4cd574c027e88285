"""``flowvision predict`` and ``flowvision models``."""
import os
import sys

import numpy as np

DEFAULT_MODEL = "tf_efficientnet_lite0"


def classify(images, model_name=DEFAULT_MODEL, topk=5, model=None):
    """[(path, [(label, prob), ...]), ...] for image paths, with the model's own preprocessing."""
    from PIL import Image

    from flowvision import backend as flow

    from ._data import create_eval_transform, imagenet_class_names, resolve_data_config, softmax_np
    from ._factory import create_model

    if model is None:
        model = create_model(model_name, pretrained=True)
    model.eval()
    transform = create_eval_transform(**resolve_data_config(model))
    num_classes = getattr(model, "num_classes", 1000)
    names = imagenet_class_names() if num_classes == 1000 else [f"class {i}" for i in range(num_classes)]
    topk = max(1, min(int(topk), num_classes))
    results = []
    for path in images:
        with Image.open(path) as im:
            x = transform(im.convert("RGB"))
        with flow.no_grad():
            logits = model(x.unsqueeze(0)).numpy()[0]
        probs = softmax_np(logits)
        order = np.argsort(-probs, kind="stable")[:topk]
        results.append((path, [(names[i], float(probs[i]), int(i)) for i in order]))
    return results


def predict_main(args):
    missing = [p for p in args.image if not os.path.isfile(p)]
    if missing:
        print(f"flowvision predict: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    from ._registry import is_model
    if not is_model(args.model):
        from ._registry import model_entrypoint
        try:
            model_entrypoint(args.model)
        except RuntimeError as e:
            print(f"flowvision predict: {e}", file=sys.stderr)
        return 2
    try:
        results = classify(args.image, args.model, args.topk)
    except Exception as e:  # weights missing offline, unreadable image, ...
        print(f"flowvision predict: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    for path, top in results:
        print(f"{path}  ({args.model})")
        for rank, (label, prob, idx) in enumerate(top, 1):
            print(f"  {rank}. {prob * 100:6.2f}%  {label}  [{idx}]")
    return 0


def models_main(args):
    from ._registry import get_pretrained_cfg, list_models
    names = list_models(args.pattern or "", pretrained=args.pretrained)
    if not names:
        print(f"no models match {args.pattern!r}", file=sys.stderr)
        return 1
    rows = []
    for n in names:
        cfg = get_pretrained_cfg(n)
        if cfg is None:
            rows.append((n, "", "", "", ""))
            continue
        size = "x".join(str(s) for s in cfg.input_size[1:])
        src = "offline" if cfg.in_manifest else ("hub" if cfg.has_weights else "-")
        rows.append((n, size, f"{cfg.crop_pct:g}", cfg.interpolation, src if args.pretrained else
                     ("yes" if cfg.has_weights else "-")))
    head = ("model", "input", "crop", "interp", "weights")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(5)]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    print(f"{len(rows)} model{'s' if len(rows) != 1 else ''}")
    return 0
