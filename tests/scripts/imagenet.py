"""pytorch/examples imagenet/main.py surface: models.__dict__ name listing and lookup, cudnn/distributed/
multiprocessing/nn.parallel imports, ImageFolder with RandomResizedCrop/RandomHorizontalFlip and
Resize/CenterCrop, FakeData + Subset, SGD(momentum, weight_decay) + StepLR, CrossEntropyLoss, top-k accuracy,
an AverageMeter tensor, checkpoint dict save + shutil copy + resume with map_location, evaluate."""
import argparse
import os
import shutil
import warnings

import numpy as np
from PIL import Image

import torch
import torch.backends.cudnn as cudnn
import torch.distributed as dist  # noqa: F401
import torch.multiprocessing as mp  # noqa: F401
import torch.nn as nn
import torch.nn.parallel  # noqa: F401
import torch.optim
import torch.utils.data
import torchvision.datasets as datasets
import torchvision.models as models
import torchvision.transforms as transforms
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import Subset

model_names = sorted(name for name in models.__dict__
                     if name.islower() and not name.startswith("__") and callable(models.__dict__[name]))


def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        return [correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / batch_size) for k in topk]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--evaluate", action="store_true")
    args = parser.parse_args()
    assert "resnet18" in model_names
    torch.manual_seed(0)
    cudnn.deterministic = True
    cudnn.benchmark = False
    warnings.filterwarnings("ignore")
    device = torch.device("cpu")
    rng = np.random.default_rng(0)
    for split in ("train", "val"):
        for c in ("cat", "dog"):
            os.makedirs(f"data/{split}/{c}", exist_ok=True)
            for i in range(2):
                Image.fromarray(rng.integers(0, 256, (40, 48, 3), dtype=np.uint8)).save(f"data/{split}/{c}/{i}.png")
    model = models.__dict__["resnet18"](num_classes=2)
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), 0.01, momentum=0.9, weight_decay=1e-4)
    scheduler = StepLR(optimizer, step_size=30, gamma=0.1)
    start_epoch, best_acc1 = 0, 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        start_epoch, best_acc1 = checkpoint["epoch"], checkpoint["best_acc1"]
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        scheduler.load_state_dict(checkpoint["scheduler"])
        print(f"=> loaded checkpoint '{args.resume}' (epoch {checkpoint['epoch']})")
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_dataset = datasets.ImageFolder("data/train", transforms.Compose([
        transforms.RandomResizedCrop(32), transforms.RandomHorizontalFlip(), transforms.ToTensor(), normalize]))
    val_dataset = datasets.ImageFolder("data/val", transforms.Compose([
        transforms.Resize(36), transforms.CenterCrop(32), transforms.ToTensor(), normalize]))
    fake = datasets.FakeData(10, (3, 32, 32), 2, transforms.ToTensor())
    assert len(Subset(fake, range(4))) == 4 and tuple(Subset(fake, [1])[0][0].shape) == (3, 32, 32)
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=2, shuffle=True, num_workers=0,
                                               pin_memory=True, sampler=None)
    val_loader = torch.utils.data.DataLoader(val_dataset, batch_size=2, shuffle=False, num_workers=0,
                                             pin_memory=True)

    def validate():
        model.eval()
        total = torch.tensor([0.0, 0.0], dtype=torch.float32, device=device)
        with torch.no_grad():
            for images, target in val_loader:
                images = images.to(device, non_blocking=True)
                target = target.to(device, non_blocking=True)
                output = model(images)
                acc1, = accuracy(output, target, topk=(1,))
                total += torch.tensor([acc1[0].item() * images.size(0), images.size(0)], device=device)
        return (total[0] / total[1]).item()

    if args.evaluate:
        print(f"Acc@1 {validate():.3f}")
        print("RESULT ok")
        return
    for epoch in range(start_epoch, start_epoch + 1):
        model.train()
        for images, target in train_loader:
            output = model(images.to(device))
            loss = criterion(output, target.to(device))
            acc1, acc2 = accuracy(output, target, topk=(1, 2))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        acc1 = validate()
        scheduler.step()
        is_best = acc1 > best_acc1
        best_acc1 = max(acc1, best_acc1)
        state = {"epoch": epoch + 1, "arch": "resnet18", "state_dict": model.state_dict(), "best_acc1": best_acc1,
                 "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}
        torch.save(state, "checkpoint.pth.tar")
        if is_best or True:
            shutil.copyfile("checkpoint.pth.tar", "model_best.pth.tar")
    print(f"loss {loss.item():.3f} Acc@1 {acc1:.3f}")
    print("RESULT ok")


if __name__ == "__main__":
    main()
