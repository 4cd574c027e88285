"""``import flowvision as torchvision`` in a typical data pipeline (transforms, io, utils)."""
import numpy as np
from PIL import Image

import flowvision as torchvision
from flowvision import backend as fb


def test_imagenet_pipeline_and_io(tmp_path):
    T = torchvision.transforms
    rng = np.random.default_rng(0)
    img = Image.fromarray(rng.integers(0, 255, (375, 500, 3), dtype=np.uint8))
    path = tmp_path / "x.jpg"
    img.save(path)
    train = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ColorJitter(0.4, 0.4, 0.4),
                       T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    evalt = T.Compose([T.Resize(256, interpolation=T.InterpolationMode.BICUBIC), T.CenterCrop(224),
                       T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    for t in (train, evalt):
        x = t(Image.open(path).convert("RGB"))
        assert fb.is_tensor(x) and tuple(x.shape) == (3, 224, 224) and x.dtype == fb.float32
    u8 = torchvision.io.read_image(str(path), torchvision.io.ImageReadMode.RGB)
    assert tuple(u8.shape) == (3, 375, 500) and u8.dtype == fb.uint8
    v2 = T.v2.Compose([T.v2.ToImage(), T.v2.RandomResizedCrop(64, antialias=True), T.v2.ToDtype(fb.float32, scale=True)])
    y = v2(Image.open(path))
    assert tuple(y.shape) == (3, 64, 64)
    grid = torchvision.utils.make_grid([y, y], nrow=2)
    torchvision.utils.save_image(grid, str(tmp_path / "grid.png"))
    assert (tmp_path / "grid.png").exists()
    F = T.functional
    assert F.get_image_size(u8) == [500, 375]
