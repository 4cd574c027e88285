"""ImageFolder + the ImageNet train transforms through DataLoader(num_workers=2): flowvision vs torchvision.

    python benchmarks/bench_datasets.py [--images 512] [--batch 32] [--workers 2] [--rounds 3]

Writes a temporary ImageFolder of JPEGs (500x375, smooth random content, 4 classes), then alternates, round
after round in this one process, two pipelines over it:

* flowvision: ``flowvision.datasets.ImageFolder`` + ``flowvision.transforms`` (RandomResizedCrop(224),
  RandomHorizontalFlip, ToTensor, Normalize) + ``flowvision.backend.utils.data.DataLoader``;
* torchvision: ``torchvision.datasets.ImageFolder`` + ``torchvision.transforms`` (the same four) +
  ``torch.utils.data.DataLoader``.

Each worker process runs its kernels on one thread (torch and flowvision alike). Prints images/s per round,
the median of each, and the flowvision / torchvision ratio.

``--transport`` replaces the folder by in-memory datasets returning a fixed 3x224x224 float32 tensor per
sample (no decoding, no transforms): what is left is the loaders' own cost of collating and moving batches
from the workers to the main process.
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def make_folder(root, n, seed=0):
    """``n`` JPEGs over 4 class folders; content is upsampled noise so JPEG sizes are realistic."""
    rng = np.random.default_rng(seed)
    for i in range(n):
        small = rng.integers(0, 256, (47, 63, 3), dtype=np.uint8)
        img = Image.fromarray(small).resize((500, 375), Image.BILINEAR)
        d = os.path.join(root, f"class{i % 4}")
        os.makedirs(d, exist_ok=True)
        img.save(os.path.join(d, f"{i:05d}.jpg"), quality=90)


def _one_thread_worker(_):
    import torch
    torch.set_num_threads(1)
    try:
        import flowvision.backend as fb
        fb.set_num_threads(1)
    except Exception:
        pass


def flowvision_loader(root, batch, workers):
    import flowvision.datasets as fds
    from flowvision import transforms as T
    from flowvision.backend.utils.data import DataLoader
    tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(MEAN, STD)])
    return DataLoader(fds.ImageFolder(root, transform=tf), batch_size=batch, shuffle=True, num_workers=workers,
                      worker_init_fn=_one_thread_worker)


def torchvision_loader(root, batch, workers):
    import torch
    import torchvision.datasets as tvd
    import torchvision.transforms as TT
    tf = TT.Compose([TT.RandomResizedCrop(224), TT.RandomHorizontalFlip(), TT.ToTensor(), TT.Normalize(MEAN, STD)])
    return torch.utils.data.DataLoader(tvd.ImageFolder(root, transform=tf), batch_size=batch, shuffle=True,
                                       num_workers=workers, worker_init_fn=_one_thread_worker)


def transport_loaders(n, batch, workers):
    """Loaders over datasets of ready-made tensors: only collation and worker-to-main transport remain."""
    import torch
    import flowvision.backend as fb
    from flowvision.backend.utils.data import DataLoader, Dataset

    class FvTensors(Dataset):
        def __len__(self):
            return n

        def __getitem__(self, i):
            return fb.from_numpy(np.full((3, 224, 224), i, np.float32)), i

    class TorchTensors(torch.utils.data.Dataset):
        def __len__(self):
            return n

        def __getitem__(self, i):
            return torch.full((3, 224, 224), float(i)), i

    return {"flowvision": DataLoader(FvTensors(), batch_size=batch, num_workers=workers),
            "torchvision": torch.utils.data.DataLoader(TorchTensors(), batch_size=batch, num_workers=workers)}


def run_epoch(loader):
    t0 = time.perf_counter()
    n = 0
    for x, _ in loader:
        n += x.shape[0]
    return n / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=512)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--transport", action="store_true", help="ready-made tensors: loader transport only")
    args = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    root = tempfile.mkdtemp(prefix="fv-bench-imagefolder-")
    try:
        if args.transport:
            loaders = transport_loaders(args.images, args.batch, args.workers)
        else:
            make_folder(root, args.images)
            loaders = {"flowvision": flowvision_loader(root, args.batch, args.workers),
                       "torchvision": torchvision_loader(root, args.batch, args.workers)}
        for loader in loaders.values():  # warm-up: imports and page cache
            run_epoch(loader)
        rates = {k: [] for k in loaders}
        for r in range(args.rounds):
            for name, loader in (loaders.items() if r % 2 == 0 else reversed(list(loaders.items()))):
                rates[name].append(run_epoch(loader))
            print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.1f} img/s" for k, v in rates.items()), flush=True)
        med = {k: statistics.median(v) for k, v in rates.items()}
        what = "ready-made 3x224x224 tensors" if args.transport else "JPEGs 500x375"
        print(f"\n{args.images} {what}, batch {args.batch}, num_workers={args.workers}, "
              f"{os.cpu_count()} CPUs visible, load average {os.getloadavg()[0]:.1f}")
        for k, v in med.items():
            print(f"  {k:12s} median {v:7.1f} img/s  (rounds: {', '.join(f'{x:.1f}' for x in rates[k])})")
        print(f"  flowvision / torchvision = {med['flowvision'] / med['torchvision']:.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
