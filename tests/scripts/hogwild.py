"""pytorch/examples mnist_hogwild surface: Module.share_memory, mp.set_start_method('spawn') and mp.Process
children training one model with SGD(momentum), Dropout2d, view(-1, 320), max(1)[1]; the parent checks that
the children's updates reached its parameters."""
import os

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torchvision import datasets, transforms


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        return F.log_softmax(self.fc2(x), dim=1)


def train(rank, model, device, dataset, kwargs):
    torch.manual_seed(1 + rank)
    loader = torch.utils.data.DataLoader(dataset, **kwargs)
    optimizer = optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    model.train()
    for batch_idx, (data, target) in enumerate(loader):
        optimizer.zero_grad()
        loss = F.nll_loss(model(data.to(device)), target.to(device))
        loss.backward()
        optimizer.step()
    print(f"{os.getpid()} loss {loss.item():.4f}")


def test(model, device, dataset, kwargs):
    loader = torch.utils.data.DataLoader(dataset, **kwargs)
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in loader:
            pred = model(data.to(device)).max(1)[1]
            correct += pred.eq(target.to(device)).sum().item()
    return correct / len(loader.dataset)


if __name__ == "__main__":
    device = torch.device("cpu")
    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    dataset1 = datasets.MNIST("../data", train=True, download=True, transform=transform)
    dataset2 = datasets.MNIST("../data", train=False, transform=transform)
    kwargs = {"batch_size": 32, "shuffle": True}
    torch.manual_seed(1)
    mp.set_start_method("spawn", force=True)
    model = Net().to(device)
    model.share_memory()
    before = [p.detach().clone() for p in model.parameters()]
    acc_before = test(model, device, dataset2, kwargs)
    processes = []
    for rank in range(2):
        p = mp.Process(target=train, args=(rank, model, device, dataset1, kwargs))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
        assert p.exitcode == 0
    changed = sum(float((p.detach() - b).abs().sum()) for p, b in zip(model.parameters(), before))
    acc = test(model, device, dataset2, kwargs)
    print(f"parameters moved by {changed:.3f}; accuracy {acc_before:.2f} -> {acc:.2f}")
    assert changed > 0, "the children's updates did not reach the parent"
    assert acc > acc_before, "the shared model did not improve"
    print("RESULT ok")
