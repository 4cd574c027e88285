"""Names of the original flowvision zoo that neither timm nor torchvision registers.

- The segmentation names with a ``_coco`` suffix (``fcn_resnet50_coco`` ...): aliases of torchvision's builders.
- ``resolvable_names(pattern)``: every name ``create_model`` accepts (registered models, aliases such as the
  original's spellings, torchvision and task builders) -- what ``flowvision models`` lists.

The original's detectors that torchvision lacks (``fasterrcnn_resnet101_fpn``, ``retinanet_resnet101_fpn``,
``retinanet_resnext50_32x4d_fpn``) live with their families in ``flowvision.models.detection``.
"""
import fnmatch
from typing import List

from ._registry import list_models, register_model_alias

__all__ = ["resolvable_names"]

for _seg in ("fcn_resnet50", "fcn_resnet101", "deeplabv3_resnet50", "deeplabv3_resnet101",
             "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"):
    register_model_alias(f"{_seg}_coco", _seg)


def resolvable_names(pattern: str = "") -> List[str]:
    """Every name ``create_model`` resolves that matches the fnmatch ``pattern`` ('' = all), sorted.

    Args:
        pattern: an fnmatch pattern such as ``'resnet*'``.

    Returns:
        Registered model names plus aliases (the original flowvision's spellings), torchvision builders and task
        builders (style transfer, the original's extra detectors).
    """
    from ._api import list_builders
    from ._factory import _TASK_BUILDERS
    builders = set(list_builders())  # loads the task subpackages first: they register their task builders
    names = set(list_models(pattern, include_aliases=True))
    others = builders | set(_TASK_BUILDERS)
    names |= set(fnmatch.filter(others, pattern)) if pattern else others
    return sorted(names)
