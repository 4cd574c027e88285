"""timm's ``ResNet`` whose four stages really checkpoint (the trunk of Res2Net and ResNeSt).

``set_grad_checkpointing(True)`` on the plain ``ResNet`` only records the flag; this subclass runs ``layer1`` ..
``layer4`` through ``checkpoint_seq`` in training mode, so each stage keeps only its input and recomputes its
activations in backward. Parameter names, outputs and everything else are ``ResNet``'s.
"""
from flowvision.backend import nn

from ._contract import check_input_channels, checkpoint_seq
from .resnet import ResNet

__all__ = ["CheckpointedResNet"]


class CheckpointedResNet(ResNet):
    """``ResNet`` with real gradient checkpointing of its four stages (see the module docstring)."""

    def set_grad_checkpointing(self, enable: bool = True) -> None:
        """Recompute each stage's activations in backward (training mode only; same values either way)."""
        self.grad_checkpointing = bool(enable)

    def forward_features(self, x):
        if not (self.grad_checkpointing and self.training):
            return super().forward_features(x)
        first = self.conv1 if isinstance(self.conv1, nn.Conv2d) else self.conv1[0]
        check_input_channels(x, first.in_channels)
        x = self.maxpool(self.act1(self.bn1(self.conv1(x))))
        return checkpoint_seq((self.layer1, self.layer2, self.layer3, self.layer4), x)
