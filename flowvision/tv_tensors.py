"""torchvision.tv_tensors: the typed containers of transforms v2 (Image, Video, Mask, BoundingBoxes)."""
from .transforms.v2.tv_tensors import *  # noqa: F401,F403
from .transforms.v2.tv_tensors import __all__  # noqa: F401
