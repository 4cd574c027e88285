"""torchvision.ops.misc layers: FrozenBatchNorm2d, Conv2dNormActivation, SqueezeExcitation, MLP, Permute.

Constructor signatures, module structure and parameter names equal torchvision's, so its state_dicts load.
"""
from typing import Callable, List, Optional, Sequence, Tuple, Union

import flowvision.backend as flow
from flowvision.backend import nn

__all__ = ["FrozenBatchNorm2d", "Conv2dNormActivation", "SqueezeExcitation", "MLP", "Permute"]


class FrozenBatchNorm2d(nn.Module):
    """BatchNorm2d with fixed statistics and affine parameters (buffers, never trained).

    Args:
        num_features: number of channels ``C`` of the ``(N, C, H, W)`` input.
        eps: added to the running variance before the square root.
    """

    def __init__(self, num_features: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.register_buffer("weight", flow.ones(num_features))
        self.register_buffer("bias", flow.zeros(num_features))
        self.register_buffer("running_mean", flow.zeros(num_features))
        self.register_buffer("running_var", flow.ones(num_features))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        state_dict.pop(prefix + "num_batches_tracked", None)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, x):
        w = self.weight.reshape(1, -1, 1, 1)
        b = self.bias.reshape(1, -1, 1, 1)
        rv = self.running_var.reshape(1, -1, 1, 1)
        rm = self.running_mean.reshape(1, -1, 1, 1)
        scale = w * (rv + self.eps).rsqrt()
        bias = b - rm * scale
        return x * scale + bias

    def __repr__(self):
        return f"{self.__class__.__name__}({self.weight.shape[0]}, eps={self.eps})"


class Conv2dNormActivation(nn.Sequential):
    """Conv2d -> norm_layer -> activation_layer (a Sequential: parameter names '0.weight', '1.weight', ...).

    Args:
        in_channels: input channels.
        out_channels: output channels.
        kernel_size: convolution kernel size.
        stride: convolution stride.
        padding: convolution padding; ``None`` gives ``(kernel_size - 1) // 2 * dilation`` ("same" for odd kernels).
        groups: convolution groups.
        norm_layer: normalization layer built as ``norm_layer(out_channels)``, or ``None`` for none.
        activation_layer: activation built as ``activation_layer(inplace=inplace)``, or ``None`` for none.
        dilation: convolution dilation.
        inplace: ``inplace`` argument of the activation; ``None`` passes none.
        bias: convolution bias; ``None`` gives a bias only when there is no norm layer.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Union[int, Tuple[int, ...]] = 3,
                 stride: Union[int, Tuple[int, ...]] = 1, padding: Optional[Union[int, Tuple[int, ...], str]] = None,
                 groups: int = 1, norm_layer: Optional[Callable[..., nn.Module]] = nn.BatchNorm2d,
                 activation_layer: Optional[Callable[..., nn.Module]] = nn.ReLU,
                 dilation: Union[int, Tuple[int, ...]] = 1, inplace: Optional[bool] = True,
                 bias: Optional[bool] = None) -> None:
        if padding is None:
            if isinstance(kernel_size, int) and isinstance(dilation, int):
                padding = (kernel_size - 1) // 2 * dilation
            else:
                # not both ints: when kernel_size is an int, dilation is the sequence
                n = (len(kernel_size) if isinstance(kernel_size, (list, tuple))
                     else len(dilation))  # type: ignore[arg-type]
                ks = kernel_size if isinstance(kernel_size, (list, tuple)) else (kernel_size,) * n
                dl = dilation if isinstance(dilation, (list, tuple)) else (dilation,) * n
                padding = tuple((ks[i] - 1) // 2 * dl[i] for i in range(n))
        if bias is None:
            bias = norm_layer is None
        layers: List[nn.Module] = [nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, dilation=dilation,
                            groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            params = {} if inplace is None else {"inplace": inplace}
            layers.append(activation_layer(**params))
        super().__init__(*layers)
        self.out_channels = out_channels


class SqueezeExcitation(nn.Module):
    """Squeeze-and-Excitation block (fc1/fc2 are 1x1 convs, as torchvision).

    Args:
        input_channels: channels of the input (and output).
        squeeze_channels: channels of the squeezed representation.
        activation: activation after ``fc1``, built without arguments.
        scale_activation: activation giving the per-channel scale, built without arguments.
    """

    def __init__(self, input_channels: int, squeeze_channels: int, activation: Callable[..., nn.Module] = nn.ReLU,
                 scale_activation: Callable[..., nn.Module] = nn.Sigmoid) -> None:
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def _scale(self, input):
        scale = self.avgpool(input)
        scale = self.fc1(scale)
        scale = self.activation(scale)
        scale = self.fc2(scale)
        return self.scale_activation(scale)

    def forward(self, input):
        return self._scale(input) * input


class MLP(nn.Sequential):
    """Linear -> [norm] -> activation -> Dropout per hidden layer, then Linear -> Dropout.

    Args:
        in_channels: input features.
        hidden_channels: output features of each Linear layer; the last one is the output size.
        norm_layer: normalization after each hidden Linear, built as ``norm_layer(features)``; ``None`` for none.
        activation_layer: activation after each hidden layer.
        inplace: ``inplace`` argument of the activation and dropout; ``None`` passes none.
        bias: whether the Linear layers have a bias.
        dropout: dropout probability.
    """

    def __init__(self, in_channels: int, hidden_channels: Sequence[int],
                 norm_layer: Optional[Callable[..., nn.Module]] = None,
                 activation_layer: Callable[..., nn.Module] = nn.ReLU, inplace: Optional[bool] = None,
                 bias: bool = True, dropout: float = 0.0) -> None:
        params = {} if inplace is None else {"inplace": inplace}
        layers: List[nn.Module] = []
        in_dim = in_channels
        for hidden_dim in hidden_channels[:-1]:
            layers.append(nn.Linear(in_dim, hidden_dim, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden_dim))
            layers.append(activation_layer(**params))
            layers.append(nn.Dropout(dropout, **params))
            in_dim = hidden_dim
        layers.append(nn.Linear(in_dim, hidden_channels[-1], bias=bias))
        layers.append(nn.Dropout(dropout, **params))
        super().__init__(*layers)


class Permute(nn.Module):
    """Permute the dimensions of the input (``x.permute(*dims)``) as a module.

    Args:
        dims: the new order of the dimensions.
    """

    def __init__(self, dims: List[int]) -> None:
        super().__init__()
        self.dims = list(dims)

    def forward(self, x):
        return flow.permute(x, self.dims)
