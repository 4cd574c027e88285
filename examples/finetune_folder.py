"""Fine-tune a zoo model on an image folder laid out as ``root/<class>/<image>`` (torchvision's ImageFolder).

    python examples/finetune_folder.py path/to/train --model resnet18 --epochs 3 --pretrained

The classifier is replaced to fit the folder's classes; every other layer starts from the pretrained weights
(``--pretrained``) or from random initialisation.
"""
import argparse

import flowvision
from flowvision import backend as flow
from flowvision.backend.nn import functional as F
from flowvision.backend.utils.data import DataLoader


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root")
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--pretrained", action="store_true")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--img-size", type=int, default=224)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()

    flow.manual_seed(0)
    train_tf = flowvision.data.create_transform(args.img_size, is_training=True)
    dataset = flowvision.datasets.ImageFolder(args.root, transform=train_tf)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=args.workers)
    model = flowvision.models.create_model(args.model, pretrained=args.pretrained, num_classes=len(dataset.classes))
    optimizer = flow.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    model.train()
    for epoch in range(args.epochs):
        total, correct, loss_sum = 0, 0, 0.0
        for x, y in loader:
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum += float(loss.item()) * len(y)
            correct += int((logits.argmax(-1) == y).sum().item())
            total += len(y)
        print(f"epoch {epoch + 1}: loss {loss_sum / total:.4f}  train accuracy {correct / total:.3f}")


if __name__ == "__main__":
    main()
