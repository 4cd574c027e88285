"""AlexNet with torchvision's structure and parameter names (``features.N``, ``classifier.{1,4,6}``).

torchvision-API only (``alexnet(weights=...)``); timm has no AlexNet.
"""
from flowvision import backend as flow
from flowvision.backend import nn

from ._api import load_weights, register_builder
from .tv_models import WEIGHTS, tv_prologue

__all__ = ["AlexNet", "alexnet"]


class AlexNet(nn.Module):
    """5 convs + 3 max-pools -> AdaptiveAvgPool2d(6) -> Dropout/Linear/ReLU x2 -> Linear (inputs >= 63 px)."""

    def __init__(self, num_classes=1000, dropout=0.5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2))
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
            nn.Dropout(p=dropout), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes))

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(flow.flatten(x, 1))


@register_builder(weights=WEIGHTS["alexnet"])
def alexnet(*, weights=None, progress=True, **kwargs):
    """torchvision's AlexNet (``weights``: AlexNet_Weights, its name, "DEFAULT" or None)."""
    weights = tv_prologue("alexnet", weights, kwargs)
    model = AlexNet(**kwargs)
    return load_weights(model, weights, progress) if weights is not None else model
