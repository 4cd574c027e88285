"""A minimal torchvision-style weights API (``Weights`` / ``WeightsEnum``) for the segmentation builders, and the
``SemanticSegmentation`` preset transform. Checkpoints load through flowvision.hub (torch files are read without
torch)."""
from dataclasses import dataclass, field
from enum import Enum
from functools import partial

__all__ = ["Weights", "WeightsEnum", "SemanticSegmentation", "ResNet50_Weights", "ResNet101_Weights",
           "VOC_CATEGORIES"]

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

VOC_CATEGORIES = [
    "__background__", "aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat", "chair", "cow",
    "diningtable", "dog", "horse", "motorbike", "person", "pottedplant", "sheep", "sofa", "train", "tvmonitor",
]


@dataclass(eq=True, frozen=True)
class Weights:
    url: str
    transforms: object = field(compare=False)
    meta: dict = field(compare=False)


class WeightsEnum(Enum):
    @classmethod
    def verify(cls, obj):
        if obj is None:
            return None
        if isinstance(obj, str):
            name = obj.replace(cls.__name__ + ".", "")
            try:
                return cls[name]
            except KeyError:
                raise ValueError(f"Failed to find Weights {obj!r} in {cls.__name__} "
                                 f"(available: {', '.join(cls.__members__)})") from None
        if isinstance(obj, cls):
            return obj
        # torchvision's own enum (or another one) with the same member name
        name = getattr(obj, "name", None)
        if isinstance(name, str) and name in cls.__members__:
            return cls[name]
        raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but received "
                        f"{type(obj).__name__}.")

    def get_state_dict(self, progress=True, check_hash=False):
        from flowvision.hub import load_state_dict_from_url
        return load_state_dict_from_url(self.url, progress=progress, check_hash=check_hash)

    def __repr__(self):
        return f"{self.__class__.__name__}.{self._name_}"

    @property
    def url(self):
        return self.value.url

    @property
    def transforms(self):
        return self.value.transforms

    @property
    def meta(self):
        return self.value.meta


class SemanticSegmentation:
    """torchvision's preset: resize the shorter side to ``resize_size``, to float in [0, 1], normalise."""

    def __init__(self, *, resize_size=520, mean=IMAGENET_MEAN, std=IMAGENET_STD, interpolation=None,
                 antialias=True):
        from flowvision.transforms import InterpolationMode
        self.resize_size = [resize_size] if resize_size is not None else None
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = InterpolationMode.BILINEAR if interpolation is None else interpolation
        self.antialias = antialias

    def __call__(self, img):
        import flowvision.backend as flow
        import flowvision.transforms.functional as F
        if isinstance(self.resize_size, list):
            img = F.resize(img, self.resize_size, interpolation=self.interpolation, antialias=self.antialias)
        if not isinstance(img, flow.Tensor):
            img = F.pil_to_tensor(img)
        img = F.convert_image_dtype(img, flow.float32)
        return F.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self):
        return (f"{self.__class__.__name__}(\n    resize_size={self.resize_size}\n    mean={self.mean}\n"
                f"    std={self.std}\n    interpolation={self.interpolation}\n)")


class ResNet50_Weights(WeightsEnum):
    IMAGENET1K_V1 = Weights(url="https://download.pytorch.org/models/resnet50-0676ba61.pth", transforms=None,
                            meta={"num_params": 25557032, "min_size": (1, 1)})
    IMAGENET1K_V2 = Weights(url="https://download.pytorch.org/models/resnet50-11ad3fa6.pth", transforms=None,
                            meta={"num_params": 25557032, "min_size": (1, 1)})
    DEFAULT = IMAGENET1K_V2


class ResNet101_Weights(WeightsEnum):
    IMAGENET1K_V1 = Weights(url="https://download.pytorch.org/models/resnet101-63fe2227.pth", transforms=None,
                            meta={"num_params": 44549160, "min_size": (1, 1)})
    IMAGENET1K_V2 = Weights(url="https://download.pytorch.org/models/resnet101-cd907fc2.pth", transforms=None,
                            meta={"num_params": 44549160, "min_size": (1, 1)})
    DEFAULT = IMAGENET1K_V2


_SEG_META = {"categories": VOC_CATEGORIES, "min_size": (1, 1),
             "_docs": "These weights were trained on a subset of COCO, using only the 20 categories that are "
                      "present in the Pascal VOC dataset."}


def _seg_weights(url, num_params, miou, acc):
    return Weights(url=url, transforms=partial(SemanticSegmentation, resize_size=520),
                   meta={**_SEG_META, "num_params": num_params,
                         "_metrics": {"COCO-val2017-VOC-labels": {"miou": miou, "pixel_acc": acc}}})
