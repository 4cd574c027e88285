"""Fast neural style transfer (Johnson et al., "Perceptual Losses for Real-Time Style Transfer and
Super-Resolution", ECCV 2016): the image-transformation network, as the original flowvision's
``fast_neural_style`` (the PyTorch-examples variant: instance norm, reflection padding, nearest-upsample + conv
instead of fractionally strided convs).

Not a classifier: it is built by ``flowvision.models.fast_neural_style(style_model=...)`` or
``create_model('fast_neural_style')`` (torchvision has no such builder, so ``get_model`` does not list it).
Input and output are RGB images in [0, 255] (N, 3, H, W); the output is clamped to that range.
"""
from flowvision import backend as flow
from flowvision.backend import nn

from ._factory import register_task_builder

__all__ = ["FastNeuralStyle", "fast_neural_style", "STYLES"]

STYLES = ("sketch", "candy", "mosaic", "rain_princess", "udnie")


class ConvLayer(nn.Module):
    """Reflection padding (k // 2) + conv."""

    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.reflection_pad = nn.ReflectionPad2d(kernel_size // 2)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        return self.conv2d(self.reflection_pad(x))


class UpsampleConvLayer(ConvLayer):
    """Nearest upsampling, then a ConvLayer (avoids the checkerboard of transposed convs)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super().__init__(in_channels, out_channels, kernel_size, stride)
        self.upsample = upsample
        if upsample:
            self.interpolate = nn.UpsamplingNearest2d(scale_factor=upsample)

    def forward(self, x):
        return super().forward(self.interpolate(x) if self.upsample else x)


class ResidualBlock(nn.Module):
    """conv -> IN -> ReLU -> conv -> IN, plus the input."""

    def __init__(self, channels):
        super().__init__()
        self.conv1 = ConvLayer(channels, channels, 3, 1)
        self.in1 = nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, 3, 1)
        self.in2 = nn.InstanceNorm2d(channels, affine=True)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.in2(self.conv2(self.relu(self.in1(self.conv1(x))))) + x


class FastNeuralStyle(nn.Module):
    """The transformation network: 9x9 conv, two stride-2 convs, five residual blocks, two 2x nearest-upsample
    convs, 9x9 conv to RGB (instance norm + ReLU after every conv but the last)."""

    def __init__(self):
        super().__init__()
        self.conv1 = ConvLayer(3, 32, 9, 1)
        self.in1 = nn.InstanceNorm2d(32, affine=True)
        self.conv2 = ConvLayer(32, 64, 3, 2)
        self.in2 = nn.InstanceNorm2d(64, affine=True)
        self.conv3 = ConvLayer(64, 128, 3, 2)
        self.in3 = nn.InstanceNorm2d(128, affine=True)
        for i in range(1, 6):
            self.add_module(f"res{i}", ResidualBlock(128))
        self.deconv1 = UpsampleConvLayer(128, 64, 3, 1, upsample=2)
        self.in4 = nn.InstanceNorm2d(64, affine=True)
        self.deconv2 = UpsampleConvLayer(64, 32, 3, 1, upsample=2)
        self.in5 = nn.InstanceNorm2d(32, affine=True)
        self.deconv3 = ConvLayer(32, 3, 9, 1)
        self.relu = nn.ReLU()

    def forward(self, x):
        if x.ndim != 4 or x.shape[1] != 3:
            raise ValueError(f"expected (N, 3, H, W) RGB images, got shape {tuple(x.shape)}")
        y = self.relu(self.in1(self.conv1(x)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.relu(self.in3(self.conv3(y)))
        for i in range(1, 6):
            y = getattr(self, f"res{i}")(y)
        y = self.relu(self.in4(self.deconv1(y)))
        y = self.relu(self.in5(self.deconv2(y)))
        return flow.clamp(self.deconv3(y), 0, 255)


@register_task_builder
def fast_neural_style(weights=None, progress=True, style_model="sketch", pretrained=False):
    """The fast neural style network for one of ``STYLES``.

    Args:
        weights: pretrained style weights; none are published in a format this library can fetch (the
            original's were OneFlow archives), so only None is accepted: load a checkpoint with
            ``load_state_dict``. progress: unused without weights.
        style_model: the style the weights would be for (validated).
        pretrained: the original's spelling of ``weights``; only False.

    Returns:
        FastNeuralStyle.
    """
    if style_model not in STYLES:
        raise ValueError(f"style_model must be one of {', '.join(STYLES)}; got {style_model!r}")
    if weights is not None or pretrained:
        raise RuntimeError(f"no pretrained weights are available for fast_neural_style ({style_model}): build it "
                           "untrained and load a checkpoint with model.load_state_dict(...)")
    return FastNeuralStyle()
