"""The model side of the server: load a model, decode and preprocess images, run batches, format results.

Everything here is synchronous and framework-free, so it is usable in-process (``Predictor.predict``) and is
what the HTTP server calls from its inference thread.
"""
from __future__ import annotations

import base64
import io
import threading
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

import numpy as np


IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
# a detection backbone sees one input shape per image aspect ratio: plans for this many, other shapes run eagerly
MAX_BACKBONE_PLANS = 8


class BadImage(ValueError):
    """The bytes are not an image this server can decode (HTTP 400)."""


class ImageTooLarge(ValueError):
    """The image header announces more pixels than the decompression-bomb limit (HTTP 413)."""


def decode_image(data: bytes, max_pixels: int):
    """Decode ``data`` into an RGB PIL image, refusing non-images and decompression bombs.

    The pixel count is checked from the header before any pixel is decoded, so a small file that expands to
    gigabytes is refused without allocating them.

    Args:
        data: the encoded image (JPEG, PNG, WebP, BMP, GIF, TIFF: whatever Pillow reads).
        max_pixels: the largest width * height accepted.

    Returns:
        The decoded image, mode ``RGB``.
    """
    from PIL import Image, UnidentifiedImageError

    if not data:
        raise BadImage("empty image payload")
    try:
        im = Image.open(io.BytesIO(data))  # reads the header only
        w, h = im.size
        if w * h > max_pixels:
            raise ImageTooLarge(f"image is {w}x{h} = {w * h} pixels, over this server's limit of "
                                f"{max_pixels} pixels")
        if w < 1 or h < 1:
            raise BadImage(f"image has an empty size {w}x{h}")
        im = im.convert("RGB")
    except (ImageTooLarge, BadImage):
        raise
    except Image.DecompressionBombError as e:  # Pillow's own, larger, limit (2 x Image.MAX_IMAGE_PIXELS)
        raise ImageTooLarge(str(e)) from None
    except UnidentifiedImageError:
        raise BadImage("the payload is not an image Pillow can identify (expected JPEG, PNG, WebP, BMP, GIF "
                       "or TIFF)") from None
    except (OSError, ValueError, SyntaxError) as e:
        raise BadImage(f"the image could not be decoded: {e}") from None
    return im


@dataclass
class ModelSpec:
    """What to serve: ``name`` (registry name, optionally ``.tag``), weights and input options."""
    name: str
    checkpoint: Optional[str] = None
    pretrained: bool = True
    input_size: Optional[int] = None


def _task_of(arch: str) -> str:
    from flowvision.models._api import _load_subpackages, list_builders
    _load_subpackages()
    if arch in list_builders():
        import flowvision.models.detection as det
        import flowvision.models.segmentation as seg
        if arch in getattr(det, "__all__", ()):
            return "detection"
        if arch in getattr(seg, "__all__", ()):
            return "segmentation"
    return "classification"


def _first_output():
    """An nn.Module adapter: ``model(x)["out"]``, a segmentation model's main output alone (the capture then drops
    the auxiliary head as dead code); built on first use."""
    from flowvision.backend import nn

    class FirstOutput(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, x):
            return self.model(x)["out"]

    return FirstOutput


class Predictor:
    """One served model: ``predict(images)`` for a list of PIL images, batched in one model call.

    Classification and segmentation models run through ``flowvision.compile`` with one captured plan per batch
    size in ``plan_sizes`` (a batch is zero-padded up to the next size; samples are independent in eval mode,
    so padding does not change any sample's output). Detection models run their pre/post-processing eagerly and
    their backbone through ``flowvision.compile``.

    Args:
        spec: the model to load.
        max_batch: the largest batch ``predict`` will be given.
    """

    def __init__(self, spec: ModelSpec, max_batch: int = 8):
        from flowvision.models._registry import split_model_name_tag
        self.spec = spec
        self.name = spec.name
        arch, _ = split_model_name_tag(spec.name)
        self.arch = arch
        self.task = _task_of(arch)
        self.max_batch = max(1, int(max_batch))
        self.plan_sizes = sorted({min(2 ** i, self.max_batch) for i in range(self.max_batch.bit_length() + 1)})
        self._lock = threading.Lock()
        self.model = self._load()
        self.labels = self._labels()
        self._setup()

    # ---------------------------------------------------------------- loading
    def _load(self):
        spec = self.spec
        if self.task == "classification":
            from flowvision.models import create_model
            pretrained = spec.pretrained and not spec.checkpoint
            return create_model(spec.name, pretrained=pretrained, checkpoint_path=spec.checkpoint).eval()
        from flowvision.models import get_model
        from flowvision.models._builder import load_checkpoint
        if spec.checkpoint or not spec.pretrained:
            model = get_model(self.arch, weights=None, weights_backbone=None)
            if spec.checkpoint:
                load_checkpoint(model, spec.checkpoint)
        else:
            model = get_model(self.arch, weights="DEFAULT")
        return model.eval()

    def _labels(self) -> List[str]:
        if self.task == "classification":
            from flowvision.models._data import imagenet_class_names
            n = int(getattr(self.model, "num_classes", 1000))
            return list(imagenet_class_names()) if n == 1000 else [f"class {i}" for i in range(n)]
        if self.task == "detection":
            from flowvision.models.detection.faster_rcnn import COCO_CATEGORIES
            n = self._detection_num_classes()
            return list(COCO_CATEGORIES) if n == len(COCO_CATEGORIES) else [f"class {i}" for i in range(n)]
        from flowvision.models.segmentation._weights import VOC_CATEGORIES
        n = self._segmentation_num_classes()
        return list(VOC_CATEGORIES) if n == len(VOC_CATEGORIES) else [f"class {i}" for i in range(n)]

    def _detection_num_classes(self) -> int:
        head = getattr(self.model, "roi_heads", None)
        if head is not None:
            return int(head.box_predictor.cls_score.out_features)
        return int(getattr(getattr(self.model, "head", None), "num_classes", 0) or
                   getattr(getattr(getattr(self.model, "head", None), "classification_head", None),
                           "num_classes", 91))

    def _segmentation_num_classes(self) -> int:
        from flowvision import backend as flow
        x = flow.zeros(1, 3, 32, 32)
        with flow.no_grad():
            return int(self.model(x)["out"].shape[1])

    def _setup(self):
        import flowvision
        from flowvision import backend as flow
        if self.task == "detection":
            # backbone + FPN from plans, one per transformed batch shape; the data-dependent stages eagerly
            self.model.backbone = flowvision.compile(self.model.backbone, max_plans=MAX_BACKBONE_PLANS)
            size = getattr(self.model.transform, "fixed_size", None)
            if size is not None:  # SSD-style fixed input: capture its plan now, not on the first request
                with flow.no_grad():
                    self.model([flow.zeros(3, int(size[0]), int(size[1]))])
            self.input_size = tuple(size) if size is not None else None
            return
        if self.task == "classification":
            from flowvision.models._data import create_eval_transform, resolve_data_config
            cfg = resolve_data_config(self.model)
            if self.spec.input_size:
                cfg["input_size"] = (3, self.spec.input_size, self.spec.input_size)
            self.transform = create_eval_transform(**cfg)
            self.input_size = tuple(cfg["input_size"][1:])
            self.data_config = cfg
            target = self.model
        else:
            side = int(self.spec.input_size or 520)
            self.input_size = (side, side)
            target = _first_output()(self.model).eval()
        example = flow.zeros(1, 3, *self.input_size)
        self.compiled = flowvision.compile(target, example)
        for b in self.plan_sizes[1:]:  # every batch plan is captured before the server accepts requests
            self.compiled(flow.zeros(b, 3, *self.input_size))

    # ---------------------------------------------------------------- the request path
    def preprocess(self, image) -> Any:
        """The model input for one RGB PIL image (numpy CHW float32); runs in a worker thread, not the loop."""
        if self.task == "classification":
            return self.transform(image).numpy()
        if self.task == "segmentation":
            from PIL import Image
            h, w = self.input_size
            arr = np.asarray(image.resize((w, h), Image.BILINEAR), dtype=np.float32) / 255.0
            arr = (arr - np.asarray(IMAGENET_MEAN, np.float32)) / np.asarray(IMAGENET_STD, np.float32)
            return np.ascontiguousarray(arr.transpose(2, 0, 1))
        return np.ascontiguousarray(np.asarray(image, dtype=np.float32).transpose(2, 0, 1) / 255.0)

    def run(self, inputs: Sequence[np.ndarray]) -> List[np.ndarray]:
        """Model outputs for preprocessed inputs, as one call per batch (per shape group for detection)."""
        from flowvision import backend as flow
        n = len(inputs)
        if n == 0:
            return []
        with self._lock, flow.no_grad():
            if self.task == "detection":
                return self._run_detection(inputs)
            size = next(s for s in self.plan_sizes + [n] if s >= n)
            x = np.zeros((size,) + inputs[0].shape, np.float32)
            x[:n] = np.stack(inputs)
            out = self.compiled(flow.from_numpy(x)).numpy()
            return [out[i] for i in range(n)]

    def _run_detection(self, inputs):
        from flowvision import backend as flow
        results: List[Any] = [None] * len(inputs)
        groups: Dict[tuple, List[int]] = {}
        for i, x in enumerate(inputs):  # same-size images only: a mixed batch would pad them and change boxes
            groups.setdefault(x.shape, []).append(i)
        for idx in groups.values():
            outs = self.model([flow.from_numpy(inputs[i]) for i in idx])
            for i, o in zip(idx, outs):
                results[i] = {k: v.numpy() for k, v in o.items()}
        return results

    def format(self, output, image_size, topk: int = 5, score_threshold: float = 0.0) -> Dict[str, Any]:
        """The JSON-ready result for one image from its model output."""
        if self.task == "classification":
            from flowvision.models._data import softmax_np
            probs = softmax_np(output)
            k = max(1, min(int(topk), probs.shape[-1]))
            order = np.argsort(-probs, kind="stable")[:k]
            return {"topk": [{"label": self.labels[i], "index": int(i), "score": float(probs[i])} for i in order]}
        if self.task == "detection":
            keep = output["scores"] >= score_threshold
            labels = output["labels"][keep].astype(np.int64)
            return {"boxes": output["boxes"][keep].astype(float).round(3).tolist(),
                    "scores": output["scores"][keep].astype(float).tolist(),
                    "labels": labels.tolist(),
                    "label_names": [self.labels[i] if 0 <= i < len(self.labels) else str(i) for i in labels]}
        from PIL import Image
        mask = np.argmax(output, axis=0).astype(np.uint8)
        mask_img = Image.fromarray(mask, mode="L").resize(image_size, Image.NEAREST)
        buf = io.BytesIO()
        mask_img.save(buf, format="PNG")
        present = np.unique(np.asarray(mask_img))
        return {"mask_png": base64.b64encode(buf.getvalue()).decode("ascii"), "size": list(image_size),
                "classes": [{"index": int(i), "label": self.labels[i]} for i in present]}

    def predict(self, images: Sequence, topk: int = 5, score_threshold: float = 0.0) -> List[Dict[str, Any]]:
        """Results for a list of RGB PIL images, run as one batch (in-process use and tests)."""
        outs = []
        for start in range(0, len(images), self.max_batch):
            chunk = images[start:start + self.max_batch]
            outs += self.run([self.preprocess(im) for im in chunk])
        return [self.format(o, im.size, topk, score_threshold) for o, im in zip(outs, images)]

    def describe(self) -> Dict[str, Any]:
        """The model's entry in ``GET /v1/models``."""
        from flowvision import backend as flow
        return {"name": self.name, "task": self.task, "input_size": list(self.input_size) if self.input_size else
                None, "num_classes": len(self.labels), "labels": self.labels, "plan_batch_sizes": self.plan_sizes,
                "max_batch": self.max_batch, "isa": flow.cpu_isa(), "threads": flow.get_num_threads()}
