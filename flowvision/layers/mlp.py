"""MLP used by ViT / Mixer style blocks (timm names: fc1, act, drop1, norm, fc2, drop2)."""
from flowvision.backend import nn

from .helpers import to_2tuple


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features=None, out_features=None, act_layer=nn.GELU, norm_layer=None,
                 bias=True, drop=0.0, use_conv=False):
        super().__init__()
        out_features = out_features or in_features
        hidden_features = hidden_features or in_features
        bias = to_2tuple(bias)
        drop_probs = to_2tuple(drop)
        linear = nn.Conv2d if use_conv else nn.Linear
        if use_conv:
            self.fc1 = linear(in_features, hidden_features, kernel_size=1, bias=bias[0])
        else:
            self.fc1 = linear(in_features, hidden_features, bias=bias[0])
        self.act = act_layer()
        self.drop1 = nn.Dropout(drop_probs[0])
        self.norm = norm_layer(hidden_features) if norm_layer is not None else nn.Identity()
        if use_conv:
            self.fc2 = linear(hidden_features, out_features, kernel_size=1, bias=bias[1])
        else:
            self.fc2 = linear(hidden_features, out_features, bias=bias[1])
        self.drop2 = nn.Dropout(drop_probs[1])

    def forward(self, x):
        x = self.drop1(self.act(self.fc1(x)))
        x = self.norm(x)
        return self.drop2(self.fc2(x))


class GatedMlp(Mlp):
    """Mlp with a gate on the hidden units (gMLP): fc1 -> act -> gate (halves the width) -> fc2."""

    def __init__(self, in_features, hidden_features=None, out_features=None, act_layer=nn.GELU, norm_layer=None,
                 gate_layer=None, bias=True, drop=0.0):
        super().__init__(in_features, hidden_features, out_features, act_layer=act_layer, norm_layer=None,
                         bias=bias, drop=drop)
        hidden_features = hidden_features or in_features
        out_features = out_features or in_features
        if gate_layer is not None:
            if hidden_features % 2:
                raise ValueError("GatedMlp needs an even hidden width")
            self.gate = gate_layer(hidden_features)
            hidden_features = hidden_features // 2
        else:
            self.gate = nn.Identity()
        self.norm = norm_layer(hidden_features) if norm_layer is not None else nn.Identity()
        self.fc2 = nn.Linear(hidden_features, out_features, bias=to_2tuple(bias)[1])
        # keep timm's registration order: fc1, act, drop1, gate, norm, fc2, drop2
        for name in ("norm", "fc2", "drop2"):
            self._modules[name] = self._modules.pop(name)

    def forward(self, x):
        x = self.drop1(self.act(self.fc1(x)))
        x = self.norm(self.gate(x))
        return self.drop2(self.fc2(x))


class ConvMlp(nn.Module):
    """Mlp with 1x1 convs on NCHW maps (timm names fc1, norm, act, drop, fc2)."""

    def __init__(self, in_features, hidden_features=None, out_features=None, act_layer=nn.ReLU, norm_layer=None,
                 bias=True, drop=0.0):
        super().__init__()
        out_features = out_features or in_features
        hidden_features = hidden_features or in_features
        bias = to_2tuple(bias)
        self.fc1 = nn.Conv2d(in_features, hidden_features, kernel_size=1, bias=bias[0])
        self.norm = norm_layer(hidden_features) if norm_layer else nn.Identity()
        self.act = act_layer()
        self.drop = nn.Dropout(drop)
        self.fc2 = nn.Conv2d(hidden_features, out_features, kernel_size=1, bias=bias[1])

    def forward(self, x):
        return self.fc2(self.drop(self.act(self.norm(self.fc1(x)))))
