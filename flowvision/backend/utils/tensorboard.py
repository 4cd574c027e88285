"""``torch.utils.tensorboard``: ``SummaryWriter`` from the optional ``tensorboardX`` package (it takes numpy
arrays, and flowvision tensors convert through ``__array__``)."""
try:
    from tensorboardX import SummaryWriter  # noqa: F401
except ImportError as e:  # optional dependency
    raise ImportError("flowvision.backend.utils.tensorboard needs the optional tensorboardX package "
                      "(pip install tensorboardX)") from e

__all__ = ["SummaryWriter"]
