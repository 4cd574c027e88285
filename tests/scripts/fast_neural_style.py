"""pytorch/examples fast_neural_style surface: VGG16 features sliced into Sequentials via add_module, a
transformer net (ReflectionPad2d, InstanceNorm2d(affine=True), interpolate upsampling), gram matrices with bmm,
ImageFolder + Lambda(mul(255)), Adam + MSELoss, state_dict save / regex-filtered load, eval on one image."""
import os
import re
from collections import namedtuple

import numpy as np
from PIL import Image

import torch
from torch.optim import Adam
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms


class Vgg16(torch.nn.Module):
    def __init__(self, requires_grad=False):
        super(Vgg16, self).__init__()
        features = models.vgg16(weights=None).features
        self.slice1, self.slice2 = torch.nn.Sequential(), torch.nn.Sequential()
        for x in range(4):
            self.slice1.add_module(str(x), features[x])
        for x in range(4, 9):
            self.slice2.add_module(str(x), features[x])
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, X):
        h1 = self.slice1(X)
        h2 = self.slice2(h1)
        return namedtuple("VggOutputs", ["relu1_2", "relu2_2"])(h1, h2)


class ConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        self.reflection_pad = torch.nn.ReflectionPad2d(kernel_size // 2)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        return self.conv2d(self.reflection_pad(x))


class UpsampleConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super(UpsampleConvLayer, self).__init__()
        self.upsample = upsample
        self.reflection_pad = torch.nn.ReflectionPad2d(kernel_size // 2)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        if self.upsample:
            x = torch.nn.functional.interpolate(x, mode="nearest", scale_factor=self.upsample)
        return self.conv2d(self.reflection_pad(x))


class TransformerNet(torch.nn.Module):
    def __init__(self):
        super(TransformerNet, self).__init__()
        self.conv1 = ConvLayer(3, 8, kernel_size=5, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(8, affine=True)
        self.conv2 = ConvLayer(8, 16, kernel_size=3, stride=2)
        self.in2 = torch.nn.InstanceNorm2d(16, affine=True)
        self.deconv1 = UpsampleConvLayer(16, 8, kernel_size=3, stride=1, upsample=2)
        self.in3 = torch.nn.InstanceNorm2d(8, affine=True)
        self.deconv2 = ConvLayer(8, 3, kernel_size=5, stride=1)
        self.relu = torch.nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.relu(self.in3(self.deconv1(y)))
        return self.deconv2(y)


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    return features.bmm(features.transpose(1, 2)) / (ch * h * w)


def normalize_batch(batch):
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


def main():
    torch.manual_seed(42)
    np.random.seed(42)
    rng = np.random.default_rng(0)
    os.makedirs("train/a", exist_ok=True)
    for i in range(4):
        Image.fromarray(rng.integers(0, 256, (40, 36, 3), dtype=np.uint8)).save(f"train/a/{i}.png")
    Image.fromarray(rng.integers(0, 256, (30, 30, 3), dtype=np.uint8)).save("style.png")
    transform = transforms.Compose([transforms.Resize(32), transforms.CenterCrop(32), transforms.ToTensor(),
                                    transforms.Lambda(lambda x: x.mul(255))])
    train_loader = DataLoader(datasets.ImageFolder("train", transform), batch_size=2)
    transformer = TransformerNet()
    optimizer = Adam(transformer.parameters(), 1e-3)
    mse_loss = torch.nn.MSELoss()
    vgg = Vgg16(requires_grad=False)
    style = transforms.Compose([transforms.ToTensor(), transforms.Lambda(lambda x: x.mul(255))])(
        Image.open("style.png").convert("RGB")).repeat(2, 1, 1, 1)
    gram_style = [gram_matrix(y) for y in vgg(normalize_batch(style))]
    for epoch in range(2):
        transformer.train()
        for x, _ in train_loader:
            n_batch = len(x)
            optimizer.zero_grad()
            y = normalize_batch(transformer(x))
            x = normalize_batch(x)
            features_y, features_x = vgg(y), vgg(x)
            content_loss = 1e5 * mse_loss(features_y.relu2_2, features_x.relu2_2)
            style_loss = 0.0
            for ft_y, gm_s in zip(features_y, gram_style):
                style_loss += mse_loss(gram_matrix(ft_y), gm_s[:n_batch, :, :])
            total = content_loss + 1e10 * style_loss
            total.backward()
            optimizer.step()
        print(f"epoch {epoch} content {content_loss.item():.1f} style {style_loss.item():.1f}")
    transformer.eval().cpu()
    torch.save(transformer.state_dict(), "model.pth")
    with torch.no_grad():
        style_model = TransformerNet()
        state_dict = torch.load("model.pth")
        for k in list(state_dict.keys()):
            if re.search(r"in\d+\.running_(mean|var)$", k):
                del state_dict[k]
        style_model.load_state_dict(state_dict)
        content = transforms.Compose([transforms.ToTensor(), transforms.Lambda(lambda x: x.mul(255))])(
            Image.open("style.png").convert("RGB")).unsqueeze(0)
        output = style_model(content).cpu()
    img = output[0].clone().clamp(0, 255).numpy().transpose(1, 2, 0).astype("uint8")
    Image.fromarray(img).save("stylized.png")
    assert img.shape == (30, 30, 3)
    print("RESULT ok")


if __name__ == "__main__":
    main()
