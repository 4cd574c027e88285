"""flowvision.data vs timm 1.0: RandAugment per-image throughput and Mixup/CutMix per-batch time.

Run:  python benchmarks/bench_augment.py [--threads 1] [--images 400] [--repeats 5]

* RandAugment ``rand-m9-mstd0.5-inc1`` with create_transform's hparams for 224x224
  (translate_const=100, img_mean of ImageNet, bilinear), on the same 224x224 image:
  timm on PIL, flowvision on PIL, flowvision on a uint8 HWC array.  timm 1.0 + Pillow 13 raises
  on posterize(0 bits) now and then; such calls are caught and still counted (a little in timm's
  favour).  Each library runs the same number of calls, interleaved, best of ``--repeats``.
* Mixup / CutMix on a float32 batch 128x3x224x224, batch mode (timm's default) and elem mode:
  timm on a torch tensor, flowvision on a numpy array (zero-copy views of torch tensors behave the
  same).  Equal threads: torch.set_num_threads(n) and Mixup(num_threads=n), cv2 single-threaded.
"""
import argparse
import time

import numpy as np
from PIL import Image


def natural_image(size=224, seed=0):
    r = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size] / size
    img = np.stack([np.sin(6 * xx + 2 * yy), np.cos(5 * yy - 3 * xx * yy), np.sin(9 * xx * yy)], -1)
    img = (img * 0.5 + 0.5) * 200 + r.normal(0, 12, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def best_time(fn, n, repeats):
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn(n)
        best = min(best, time.perf_counter() - t)
    return best


def bench_randaugment(n, repeats, interpolation="bilinear"):
    import random
    from timm.data.auto_augment import rand_augment_transform as timm_ra
    from flowvision.data import rand_augment_transform as fv_ra

    cfg = "rand-m9-mstd0.5-inc1"
    hp = dict(translate_const=100, img_mean=(124, 116, 104))
    if interpolation != "random":  # 'random' = AugmentOp's default: bilinear or bicubic per call
        hp["interpolation"] = {"bilinear": Image.Resampling.BILINEAR, "bicubic": Image.Resampling.BICUBIC}[interpolation]
    arr = natural_image()
    pil = Image.fromarray(arr)
    t_ra = timm_ra(cfg, dict(hp))
    f_ra = fv_ra(cfg, dict(hp), seed=0)
    random.seed(0)
    np.random.seed(0)

    def run_timm(k):
        for _ in range(k):
            try:
                t_ra(pil)
            except ValueError:  # Pillow 13: posterize(0) inside timm
                pass

    def run_fv_pil(k):
        for _ in range(k):
            f_ra(pil)

    def run_fv_arr(k):
        for _ in range(k):
            f_ra(arr)

    run_timm(20), run_fv_pil(20), run_fv_arr(20)  # warm up
    # the machine may be shared: interleave small blocks so that load hits all three alike
    block = 25
    totals = {"timm_pil": 0.0, "fv_pil": 0.0, "fv_arr": 0.0}
    fns = {"timm_pil": run_timm, "fv_pil": run_fv_pil, "fv_arr": run_fv_arr}
    rounds = max(1, n // block)
    per_round = {k: [] for k in totals}
    for _ in range(repeats):
        for _ in range(rounds):
            for k, fn in fns.items():
                t = time.perf_counter()
                fn(block)
                dt = time.perf_counter() - t
                totals[k] += dt
                per_round[k].append(dt)
    res = {k: rounds * repeats * block / v for k, v in totals.items()}
    # median of per-block speed ratios: robust to load spikes
    res["ratio_pil"] = float(np.median(np.array(per_round["timm_pil"]) / np.array(per_round["fv_pil"])))
    res["ratio_arr"] = float(np.median(np.array(per_round["timm_pil"]) / np.array(per_round["fv_arr"])))
    return res


def bench_mixup(threads, repeats, batch=128):
    import torch
    from timm.data.mixup import Mixup as TimmMixup
    from flowvision.data import Mixup

    torch.set_num_threads(threads)
    rows = []
    x_np = np.random.default_rng(0).standard_normal((batch, 3, 224, 224), dtype=np.float32)
    y_np = np.arange(batch) % 1000
    x_t = torch.from_numpy(x_np.copy())
    y_t = torch.from_numpy(y_np)
    x_f = x_np.copy()
    for label, kw in [("mixup batch", dict(mixup_alpha=0.8, cutmix_alpha=0.0)),
                      ("cutmix batch", dict(mixup_alpha=0.0, cutmix_alpha=1.0)),
                      ("mixup elem", dict(mixup_alpha=0.8, cutmix_alpha=0.0, mode="elem")),
                      ("cutmix elem", dict(mixup_alpha=0.0, cutmix_alpha=1.0, mode="elem"))]:
        tm = TimmMixup(**kw, num_classes=1000)
        fm = Mixup(**kw, num_classes=1000, seed=0, num_threads=threads)
        tm(x_t, y_t), fm(x_f, y_np)
        tt = min(best_time(lambda k: [tm(x_t, y_t) for _ in range(k)], 3, 1) / 3 for _ in range(repeats))
        ft = min(best_time(lambda k: [fm(x_f, y_np) for _ in range(k)], 3, 1) / 3 for _ in range(repeats))
        rows.append((label, tt * 1e3, ft * 1e3))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--images", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--skip-mixup", action="store_true")
    ap.add_argument("--skip-randaugment", action="store_true")
    ap.add_argument("--interpolation", default="bilinear", choices=["bilinear", "bicubic", "random"])
    args = ap.parse_args()
    import cv2
    import torch
    import timm
    import PIL
    cv2.setNumThreads(1)
    torch.set_num_threads(args.threads)
    print(f"timm {timm.__version__}, torch {torch.__version__}, Pillow {PIL.__version__}, numpy {np.__version__}, "
          f"opencv {cv2.__version__}, threads={args.threads}")
    if not args.skip_randaugment:
        _print_ra(bench_randaugment(args.images, args.repeats, args.interpolation), args)
    if not args.skip_mixup:
        print(f"\nMixup/CutMix 128x3x224x224 float32, ms per batch (best of {args.repeats}), threads={args.threads}")
        for label, tt, ft in bench_mixup(args.threads, args.repeats):
            print(f"  {label:14s} timm {tt:8.1f}   flowvision {ft:8.1f}   {tt / ft:.2f}x")


def _print_ra(ra, args):
    print("\nRandAugment rand-m9-mstd0.5-inc1, 224x224, %s, images/s (%d x %d images each, interleaved blocks)"
          % (args.interpolation, args.repeats, args.images))
    print(f"  timm (PIL)              {ra['timm_pil']:8.0f}")
    print(f"  flowvision (PIL)        {ra['fv_pil']:8.0f}   {ra['fv_pil'] / ra['timm_pil']:.2f}x timm "
          f"(median per-block ratio {ra['ratio_pil']:.2f}x)")
    print(f"  flowvision (uint8 HWC)  {ra['fv_arr']:8.0f}   {ra['fv_arr'] / ra['timm_pil']:.2f}x timm "
          f"(median per-block ratio {ra['ratio_arr']:.2f}x)")


if __name__ == "__main__":
    main()
