"""Stereo-matching datasets: image pairs with left (and right) disparity maps (PNG, PFM) and validity masks."""
import json
import os
import random
from glob import glob
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple, Union

import numpy as np
from PIL import Image

from .optical_flow import _read_pfm
from .utils import DatasetNotFoundError, verify_str_arg
from .vision import VisionDataset

__all__ = ["StereoMatchingDataset", "CarlaStereo", "Kitti2012Stereo", "Kitti2015Stereo", "Middlebury2014Stereo",
           "CREStereo", "FallingThingsStereo", "SceneFlowStereo", "SintelStereo", "InStereo2k", "ETH3DStereo"]

PathT = Union[str, Path]


def _read_pfm_disparity(path: str) -> np.ndarray:
    return _read_pfm(path, slice_channels=1)


def _png_array(path: PathT, dtype=None) -> np.ndarray:
    with Image.open(path) as img:
        return np.asarray(img, dtype=dtype)


class StereoMatchingDataset(VisionDataset):
    """Base: ``(left, right, disparity[, valid_mask])``; disparities are ``1 x H x W`` arrays (None in test splits).

    ``transforms`` takes and returns ``(images, disparities, valid_masks)``, each a (left, right) pair.
    """

    _has_built_in_disparity_mask = False

    def __init__(self, root: PathT, transforms: Optional[Callable] = None) -> None:
        super().__init__(root=root)
        self.transforms = transforms
        self._images: List[Tuple[str, Optional[str]]] = []
        self._disparities: List[Tuple[Optional[str], Optional[str]]] = []

    def _read_img(self, file_path: PathT) -> Image.Image:
        img = Image.open(file_path)
        return img if img.mode == "RGB" else img.convert("RGB")

    @staticmethod
    def _scan_pairs(left_pattern: str, right_pattern: Optional[str] = None) -> List[Tuple[str, Optional[str]]]:
        """Sorted matches of the two glob patterns, paired; None on the right when there is no right pattern."""
        left = sorted(glob(left_pattern))
        right: List[Optional[str]] = sorted(glob(right_pattern)) if right_pattern else [None] * len(left)
        if not left:
            raise DatasetNotFoundError(f"Could not find any files matching the patterns: {left_pattern}")
        if not right:
            raise DatasetNotFoundError(f"Could not find any files matching the patterns: {right_pattern}")
        if len(left) != len(right):
            raise ValueError(f"Found {len(left)} left files but {len(right)} right files using:\n "
                             f"left pattern: {left_pattern}\nright pattern: {right_pattern}\n")
        return list(zip(left, right))

    def _read_disparity(self, file_path: Optional[str]) -> Tuple[Optional[np.ndarray], Optional[np.ndarray]]:
        raise NotImplementedError

    def __getitem__(self, index: int) -> Tuple[Any, ...]:
        """``(left image, right image, left disparity[, left valid mask])``."""
        imgs = (self._read_img(self._images[index][0]), self._read_img(self._images[index][1]))
        (d0, m0), (d1, m1) = (self._read_disparity(self._disparities[index][0]),
                              self._read_disparity(self._disparities[index][1]))
        dsp, masks = (d0, d1), (m0, m1)
        if self.transforms is not None:
            imgs, dsp, masks = self.transforms(imgs, dsp, masks)
        if self._has_built_in_disparity_mask or masks[0] is not None:
            return imgs[0], imgs[1], dsp[0], masks[0]
        return imgs[0], imgs[1], dsp[0]

    def __len__(self) -> int:
        return len(self._images)


class CarlaStereo(StereoMatchingDataset):
    """`CREStereo's Carla <https://github.com/megvii-research/CREStereo>`_ high-res: ``carla-highres/trainingF/*``."""

    def __init__(self, root: PathT, transforms: Optional[Callable] = None) -> None:
        super().__init__(root, transforms)
        base = Path(root) / "carla-highres" / "trainingF"
        self._images = self._scan_pairs(str(base / "*" / "im0.png"), str(base / "*" / "im1.png"))
        self._disparities = self._scan_pairs(str(base / "*" / "disp0GT.pfm"), str(base / "*" / "disp1GT.pfm"))

    def _read_disparity(self, file_path):
        return np.abs(_read_pfm_disparity(file_path)), None


class _KittiStereo(StereoMatchingDataset):
    _has_built_in_disparity_mask = True

    def _read_disparity(self, file_path):
        if file_path is None:
            return None, None
        return (_png_array(file_path) / 256.0)[None], None  # 16-bit PNG, disparity * 256


class Kitti2012Stereo(_KittiStereo):
    """`KITTI 2012 stereo <http://www.cvlibs.net/datasets/kitti/eval_stereo_flow.php>`_:
    ``Kitti2012/{training,testing}/colored_{0,1}/*_10.png`` and ``disp_noc``. Args: root, split, transforms."""

    def __init__(self, root: PathT, split: str = "train", transforms: Optional[Callable] = None) -> None:
        super().__init__(root, transforms)
        verify_str_arg(split, "split", valid_values=("train", "test"))
        base = Path(root) / "Kitti2012" / (split + "ing")
        self._images = self._scan_pairs(str(base / "colored_0" / "*_10.png"), str(base / "colored_1" / "*_10.png"))
        self._disparities = (self._scan_pairs(str(base / "disp_noc" / "*.png"), None) if split == "train"
                             else [(None, None)] * len(self._images))


class Kitti2015Stereo(_KittiStereo):
    """`KITTI 2015 stereo <http://www.cvlibs.net/datasets/kitti/eval_scene_flow.php?benchmark=stereo>`_:
    ``Kitti2015/{training,testing}/image_{2,3}`` and ``disp_occ_{0,1}``. Args: root, split, transforms."""

    def __init__(self, root: PathT, split: str = "train", transforms: Optional[Callable] = None) -> None:
        super().__init__(root, transforms)
        verify_str_arg(split, "split", valid_values=("train", "test"))
        base = Path(root) / "Kitti2015" / (split + "ing")
        self._images = self._scan_pairs(str(base / "image_2" / "*.png"), str(base / "image_3" / "*.png"))
        self._disparities = (self._scan_pairs(str(base / "disp_occ_0" / "*.png"), str(base / "disp_occ_1" / "*.png"))
                             if split == "train" else [(None, None)] * len(self._images))


class Middlebury2014Stereo(StereoMatchingDataset):
    """`Middlebury 2014 <https://vision.middlebury.edu/stereo/data/scenes2014/>`_: ``Middlebury2014/<split>/<scene>``.

    Args: root, split (``train``/``additional``/``test``), calibration (``perfect``/``imperfect``/``both``, None for
    test), use_ambient_views (right image drawn among ``im1.png``/``im1E.png``/``im1L.png``), transforms. The
    scenes are fetched by hand (no download).
    """

    splits = {
        "train": ["Adirondack", "Jadeplant", "Motorcycle", "Piano", "Pipes", "Playroom", "Playtable", "Recycle",
                  "Shelves", "Vintage"],
        "additional": ["Backpack", "Bicycle1", "Cable", "Classroom1", "Couch", "Flowers", "Mask", "Shopvac",
                       "Sticks", "Storage", "Sword1", "Sword2", "Umbrella"],
        "test": ["Plants", "Classroom2E", "Classroom2", "Australia", "DjembeL", "CrusadeP", "Crusade", "Hoops",
                 "Bicycle2", "Staircase", "Newkuba", "AustraliaP", "Djembe", "Livingroom", "Computer"],
    }
    _has_built_in_disparity_mask = True

    def __init__(self, root: PathT, split: str = "train", calibration: Optional[str] = "perfect",
                 use_ambient_views: bool = False, transforms: Optional[Callable] = None,
                 download: bool = False) -> None:
        super().__init__(root, transforms)
        verify_str_arg(split, "split", valid_values=("train", "test", "additional"))
        self.split = split
        if calibration:
            verify_str_arg(calibration, "calibration", valid_values=("perfect", "imperfect", "both"))
            if split == "test":
                raise ValueError("Split 'test' has only no calibration settings, please set `calibration=None`.")
        elif split != "test":
            raise ValueError(f"Split '{split}' has calibration settings, however None was provided as an argument.")
        if download:
            raise ValueError("Middlebury2014Stereo is not downloaded by flowvision: get the scenes from "
                             "https://vision.middlebury.edu/stereo/data/scenes2014/ into "
                             f"{Path(root) / 'Middlebury2014' / split}")
        base = Path(root) / "Middlebury2014" / split
        if not base.is_dir():
            raise DatasetNotFoundError(f"The {split} directory was not found in the provided root directory ({base})")
        if not any(scene.startswith(s) for scene in os.listdir(base) for s in self.splits[split]):
            raise DatasetNotFoundError(f"Provided root folder does not contain any scenes from the {split} split.")
        suffixes = {None: [""], "perfect": ["-perfect"], "imperfect": ["-imperfect"],
                    "both": ["-perfect", "-imperfect"]}[calibration]
        for suffix in suffixes:
            pattern = "*" + suffix
            self._images += self._scan_pairs(str(base / pattern / "im0.png"), str(base / pattern / "im1.png"))
            if split == "test":
                self._disparities = [(None, None)] * len(self._images)
            else:
                self._disparities += self._scan_pairs(str(base / pattern / "disp0.pfm"),
                                                      str(base / pattern / "disp1.pfm"))
        self.use_ambient_views = use_ambient_views

    def _read_img(self, file_path: PathT) -> Image.Image:
        file_path = Path(file_path)
        if file_path.name == "im1.png" and self.use_ambient_views:
            views = [p for p in (file_path.parent / "im1E.png", file_path.parent / "im1L.png") if p.exists()]
            file_path = random.choice(views + [file_path])
        return super()._read_img(file_path)

    def _read_disparity(self, file_path):
        if file_path is None:
            return None, None
        disparity = np.abs(_read_pfm_disparity(file_path))
        disparity[disparity == np.inf] = 0  # unknown disparities
        return disparity, (disparity > 0).squeeze(0)


class CREStereo(StereoMatchingDataset):
    """`CREStereo synthetic <https://github.com/megvii-research/CREStereo>`_: ``CREStereo/{shapenet,reflective,tree,
    hole}/*_{left,right}.jpg`` with ``*.disp.png`` (disparity * 32)."""

    _has_built_in_disparity_mask = True

    def __init__(self, root: PathT, transforms: Optional[Callable] = None) -> None:
        super().__init__(root, transforms)
        base = Path(root) / "CREStereo"
        for s in ("shapenet", "reflective", "tree", "hole"):
            self._images += self._scan_pairs(str(base / s / "*_left.jpg"), str(base / s / "*_right.jpg"))
            self._disparities += self._scan_pairs(str(base / s / "*_left.disp.png"),
                                                  str(base / s / "*_right.disp.png"))

    def _read_disparity(self, file_path):
        return _png_array(file_path, np.float32)[None] / 32.0, None


class FallingThingsStereo(StereoMatchingDataset):
    """`Falling Things <https://research.nvidia.com/publication/2018-06_Falling-Things>`_: depth PNGs turned into
    disparity with each folder's ``_camera_settings.json``. Args: root, variant (``single``/``mixed``/``both``)."""

    def __init__(self, root: PathT, variant: str = "single", transforms: Optional[Callable] = None) -> None:
        super().__init__(root, transforms)
        base = Path(root) / "FallingThings"
        verify_str_arg(variant, "variant", valid_values=("single", "mixed", "both"))
        variants = {"single": ["single"], "mixed": ["mixed"], "both": ["single", "mixed"]}[variant]
        prefix = {"single": Path("*") / "*", "mixed": Path("*")}
        for s in variants:
            d = base / s / prefix[s]
            self._images += self._scan_pairs(str(d / "*.left.jpg"), str(d / "*.right.jpg"))
            self._disparities += self._scan_pairs(str(d / "*.left.depth.png"), str(d / "*.right.depth.png"))

    def _read_disparity(self, file_path):
        depth = _png_array(file_path)
        with open(Path(file_path).parent / "_camera_settings.json") as f:
            focal = json.load(f)["camera_settings"][0]["intrinsic_settings"]["fx"]
        baseline, pixel_constant = 6, 100  # depth is in cm; the constant converts it back
        return ((baseline * focal * pixel_constant) / depth.astype(np.float32))[None], None


class SceneFlowStereo(StereoMatchingDataset):
    """`SceneFlow <https://lmb.informatik.uni-freiburg.de/resources/datasets/SceneFlowDatasets.en.html>`_ stereo:
    ``SceneFlow/<variant>/frames_{clean,final}pass/.../{left,right}/*.png`` and ``disparity/.../*.pfm``.
    Args: root, variant (``FlyingThings3D``/``Driving``/``Monkaa``), pass_name, transforms."""

    def __init__(self, root: PathT, variant: str = "FlyingThings3D", pass_name: str = "clean",
                 transforms: Optional[Callable] = None) -> None:
        super().__init__(root, transforms)
        verify_str_arg(variant, "variant", valid_values=("FlyingThings3D", "Driving", "Monkaa"))
        verify_str_arg(pass_name, "pass_name", valid_values=("clean", "final", "both"))
        passes = {"clean": ["frames_cleanpass"], "final": ["frames_finalpass"],
                  "both": ["frames_cleanpass", "frames_finalpass"]}[pass_name]
        base = Path(root) / "SceneFlow" / variant
        prefix = Path("*") if variant == "Monkaa" else Path("*") / "*" / "*"
        for p in passes:
            self._images += self._scan_pairs(str(base / p / prefix / "left" / "*.png"),
                                             str(base / p / prefix / "right" / "*.png"))
            self._disparities += self._scan_pairs(str(base / "disparity" / prefix / "left" / "*.pfm"),
                                                  str(base / "disparity" / prefix / "right" / "*.pfm"))

    def _read_disparity(self, file_path):
        return np.abs(_read_pfm_disparity(file_path)), None


class SintelStereo(StereoMatchingDataset):
    """`Sintel stereo <http://sintel.is.tue.mpg.de/stereo>`_: ``Sintel/training/{final,clean}_{left,right}``, RGB-
    encoded disparities and occlusion / out-of-frame masks. Args: root, pass_name, transforms."""

    _has_built_in_disparity_mask = True

    def __init__(self, root: PathT, pass_name: str = "final", transforms: Optional[Callable] = None) -> None:
        super().__init__(root, transforms)
        verify_str_arg(pass_name, "pass_name", valid_values=("final", "clean", "both"))
        base = Path(root) / "Sintel" / "training"
        for p in {"final": ["final"], "clean": ["clean"], "both": ["final", "clean"]}[pass_name]:
            self._images += self._scan_pairs(str(base / f"{p}_left" / "*" / "*.png"),
                                             str(base / f"{p}_right" / "*" / "*.png"))
            self._disparities += self._scan_pairs(str(base / "disparities" / "*" / "*.png"), None)

    @staticmethod
    def _mask_paths(file_path: str) -> Tuple[str, str]:
        f = Path(file_path)
        sample_dir = f.parent.parent.parent
        occlusion = sample_dir / "occlusions" / f.parent.name / f.name
        outofframe = sample_dir / "outofframe" / f.parent.name / f.name
        for p in (occlusion, outofframe):
            if not p.exists():
                raise DatasetNotFoundError(f"Sintel mask {p} does not exist")
        return str(occlusion), str(outofframe)

    def _read_disparity(self, file_path):
        if file_path is None:
            return None, None
        rgb = _png_array(file_path, np.float32)
        disparity = (rgb[..., 0] * 4 + rgb[..., 1] / 2 ** 6 + rgb[..., 2] / 2 ** 14)[None]
        occlusion, outofframe = self._mask_paths(file_path)
        return disparity, np.logical_and(_png_array(outofframe) == 0, _png_array(occlusion) == 0)


class InStereo2k(StereoMatchingDataset):
    """`InStereo2K <https://github.com/YuhuaXu/StereoDataset>`_: ``InStereo2k/{train,test}/*/{left,right}.png`` with
    ``*_disp.png`` (disparity * 1024). Args: root, split, transforms."""

    def __init__(self, root: PathT, split: str = "train", transforms: Optional[Callable] = None) -> None:
        super().__init__(root, transforms)
        verify_str_arg(split, "split", valid_values=("train", "test"))
        base = Path(root) / "InStereo2k" / split
        self._images = self._scan_pairs(str(base / "*" / "left.png"), str(base / "*" / "right.png"))
        self._disparities = self._scan_pairs(str(base / "*" / "left_disp.png"), str(base / "*" / "right_disp.png"))

    def _read_disparity(self, file_path):
        return _png_array(file_path, np.float32)[None] / 1024.0, None


class ETH3DStereo(StereoMatchingDataset):
    """`ETH3D two-view <https://www.eth3d.net/datasets>`_: ``ETH3D/two_view_{training,test}/*/im{0,1}.png`` and
    ``two_view_training_gt/*/disp0GT.pfm`` + ``mask0nocc.png``. Args: root, split, transforms."""

    _has_built_in_disparity_mask = True

    def __init__(self, root: PathT, split: str = "train", transforms: Optional[Callable] = None) -> None:
        super().__init__(root, transforms)
        verify_str_arg(split, "split", valid_values=("train", "test"))
        base = Path(root) / "ETH3D"
        img_dir = "two_view_training" if split == "train" else "two_view_test"
        self._images = self._scan_pairs(str(base / img_dir / "*" / "im0.png"), str(base / img_dir / "*" / "im1.png"))
        self._disparities = ([(None, None)] * len(self._images) if split == "test" else
                             self._scan_pairs(str(base / "two_view_training_gt" / "*" / "disp0GT.pfm"), None))

    def _read_disparity(self, file_path):
        if file_path is None:
            return None, None
        mask = _png_array(Path(file_path).parent / "mask0nocc.png").astype(bool)
        return np.abs(_read_pfm_disparity(file_path)), mask
