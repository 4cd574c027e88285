"""Small synthetic stand-ins for the torchvision datasets the drop-in scripts use (MNIST, FakeData, ImageFolder).

Same constructor signatures and item types as torchvision (PIL images through ``transform``), generated
locally: ``download=True`` never touches the network.  ``DROPIN_MNIST_N`` sets the MNIST split size.
"""
import os

import numpy as np
from PIL import Image

import flowvision.backend as flow


class VisionDataset(flow.utils.data.Dataset):
    def __init__(self, root=None, transform=None, target_transform=None):
        self.root = root
        self.transform = transform
        self.target_transform = target_transform

    def _finish(self, img, target):
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


class MNIST(VisionDataset):
    """Synthetic 28x28 digits: class k is a bright bar at row band k plus noise, so a model can learn it."""

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform, target_transform)
        n = int(os.environ.get("DROPIN_MNIST_N", "256")) // (1 if train else 2)
        rng = np.random.default_rng(0 if train else 1)
        targets = rng.integers(0, 10, n)
        data = rng.integers(0, 60, (n, 28, 28)).astype(np.uint8)
        for k in range(10):
            data[targets == k, 2 + 2 * k:4 + 2 * k, 4:24] = 255
        self.train = train
        self.data = flow.from_numpy(data)
        self.targets = flow.from_numpy(targets.astype(np.int64))
        self.classes = [f"{i} - {w}" for i, w in enumerate(
            ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"])]

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        img = Image.fromarray(self.data[index].numpy(), mode="L")
        return self._finish(img, int(self.targets[index]))


class FakeData(VisionDataset):
    """Random PIL images and labels, reproducible per index (torchvision's FakeData contract)."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        super().__init__(None, transform, target_transform)
        self.size, self.image_size, self.num_classes, self.random_offset = size, image_size, num_classes, random_offset

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if index >= len(self):
            raise IndexError(f"{type(self).__name__} index out of range")
        rng = np.random.default_rng(index + self.random_offset)
        c, h, w = self.image_size
        arr = rng.integers(0, 256, (h, w, c), dtype=np.uint8)
        img = Image.fromarray(arr[..., 0] if c == 1 else arr, mode="L" if c == 1 else "RGB")
        return self._finish(img, int(rng.integers(0, self.num_classes)))


class ImageFolder(VisionDataset):
    """root/class_x/*.png|jpg -> (PIL RGB image, class index), classes sorted by name."""

    _EXT = (".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".tif", ".tiff", ".webp")

    def __init__(self, root, transform=None, target_transform=None, loader=None, is_valid_file=None):
        super().__init__(root, transform, target_transform)
        self.classes = sorted(d.name for d in os.scandir(root) if d.is_dir())
        if not self.classes:
            raise FileNotFoundError(f"Couldn't find any class folder in {root}.")
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}
        self.samples = [(os.path.join(dp, f), self.class_to_idx[c]) for c in self.classes
                        for dp, _, fs in sorted(os.walk(os.path.join(root, c))) for f in sorted(fs)
                        if f.lower().endswith(self._EXT)]
        self.imgs = self.samples
        self.targets = [t for _, t in self.samples]
        self.loader = loader or (lambda p: Image.open(p).convert("RGB"))

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        path, target = self.samples[index]
        return self._finish(self.loader(path), target)
