"""flowvision.transforms vs torchvision.transforms: ImageNet train / eval pipelines, images per second.

    python benchmarks/bench_transforms.py [--threads 1] [--images 300] [--repeats 3]

Both libraries run in this one process with the same thread count (torch.set_num_threads,
cv2.setNumThreads and flowvision.backend.set_num_threads all set to --threads) on the same
500x375 images (smooth random content, fixed seed). Inputs:

* ``PIL``: PIL RGB images into both pipelines (ToTensor + Normalize at the end);
* ``uint8 tensor``: uint8 (3, 375, 500) tensors; torchvision ends with ConvertImageDtype + Normalize
  (its ToTensor does not take tensors), flowvision the same on backend tensors;
* ``uint8 array``: numpy (375, 500, 3) uint8 arrays into flowvision (ToTensor + Normalize), against
  torchvision's uint8 tensor pipeline (torchvision's geometric transforms do not take arrays).

Prints images/s per pipeline and input, and the flowvision / torchvision ratio.
"""
import argparse
import os
import statistics
import sys
import time


def _threads_from_argv():
    for i, a in enumerate(sys.argv):
        if a == "--threads" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return "1"


# numpy's BLAS pool is a fourth thread pool: give it the same size before numpy loads
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, _threads_from_argv())

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def make_images(n, seed=0):
    import cv2

    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        a = rng.integers(0, 256, (375, 500, 3), dtype=np.uint8)
        out.append(cv2.GaussianBlur(a, (7, 7), 2.0))
    return out


def pipelines(M, tensor_input, to_float):
    """train and eval Compose for a transforms module ``M``; ``to_float`` is the final conversion."""
    last = [to_float, M.Normalize(MEAN, STD)]
    train = M.Compose([M.RandomResizedCrop(224), M.RandomHorizontalFlip(), M.ColorJitter(0.4, 0.4, 0.4)] + last)
    evalp = M.Compose([M.Resize(256), M.CenterCrop(224)] + last)
    return train, evalp


def run_pair(ref_fn, ref_inputs, ours_fn, ours_inputs, repeats, chunk=25):
    """Time both sides interleaved in small chunks so that load changes on a shared machine hit both."""
    for x, y in zip(ref_inputs[:10], ours_inputs[:10]):
        ref_fn(x)
        ours_fn(y)
    ref_rates, ours_rates = [], []
    n = len(ref_inputs)
    for _ in range(repeats):
        t_ref = t_ours = 0.0
        for s in range(0, n, chunk):
            t0 = time.perf_counter()
            for x in ref_inputs[s:s + chunk]:
                ref_fn(x)
            t1 = time.perf_counter()
            for y in ours_inputs[s:s + chunk]:
                ours_fn(y)
            t2 = time.perf_counter()
            t_ref += t1 - t0
            t_ours += t2 - t1
        ref_rates.append(n / t_ref)
        ours_rates.append(n / t_ours)
    return statistics.median(ref_rates), statistics.median(ours_rates)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--images", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    import cv2
    import torch
    import torchvision
    import torchvision.transforms as TV
    from PIL import Image

    import flowvision.backend as fb
    import flowvision.transforms as FT

    torch.set_num_threads(args.threads)
    cv2.setNumThreads(args.threads)
    if hasattr(fb, "set_num_threads"):
        fb.set_num_threads(args.threads)
    torch.manual_seed(0)
    FT.manual_seed(0)

    arrays = make_images(args.images)
    pils = [Image.fromarray(a) for a in arrays]
    tv_tensors = [torch.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1))) for a in arrays]
    fb_tensors = [fb.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1))) for a in arrays]

    tv_pil = pipelines(TV, False, TV.ToTensor())
    tv_t = pipelines(TV, True, TV.ConvertImageDtype(torch.float32))
    fv_pil = pipelines(FT, False, FT.ToTensor())
    fv_arr = pipelines(FT, False, FT.ToTensor())
    fv_t = pipelines(FT, True, FT.ConvertImageDtype(fb.float32))

    print(f"flowvision vs torchvision {torchvision.__version__}, torch {torch.__version__}, threads={args.threads}, "
          f"{args.images} images of 500x375, median of {args.repeats} runs (images/s)")
    print(f"{'pipeline':<8} {'input':<14} {'torchvision':>12} {'flowvision':>12} {'ratio':>7}")
    rows = []
    for pi, name in enumerate(("train", "eval")):
        ref_pil, ours_pil = run_pair(tv_pil[pi], pils, fv_pil[pi], pils, args.repeats)
        ref_t, ours_t = run_pair(tv_t[pi], tv_tensors, fv_t[pi], fb_tensors, args.repeats)
        ref_t2, ours_a = run_pair(tv_t[pi], tv_tensors, fv_arr[pi], arrays, args.repeats)
        for inp, r, o in (("PIL", ref_pil, ours_pil), ("uint8 tensor", ref_t, ours_t),
                          ("uint8 array", ref_t2, ours_a)):
            rows.append((name, inp, r, o))
            print(f"{name:<8} {inp:<14} {r:>12.1f} {o:>12.1f} {o / r:>6.2f}x", flush=True)
    return rows


if __name__ == "__main__":
    main()
