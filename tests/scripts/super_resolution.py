"""pytorch/examples super_resolution surface: orthogonal_/calculate_gain init, PixelShuffle, a folder dataset
with YCbCr PIL images and Compose(CenterCrop, Resize, ToTensor), MSELoss + Adam, PSNR with log10, saving the
whole model and loading it back under serialization.safe_globals, then super-resolving one image."""
import os
from math import log10

import numpy as np
from PIL import Image

import torch
import torch.nn as nn
import torch.nn.init as init
import torch.optim as optim
import torch.utils.data as data
from torch.utils.data import DataLoader
from torchvision.transforms import CenterCrop, Compose, Resize, ToTensor


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(16, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        init.orthogonal_(self.conv1.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv2.weight)

    def forward(self, x):
        return self.pixel_shuffle(self.conv2(self.relu(self.conv1(x))))


class DatasetFromFolder(data.Dataset):
    def __init__(self, image_dir, input_transform, target_transform):
        super(DatasetFromFolder, self).__init__()
        self.image_filenames = [os.path.join(image_dir, x) for x in sorted(os.listdir(image_dir))]
        self.input_transform, self.target_transform = input_transform, target_transform

    def __getitem__(self, index):
        y, _, _ = Image.open(self.image_filenames[index]).convert("YCbCr").split()
        return self.input_transform(y.copy()), self.target_transform(y.copy())

    def __len__(self):
        return len(self.image_filenames)


def main():
    torch.manual_seed(123)
    upscale, crop = 2, 32
    os.makedirs("images", exist_ok=True)
    rng = np.random.default_rng(0)
    for i in range(4):
        Image.fromarray(rng.integers(0, 256, (40, 44, 3), dtype=np.uint8)).save(f"images/{i}.png")
    ds = DatasetFromFolder("images", Compose([CenterCrop(crop), Resize(crop // upscale), ToTensor()]),
                           Compose([CenterCrop(crop), ToTensor()]))
    loader = DataLoader(dataset=ds, num_workers=0, batch_size=2, shuffle=True)
    model = Net(upscale_factor=upscale)
    criterion = nn.MSELoss()
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(2):
        for inp, target in loader:
            optimizer.zero_grad()
            loss = criterion(model(inp), target)
            loss.backward()
            optimizer.step()
        avg_psnr = 0
        with torch.no_grad():
            for inp, target in loader:
                mse = criterion(model(inp), target)
                avg_psnr += 10 * log10(1 / mse.item())
        print(f"epoch {epoch} PSNR {avg_psnr / len(loader):.2f} dB")
    torch.save(model, "model_epoch.pth")
    with open("model_epoch.pth", "rb") as f:
        with torch.serialization.safe_globals([Net, torch.nn.modules.activation.ReLU, torch.nn.modules.conv.Conv2d,
                                               torch.nn.modules.pixelshuffle.PixelShuffle]):
            loaded = torch.load(f)
    img = Image.open("images/0.png").convert("YCbCr")
    y, cb, cr = img.split()
    inp = ToTensor()(y).view(1, -1, y.size[1], y.size[0])
    out = loaded(inp).cpu()
    assert torch.equal(out, model(inp))
    out_img_y = out[0].detach().numpy() * 255.0
    out_img_y = Image.fromarray(np.uint8(out_img_y.clip(0, 255)[0]), mode="L")
    out_img = Image.merge("YCbCr", [out_img_y, cb.resize(out_img_y.size, Image.BICUBIC),
                                    cr.resize(out_img_y.size, Image.BICUBIC)]).convert("RGB")
    out_img.save("out.png")
    assert out_img.size == (88, 80)
    print("RESULT ok")


if __name__ == "__main__":
    main()
