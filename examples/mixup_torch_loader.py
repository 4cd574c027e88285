"""timm-grade augmentation (RandAugment, RandomErasing, Mixup/CutMix) from flowvision inside PyTorch's DataLoader.

    python examples/mixup_torch_loader.py --steps 3

flowvision.data imports neither torch nor flowvision's models; its augmentations take numpy arrays and torch
tensors, so they work in any framework's input pipeline. Needs torch (not a flowvision dependency).
"""
import argparse

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

import flowvision.data as fd


class RandomImages(Dataset):
    """Synthetic uint8 HWC images with labels; stands in for your dataset."""

    def __init__(self, n: int = 64, size: int = 64, num_classes: int = 10) -> None:
        rng = np.random.default_rng(0)
        self.images = rng.integers(0, 256, (n, size, size, 3), dtype=np.uint8)
        self.labels = rng.integers(0, num_classes, n)
        self.augment = fd.rand_augment_transform("rand-m9-mstd0.5-inc1")
        self.erase = fd.RandomErasing(probability=0.25, mode="pixel")

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, i: int):
        img = np.asarray(self.augment(self.images[i]), np.float32).transpose(2, 0, 1) / 255.0
        x = torch.from_numpy(np.ascontiguousarray((img - 0.5) / 0.25))
        self.erase(x)  # in place, like timm's
        return x, int(self.labels[i])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()

    mixup = fd.Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, label_smoothing=0.1, num_classes=10)
    loader = DataLoader(RandomImages(), batch_size=8, shuffle=True, num_workers=args.workers)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, stride=2), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                                torch.nn.Flatten(), torch.nn.Linear(8, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step, (x, y) in enumerate(loader):
        if step == args.steps:
            break
        x, soft_targets = mixup(x, y)  # torch tensors in, torch tensors out
        loss = torch.sum(-soft_targets * torch.log_softmax(model(x), -1), -1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step}: batch {tuple(x.shape)}, soft targets {tuple(soft_targets.shape)}, loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
