"""BatchNorm + activation in one module, with BatchNorm2d's parameter names (timm's BatchNormAct2d)."""
from flowvision.backend import nn

from .activations import create_act_layer


class BatchNormAct2d(nn.BatchNorm2d):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, apply_act=True,
                 act_layer=nn.ReLU, inplace=True, drop_layer=None):
        super().__init__(num_features, eps=eps, momentum=momentum, affine=affine,
                         track_running_stats=track_running_stats)
        self.drop = drop_layer() if drop_layer is not None else nn.Identity()
        act = create_act_layer(act_layer, inplace=inplace) if apply_act else None
        self.act = act if act is not None else nn.Identity()

    def forward(self, x):
        x = super().forward(x)
        return self.act(self.drop(x))


def get_norm_act_layer(norm_layer=None, act_layer=None):
    """A BatchNormAct2d factory bound to ``act_layer`` (only the batch-norm flavour is needed so far)."""
    def factory(num_features, **kwargs):
        kwargs.setdefault("act_layer", act_layer)
        return BatchNormAct2d(num_features, **kwargs)
    return factory
