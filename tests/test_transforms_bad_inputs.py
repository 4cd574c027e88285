"""Bad input -> clear TypeError / ValueError, for every v1 class (and the v2 ones that take new arguments)."""
import numpy as np
import pytest

import flowvision.backend as fb
import flowvision.transforms as T
import flowvision.transforms.functional as F
import flowvision.transforms.v2 as V2
from flowvision.transforms.v2 import tv_tensors as FVT

IMG = np.zeros((8, 9, 3), np.uint8)
EMPTY = np.zeros((0, 9, 3), np.uint8)
EMPTY_T = fb.from_numpy(np.zeros((3, 8, 0), np.uint8))
FLOAT_T = fb.from_numpy(np.zeros((3, 8, 9), np.float32))

# (id, callable that must raise, exception type)
CASES = [
    # constructor arguments
    ("Resize-zero", lambda: T.Resize(0), ValueError),
    ("Resize-negative", lambda: T.Resize([-3, 4]), ValueError),
    ("Resize-type", lambda: T.Resize("big"), TypeError),
    ("Resize-len3", lambda: T.Resize([1, 2, 3]), ValueError),
    ("Resize-float", lambda: T.Resize(2.5), TypeError),
    ("CenterCrop-zero", lambda: T.CenterCrop(0), ValueError),
    ("CenterCrop-negative", lambda: T.CenterCrop([-1, 3]), ValueError),
    ("RandomCrop-zero", lambda: T.RandomCrop(0), ValueError),
    ("RandomCrop-padmode", lambda: T.RandomCrop(3, padding_mode="wrap"), ValueError),
    ("RandomResizedCrop-zero", lambda: T.RandomResizedCrop(0), ValueError),
    ("RandomResizedCrop-scale-type", lambda: T.RandomResizedCrop(3, scale=0.5), TypeError),
    ("RandomResizedCrop-ratio-neg", lambda: T.RandomResizedCrop(3, ratio=(-1, 2)), ValueError),
    ("FiveCrop-zero", lambda: T.FiveCrop(0), ValueError),
    ("TenCrop-negative", lambda: T.TenCrop(-2), ValueError),
    ("Pad-type", lambda: T.Pad("x"), TypeError),
    ("Pad-len3", lambda: T.Pad([1, 2, 3]), ValueError),
    ("Pad-mode", lambda: T.Pad(1, padding_mode="wrap"), ValueError),
    ("Pad-fill-type", lambda: T.Pad(1, fill="red"), TypeError),
    ("Normalize-len-mismatch", lambda: T.Normalize([0.5, 0.5], [0.5, 0.5, 0.5]), ValueError),
    ("Normalize-std0", lambda: T.Normalize([0.5, 0.5, 0.5], [0.5, 0.0, 0.5]), ValueError),
    ("Normalize-empty", lambda: T.Normalize([], []), ValueError),
    ("Normalize-type", lambda: T.Normalize("abc", [1.0]), TypeError),
    ("ColorJitter-negative", lambda: T.ColorJitter(brightness=-0.1), ValueError),
    ("ColorJitter-hue-range", lambda: T.ColorJitter(hue=0.7), ValueError),
    ("ColorJitter-type", lambda: T.ColorJitter(contrast="a"), TypeError),
    ("RandomRotation-negative", lambda: T.RandomRotation(-5), ValueError),
    ("RandomRotation-fill", lambda: T.RandomRotation(5, fill="x"), TypeError),
    ("RandomAffine-translate", lambda: T.RandomAffine(0, translate=(2.0, 0.1)), ValueError),
    ("RandomAffine-scale", lambda: T.RandomAffine(0, scale=(0.0, 1.0)), ValueError),
    ("RandomAffine-shear-len", lambda: T.RandomAffine(0, shear=(1, 2, 3)), ValueError),
    ("RandomPerspective-scale", lambda: T.RandomPerspective(distortion_scale=1.5), ValueError),
    ("Grayscale-channels", lambda: T.Grayscale(2), ValueError),
    ("GaussianBlur-even", lambda: T.GaussianBlur(4), ValueError),
    ("GaussianBlur-sigma", lambda: T.GaussianBlur(3, sigma=-1), ValueError),
    ("RandomErasing-p", lambda: T.RandomErasing(p=1.5), ValueError),
    ("RandomErasing-scale", lambda: T.RandomErasing(scale=(0.5, 1.5)), ValueError),
    ("RandomErasing-value", lambda: T.RandomErasing(value="noise"), ValueError),
    ("RandomChoice-p-len", lambda: T.RandomChoice([T.RandomInvert()], p=[0.5, 0.5]), ValueError),
    ("RandomOrder-type", lambda: T.RandomOrder(T.RandomInvert()), TypeError),
    ("Lambda-not-callable", lambda: T.Lambda(3), TypeError),
    ("LinearTransformation-shape", lambda: T.LinearTransformation(np.zeros((2, 3), np.float32),
                                                                  np.zeros(2, np.float32)), ValueError),
    ("ElasticTransform-alpha", lambda: T.ElasticTransform(alpha="a"), TypeError),
    ("AutoAugment-policy", lambda: T.AutoAugment(policy="imagenet"), ValueError),
    ("RandAugment-magnitude", lambda: T.RandAugment(magnitude=40), ValueError),
    ("TrivialAugmentWide-bins", lambda: T.TrivialAugmentWide(num_magnitude_bins=1), ValueError),
    ("AugMix-severity", lambda: T.AugMix(severity=0), ValueError),
    # call-time: wrong input types
    ("Resize-call-list", lambda: T.Resize(4)([[1, 2], [3, 4]]), TypeError),
    ("CenterCrop-call-str", lambda: T.CenterCrop(4)("image.png"), TypeError),
    ("RandomCrop-call-None", lambda: T.RandomCrop(4)(None), TypeError),
    ("RandomCrop-too-big", lambda: T.RandomCrop(20)(IMG), ValueError),
    ("RandomHorizontalFlip-call-int", lambda: T.RandomHorizontalFlip(1.0)(3), TypeError),
    ("RandomVerticalFlip-call-list", lambda: T.RandomVerticalFlip(1.0)([1]), TypeError),
    ("ColorJitter-call-dict", lambda: T.ColorJitter(0.5)({}), TypeError),
    ("Normalize-call-uint8", lambda: T.Normalize([0.5] * 3, [0.5] * 3)(fb.from_numpy(np.zeros((3, 4, 4), np.uint8))),
     TypeError),
    ("Normalize-call-channels", lambda: T.Normalize([0.5] * 2, [0.5] * 2)(FLOAT_T), ValueError),
    ("Normalize-call-pil", lambda: T.Normalize([0.5], [0.5])(F.to_pil_image(IMG)), TypeError),
    ("ToTensor-call-tensor", lambda: T.ToTensor()(FLOAT_T), TypeError),
    ("ToTensor-call-4d", lambda: T.ToTensor()(np.zeros((1, 2, 3, 4), np.uint8)), ValueError),
    ("PILToTensor-call-array", lambda: T.PILToTensor()(IMG), TypeError),
    ("ToPILImage-call-5ch", lambda: T.ToPILImage()(np.zeros((4, 4, 5), np.uint8)), ValueError),
    ("ToPILImage-call-list", lambda: T.ToPILImage()([1, 2]), TypeError),
    ("ConvertImageDtype-call-pil", lambda: T.ConvertImageDtype(fb.float32)(F.to_pil_image(IMG)), TypeError),
    ("Posterize-call-float", lambda: T.RandomPosterize(2, p=1.0)(FLOAT_T), TypeError),
    ("Equalize-call-float", lambda: T.RandomEqualize(p=1.0)(FLOAT_T), TypeError),
    ("Solarize-call-threshold", lambda: T.RandomSolarize(300, p=1.0)(IMG), TypeError),
    ("Grayscale-call-2ch", lambda: T.Grayscale()(np.zeros((4, 4, 2), np.uint8)), TypeError),
    ("RandomErasing-call-pil", lambda: T.RandomErasing(p=1.0)(F.to_pil_image(IMG)), TypeError),
    ("GaussianBlur-call-too-small", lambda: T.GaussianBlur(9)(np.zeros((3, 3, 3), np.uint8)), ValueError),
    ("LinearTransformation-call-size", lambda: T.LinearTransformation(np.eye(4, dtype=np.float32),
                                                                      np.zeros(4, np.float32))(FLOAT_T), ValueError),
    ("FiveCrop-call-too-big", lambda: T.FiveCrop(10)(IMG), ValueError),
    ("Pad-call-reflect-too-big", lambda: T.Pad(20, padding_mode="reflect")(IMG), ValueError),
    ("Pad-fill-channels", lambda: T.Pad(1, fill=(1, 2))(fb.from_numpy(np.zeros((3, 4, 4), np.uint8))), ValueError),
    # empty images
    ("Resize-empty", lambda: T.Resize(4)(EMPTY), ValueError),
    ("Resize-empty-tensor", lambda: T.Resize(4)(EMPTY_T), ValueError),
    ("ColorJitter-empty", lambda: T.ColorJitter(0.5, 0.5, 0.5)(EMPTY), ValueError),
    ("RandomResizedCrop-empty", lambda: T.RandomResizedCrop(4)(EMPTY), ValueError),
    ("GaussianBlur-empty", lambda: T.GaussianBlur(3)(EMPTY), ValueError),
    ("functional-crop-zero", lambda: F.crop(IMG, 0, 0, 0, 3), ValueError),
    ("functional-resize-list-size", lambda: F.resize(IMG, [0, 4]), ValueError),
    ("functional-normalize-2d", lambda: F.normalize(fb.from_numpy(np.zeros((4, 4), np.float32)), [0.5], [0.5]),
     ValueError),
    ("functional-affine-scale", lambda: F.affine(IMG, 0.0, [0, 0], 0.0, 0.0), ValueError),
    ("functional-interpolation", lambda: F.resize(IMG, 4, interpolation="bilinear"), TypeError),
    # v2
    ("v2-Resize-zero", lambda: V2.Resize(0), ValueError),
    ("v2-RandomZoomOut-range", lambda: V2.RandomZoomOut(side_range=(0.5, 2.0)), ValueError),
    ("v2-RandomIoUCrop-needs-boxes", lambda: V2.RandomIoUCrop()(FVT.Image(np.zeros((3, 4, 4), np.uint8))), TypeError),
    ("v2-RandomIoUCrop-scale", lambda: V2.RandomIoUCrop(min_scale=0.0), ValueError),
    ("v2-RandomResize-range", lambda: V2.RandomResize(10, 5), ValueError),
    ("v2-SanitizeBoundingBoxes-min", lambda: V2.SanitizeBoundingBoxes(min_size=0), ValueError),
    ("v2-SanitizeBoundingBoxes-no-boxes", lambda: V2.SanitizeBoundingBoxes(labels_getter=None)(
        FVT.Image(np.zeros((3, 4, 4), np.uint8))), ValueError),
    ("v2-ConvertBoundingBoxFormat", lambda: V2.ConvertBoundingBoxFormat("XYWHR"), ValueError),
    ("v2-ToDtype-type", lambda: V2.ToDtype("float"), ValueError),
    ("v2-CutMix-alpha", lambda: V2.CutMix(alpha=0.0, num_classes=3), ValueError),
    ("v2-Normalize-std0", lambda: V2.Normalize([0.5], [0.0]), ValueError),
    ("v2-Pad-fill", lambda: V2.Pad(1, fill="red"), TypeError),
    ("v2-JPEG-quality", lambda: V2.JPEG(0), ValueError),
    ("v2-boxes-shape", lambda: FVT.BoundingBoxes(np.zeros((2, 5)), format="XYXY", canvas_size=(4, 4)), ValueError),
    ("v2-Compose-empty", lambda: V2.Compose([]), ValueError),
]


@pytest.mark.parametrize("fn,exc", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input(fn, exc):
    with pytest.raises(exc):
        fn()


def test_errors_are_not_silently_swallowed_on_good_input():
    # the same classes work on good input
    for t in (T.Resize(4), T.CenterCrop(4), T.RandomCrop(4), T.RandomResizedCrop(4), T.Pad(1),
              T.ColorJitter(0.5, 0.5, 0.5, 0.1), T.GaussianBlur(3), T.RandomErasing(p=1.0)):
        t(IMG)
