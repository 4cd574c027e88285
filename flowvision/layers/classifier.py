"""Global pooling and classifier heads (timm names: global_pool.pool / .flatten, fc)."""
from flowvision import backend as flow
from flowvision.backend import nn

_POOL_TYPES = ("", "avg", "max", "avgmax", "catavgmax")


class SelectAdaptivePool2d(nn.Module):
    """Global pooling chosen by name: '' (none), 'avg', 'max', 'avgmax', 'catavgmax'."""

    def __init__(self, output_size=1, pool_type="avg", flatten=False):
        super().__init__()
        if pool_type not in _POOL_TYPES:
            raise ValueError(f"unknown global_pool {pool_type!r}; choose from {_POOL_TYPES}")
        self.pool_type = pool_type or ""
        self.flatten = nn.Flatten(1) if flatten and self.pool_type else nn.Identity()
        self.pool = nn.Identity() if not self.pool_type else _GlobalPool(self.pool_type)

    def is_identity(self):
        return not self.pool_type

    def feat_mult(self):
        return 2 if self.pool_type == "catavgmax" else 1

    def forward(self, x):
        return self.flatten(self.pool(x))

    def extra_repr(self):
        return f"pool_type={self.pool_type}"


class _GlobalPool(nn.Module):
    def __init__(self, pool_type):
        super().__init__()
        self.pool_type = pool_type

    def forward(self, x):
        if self.pool_type == "avg":
            return x.mean((2, 3), keepdim=True)
        if self.pool_type == "max":
            return x.amax((2, 3), keepdim=True)
        avg, mx = x.mean((2, 3), keepdim=True), x.amax((2, 3), keepdim=True)
        if self.pool_type == "avgmax":
            return 0.5 * (avg + mx)
        return flow.cat([avg, mx], dim=1)


def create_classifier(num_features, num_classes, pool_type="avg", drop_rate=None):
    """(global_pool, fc) for CNN heads; fc is Identity when num_classes == 0."""
    global_pool = SelectAdaptivePool2d(pool_type=pool_type, flatten=True)
    num_pooled = num_features * global_pool.feat_mult()
    fc = nn.Linear(num_pooled, num_classes, bias=True) if num_classes > 0 else nn.Identity()
    if drop_rate is not None:
        return global_pool, nn.Dropout(drop_rate), fc
    return global_pool, fc


class ClassifierHead(nn.Module):
    """Pool -> dropout -> fc (timm names: global_pool, drop, fc, flatten)."""

    def __init__(self, in_features, num_classes, pool_type="avg", drop_rate=0.0):
        super().__init__()
        self.in_features = in_features
        self.global_pool, self.fc = create_classifier(in_features, num_classes, pool_type=pool_type)
        self.drop = nn.Dropout(drop_rate)
        self.flatten = nn.Identity()

    def reset(self, num_classes, pool_type=None):
        if pool_type is None:
            pool_type = self.global_pool.pool_type
        self.global_pool, self.fc = create_classifier(self.in_features, num_classes, pool_type=pool_type)

    def forward(self, x, pre_logits=False):
        x = self.drop(self.global_pool(x))
        if pre_logits:
            return self.flatten(x)
        return self.flatten(self.fc(x))


class NormMlpClassifierHead(nn.Module):
    """Pool -> norm -> flatten -> (pre_logits fc + act) -> dropout -> fc (ConvNeXt's head, timm names)."""

    def __init__(self, in_features, num_classes, hidden_size=None, pool_type="avg", drop_rate=0.0,
                 norm_layer=None, act_layer=nn.Tanh):
        super().__init__()
        from .norm import LayerNorm2d
        norm_layer = norm_layer or LayerNorm2d
        self.in_features = in_features
        self.hidden_size = hidden_size
        self.num_features = hidden_size or in_features
        self.global_pool = SelectAdaptivePool2d(pool_type=pool_type)
        self.norm = norm_layer(in_features)
        self.flatten = nn.Flatten(1) if pool_type else nn.Identity()
        if hidden_size:
            self.pre_logits = nn.Sequential()
            self.pre_logits.add_module("fc", nn.Linear(in_features, hidden_size))
            self.pre_logits.add_module("act", act_layer())
        else:
            self.pre_logits = nn.Identity()
        self.drop = nn.Dropout(drop_rate)
        self.fc = nn.Linear(self.num_features, num_classes) if num_classes > 0 else nn.Identity()

    def reset(self, num_classes, pool_type=None):
        if pool_type is not None:
            self.global_pool = SelectAdaptivePool2d(pool_type=pool_type)
            self.flatten = nn.Flatten(1) if pool_type else nn.Identity()
        self.fc = nn.Linear(self.num_features, num_classes) if num_classes > 0 else nn.Identity()

    def forward(self, x, pre_logits=False):
        x = self.flatten(self.norm(self.global_pool(x)))
        x = self.drop(self.pre_logits(x))
        return x if pre_logits else self.fc(x)
