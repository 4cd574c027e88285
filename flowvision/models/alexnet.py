"""AlexNet with torchvision's structure and parameter names (``features.N``, ``classifier.{1,4,6}``).

torchvision-API only (``alexnet(weights=...)``); timm has no AlexNet.
"""
from flowvision import backend as flow
from flowvision.backend import nn

from ._api import define_tv_builders, tv_weights_enums

__all__ = ["AlexNet"]


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


_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "alexnet": ("AlexNet_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "alexnet-owt-7be5be79.pth", 61100840, (63, 63), 224, 256, "bilinear", 56.522, 79.066),
    ]),
}

define_tv_builders(globals(), tv_weights_enums(__name__, _TV_WEIGHTS), lambda name, weights, **kw: AlexNet(**kw))
