"""pytorch/examples vae/main.py surface: Linear VAE, reparameterisation (exp, randn_like), binary_cross_entropy
(reduction='sum'), Adam, save_image of samples and reconstructions."""
import argparse

import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F
from torchvision import datasets, transforms
from torchvision.utils import save_image


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()
        self.fc1 = nn.Linear(784, 64)
        self.fc21 = nn.Linear(64, 8)
        self.fc22 = nn.Linear(64, 8)
        self.fc3 = nn.Linear(8, 64)
        self.fc4 = nn.Linear(64, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(1)
    device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
    train_loader = torch.utils.data.DataLoader(
        datasets.MNIST("../data", train=True, download=True, transform=transforms.ToTensor()),
        batch_size=32, shuffle=True)
    test_loader = torch.utils.data.DataLoader(
        datasets.MNIST("../data", train=False, transform=transforms.ToTensor()), batch_size=32, shuffle=False)
    model = VAE().to(device)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        train_loss = 0
        for data, _ in train_loader:
            data = data.to(device)
            optimizer.zero_grad()
            recon, mu, logvar = model(data)
            loss = loss_function(recon, data, mu, logvar)
            loss.backward()
            train_loss += loss.item()
            optimizer.step()
        losses.append(train_loss / len(train_loader.dataset))
        model.eval()
        with torch.no_grad():
            for i, (data, _) in enumerate(test_loader):
                recon, mu, logvar = model(data.to(device))
                if i == 0:
                    n = min(data.size(0), 8)
                    comparison = torch.cat([data[:n], recon.view(32, 1, 28, 28)[:n]])
                    save_image(comparison.cpu(), f"reconstruction_{epoch}.png", nrow=n)
            sample = model.decode(torch.randn(16, 8).to(device)).cpu()
            save_image(sample.view(16, 1, 28, 28), f"sample_{epoch}.png")
        print(f"epoch {epoch} loss {losses[-1]:.2f}")
    assert losses[-1] < losses[0], "the VAE did not learn"
    print("RESULT ok")


if __name__ == "__main__":
    main()
