"""pytorch/examples siamese_network/main.py surface: torchvision resnet18(weights=None) with a replaced conv1,
children() slicing into Sequential, Module.apply init, a Dataset built on MNIST .data/.targets with numpy,
BCELoss, torch.where, Adadelta + StepLR."""
import random

import numpy as np

import torch
import torch.nn as nn
import torch.optim as optim
import torchvision
from torch.utils.data import Dataset
from torchvision import datasets
from torch.optim.lr_scheduler import StepLR


class SiameseNetwork(nn.Module):
    def __init__(self):
        super(SiameseNetwork, self).__init__()
        self.resnet = torchvision.models.resnet18(weights=None)
        self.resnet.conv1 = nn.Conv2d(1, 64, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), bias=False)
        self.fc_in_features = self.resnet.fc.in_features
        self.resnet = torch.nn.Sequential(*(list(self.resnet.children())[:-1]))
        self.fc = nn.Sequential(nn.Linear(self.fc_in_features * 2, 16), nn.ReLU(inplace=True), nn.Linear(16, 1))
        self.sigmoid = nn.Sigmoid()
        self.resnet.apply(self.init_weights)
        self.fc.apply(self.init_weights)

    def init_weights(self, m):
        if isinstance(m, nn.Linear):
            torch.nn.init.xavier_uniform_(m.weight)
            m.bias.data.fill_(0.01)

    def forward_once(self, x):
        output = self.resnet(x)
        return output.view(output.size()[0], -1)

    def forward(self, input1, input2):
        output = torch.cat((self.forward_once(input1), self.forward_once(input2)), 1)
        return self.sigmoid(self.fc(output))


class APP_MATCHER(Dataset):
    def __init__(self, root, train, download=False):
        super(APP_MATCHER, self).__init__()
        self.dataset = datasets.MNIST(root, train=train, download=download)
        self.data = self.dataset.data.unsqueeze(1).clone()
        np_arr = np.array(self.dataset.targets.clone(), dtype=None, copy=None)
        self.grouped_examples = {i: np.where((np_arr == i))[0] for i in range(0, 10)}

    def __len__(self):
        return 32

    def __getitem__(self, index):
        selected_class = random.randint(0, 9)
        group = self.grouped_examples[selected_class]
        image_1 = self.data[group[random.randint(0, group.shape[0] - 1)]].clone().float()
        if index % 2 == 0:
            image_2 = self.data[group[random.randint(0, group.shape[0] - 1)]].clone().float()
            target = torch.tensor(1, dtype=torch.float)
        else:
            other = random.choice([c for c in range(10) if c != selected_class])
            g2 = self.grouped_examples[other]
            image_2 = self.data[g2[random.randint(0, g2.shape[0] - 1)]].clone().float()
            target = torch.tensor(0, dtype=torch.float)
        return image_1, image_2, target


def main():
    random.seed(0)
    torch.manual_seed(1)
    device = torch.device("cpu")
    train_loader = torch.utils.data.DataLoader(APP_MATCHER("../data", train=True, download=True), batch_size=16)
    test_loader = torch.utils.data.DataLoader(APP_MATCHER("../data", train=False), batch_size=16)
    model = SiameseNetwork().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    criterion = nn.BCELoss()
    for epoch in range(1, 2):
        model.train()
        for images_1, images_2, targets in train_loader:
            optimizer.zero_grad()
            outputs = model(images_1.to(device), images_2.to(device)).squeeze()
            loss = criterion(outputs, targets.to(device))
            loss.backward()
            optimizer.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for images_1, images_2, targets in test_loader:
                outputs = model(images_1, images_2).squeeze()
                pred = torch.where(outputs > 0.5, 1, 0)
                correct += pred.eq(targets.view_as(pred)).sum().item()
        scheduler.step()
        print(f"loss {loss.item():.4f} correct {correct}/{len(test_loader.dataset)}")
    assert np.isfinite(loss.item())
    print("RESULT ok")


if __name__ == "__main__":
    main()
