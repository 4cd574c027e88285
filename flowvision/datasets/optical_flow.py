"""Optical-flow datasets: Sintel, KittiFlow, FlyingChairs, FlyingThings3D, HD1K (.flo, .pfm, 16-bit PNG flows)."""
import itertools
import os
import re
from glob import glob
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple, Union

import numpy as np

from .folder import default_loader
from .utils import CorruptDatasetError, DatasetNotFoundError, verify_str_arg
from .vision import VisionDataset

__all__ = ["FlowDataset", "Sintel", "KittiFlow", "FlyingChairs", "FlyingThings3D", "HD1K"]


def _read_flo(file_name: str) -> np.ndarray:
    """A Middlebury ``.flo`` file (``PIEH``, int32 width, height, float32 u/v interleaved) as ``2 x H x W``."""
    with open(file_name, "rb") as f:
        raw = f.read()
    if raw[:4] != b"PIEH" or len(raw) < 12:
        raise CorruptDatasetError(f"{file_name}: magic number incorrect, not a .flo file")
    w, h = (int(v) for v in np.frombuffer(raw, "<i4", count=2, offset=4))
    if len(raw) - 12 < 8 * w * h:
        raise CorruptDatasetError(f"{file_name}: {w}x{h} flow needs {8 * w * h} bytes, the file has {len(raw) - 12}")
    return np.frombuffer(raw, "<f4", count=2 * w * h, offset=12).reshape(h, w, 2).transpose(2, 0, 1)


def _read_pfm(file_name: str, slice_channels: int = 2) -> np.ndarray:
    """A ``.pfm`` file (``PF``: 3 channels, ``Pf``: 1; rows stored bottom-up) as ``C x H x W`` float32."""
    with open(file_name, "rb") as f:
        header = f.readline().rstrip()
        if header not in (b"PF", b"Pf"):
            raise CorruptDatasetError(f"{file_name}: invalid PFM header {header[:10]!r}")
        dims = re.match(rb"^(\d+)\s(\d+)\s$", f.readline())
        if not dims:
            raise CorruptDatasetError(f"{file_name}: malformed PFM size line")
        w, h = (int(d) for d in dims.groups())
        try:
            scale = float(f.readline().rstrip())
        except ValueError:
            raise CorruptDatasetError(f"{file_name}: malformed PFM scale line") from None
        data = np.frombuffer(f.read(), dtype=("<" if scale < 0 else ">") + "f4")
    channels = 3 if header == b"PF" else 1
    if data.size < h * w * channels:
        raise CorruptDatasetError(f"{file_name}: truncated PFM data")
    data = data[: h * w * channels].reshape(h, w, channels).transpose(2, 0, 1)
    return np.flip(data, axis=1)[:slice_channels].astype(np.float32)


def _read_16bits_png_with_flow_and_valid_mask(file_name: str) -> Tuple[np.ndarray, np.ndarray]:
    """KITTI-style flow: a 16-bit RGB PNG with u, v as ``(value - 2**15) / 64`` and a validity channel."""
    import cv2  # Pillow reads 16-bit RGB PNGs as 8-bit; OpenCV keeps the 16 bits
    bgr = cv2.imread(str(file_name), cv2.IMREAD_UNCHANGED)
    if bgr is None or bgr.ndim != 3 or bgr.shape[2] != 3 or bgr.dtype != np.uint16:
        raise CorruptDatasetError(f"{file_name}: not a 16-bit RGB flow PNG")
    rgb = bgr[:, :, ::-1].transpose(2, 0, 1).astype(np.float32)
    return (rgb[:2] - 2 ** 15) / 64, rgb[2].astype(bool)


class FlowDataset(VisionDataset):
    """Base of the flow datasets: ``(img1, img2, flow)`` or ``(img1, img2, flow, valid_flow_mask)``.

    ``flow`` is a ``2 x H x W`` float32 array (None for test splits); ``transforms`` takes and returns the four.
    """

    _has_builtin_flow_mask = False

    def __init__(self, root: Union[str, Path], transforms: Optional[Callable] = None,
                 loader: Callable[[str], Any] = default_loader) -> None:
        super().__init__(root=root)
        self.transforms = transforms
        self._flow_list: List[str] = []
        self._image_list: List[List[str]] = []
        self._loader = loader

    def _read_img(self, file_name: str) -> Any:
        return self._loader(file_name)

    def _read_flow(self, file_name: str) -> Any:
        raise NotImplementedError

    def __getitem__(self, index: int) -> Tuple[Any, ...]:
        """``(img1, img2, flow[, valid_flow_mask])``."""
        img1 = self._read_img(self._image_list[index][0])
        img2 = self._read_img(self._image_list[index][1])
        if self._flow_list:
            flow = self._read_flow(self._flow_list[index])
            flow, valid = flow if self._has_builtin_flow_mask else (flow, None)
        else:
            flow = valid = None
        if self.transforms is not None:
            img1, img2, flow, valid = self.transforms(img1, img2, flow, valid)
        if self._has_builtin_flow_mask or valid is not None:
            return img1, img2, flow, valid
        return img1, img2, flow

    def __len__(self) -> int:
        return len(self._image_list)

    def _require(self, what: str) -> None:
        if not self._image_list:
            raise DatasetNotFoundError(f"Could not find the {what} images under {self.root}. Please make sure the "
                                       "directory structure is correct (see the class docstring).")


class Sintel(FlowDataset):
    """`MPI Sintel <http://sintel.is.tue.mpg.de/>`_: ``Sintel/{training,test}/{clean,final}/<scene>/*.png`` and
    ``Sintel/training/flow/<scene>/*.flo``.

    Args: root, split (``train``/``test``), pass_name (``clean``/``final``/``both``), transforms, loader.
    Scenes are listed in sorted order (torchvision uses ``os.listdir``'s).
    """

    def __init__(self, root: Union[str, Path], split: str = "train", pass_name: str = "clean",
                 transforms: Optional[Callable] = None, loader: Callable[[str], Any] = default_loader) -> None:
        super().__init__(root=root, transforms=transforms, loader=loader)
        verify_str_arg(split, "split", valid_values=("train", "test"))
        verify_str_arg(pass_name, "pass_name", valid_values=("clean", "final", "both"))
        passes = ["clean", "final"] if pass_name == "both" else [pass_name]
        base = Path(root) / "Sintel"
        for p in passes:
            image_root = base / ("training" if split == "train" else split) / p
            if not image_root.is_dir():
                raise DatasetNotFoundError(f"Sintel folder {image_root} not found")
            for scene in sorted(os.listdir(image_root)):
                images = sorted(glob(str(image_root / scene / "*.png")))
                self._image_list += [[images[i], images[i + 1]] for i in range(len(images) - 1)]
                if split == "train":
                    self._flow_list += sorted(glob(str(base / "training" / "flow" / scene / "*.flo")))

    def _read_flow(self, file_name: str) -> np.ndarray:
        return _read_flo(file_name)


class KittiFlow(FlowDataset):
    """`KITTI 2015 flow <http://www.cvlibs.net/datasets/kitti/eval_scene_flow.php?benchmark=flow>`_:
    ``KittiFlow/{training,testing}/image_2/*_1{0,1}.png`` and ``flow_occ/*_10.png`` (16-bit, with a valid mask).

    Args: root, split (``train``/``test``), transforms, loader.
    """

    _has_builtin_flow_mask = True

    def __init__(self, root: Union[str, Path], split: str = "train", transforms: Optional[Callable] = None,
                 loader: Callable[[str], Any] = default_loader) -> None:
        super().__init__(root=root, transforms=transforms, loader=loader)
        verify_str_arg(split, "split", valid_values=("train", "test"))
        base = Path(root) / "KittiFlow" / (split + "ing")
        images1 = sorted(glob(str(base / "image_2" / "*_10.png")))
        images2 = sorted(glob(str(base / "image_2" / "*_11.png")))
        self._image_list = [[a, b] for a, b in zip(images1, images2)]
        self._require("Kitti flow")
        if split == "train":
            self._flow_list = sorted(glob(str(base / "flow_occ" / "*_10.png")))

    def _read_flow(self, file_name: str) -> Tuple[np.ndarray, np.ndarray]:
        return _read_16bits_png_with_flow_and_valid_mask(file_name)


class FlyingChairs(FlowDataset):
    """`FlyingChairs <https://lmb.informatik.uni-freiburg.de/resources/datasets/FlyingChairs.en.html>`_:
    ``FlyingChairs/data/*.ppm``, ``*.flo`` and ``FlyingChairs_train_val.txt`` (1 = train, 2 = val per pair).

    Args: root, split (``train``/``val``), transforms.
    """

    def __init__(self, root: Union[str, Path], split: str = "train", transforms: Optional[Callable] = None) -> None:
        super().__init__(root=root, transforms=transforms)
        verify_str_arg(split, "split", valid_values=("train", "val"))
        base = Path(root) / "FlyingChairs"
        images = sorted(glob(str(base / "data" / "*.ppm")))
        flows = sorted(glob(str(base / "data" / "*.flo")))
        split_file = base / "FlyingChairs_train_val.txt"
        if not split_file.exists():
            raise DatasetNotFoundError(f"{split_file} was not found - please download it from the dataset page")
        split_list = np.loadtxt(str(split_file), dtype=np.int32, ndmin=1)
        if len(split_list) < len(flows) or len(images) < 2 * len(flows):
            raise CorruptDatasetError(f"{base}: {len(flows)} flows, {len(images)} images and {len(split_list)} "
                                      "split entries do not match")
        want = 1 if split == "train" else 2
        for i, flow in enumerate(flows):
            if split_list[i] == want:
                self._flow_list.append(flow)
                self._image_list.append([images[2 * i], images[2 * i + 1]])

    def _read_flow(self, file_name: str) -> np.ndarray:
        return _read_flo(file_name)


class FlyingThings3D(FlowDataset):
    """`FlyingThings3D <https://lmb.informatik.uni-freiburg.de/resources/datasets/SceneFlowDatasets.en.html>`_:
    ``frames_{clean,final}pass/{TRAIN,TEST}/<A-C>/<seq>/{left,right}/*.png`` and
    ``optical_flow/{TRAIN,TEST}/<A-C>/<seq>/{into_future,into_past}/{left,right}/*.pfm``.

    Args: root, split (``train``/``test``), pass_name (``clean``/``final``/``both``), camera
    (``left``/``right``/``both``), transforms, loader.
    """

    def __init__(self, root: Union[str, Path], split: str = "train", pass_name: str = "clean", camera: str = "left",
                 transforms: Optional[Callable] = None, loader: Callable[[str], Any] = default_loader) -> None:
        super().__init__(root=root, transforms=transforms, loader=loader)
        verify_str_arg(split, "split", valid_values=("train", "test"))
        split = split.upper()
        verify_str_arg(pass_name, "pass_name", valid_values=("clean", "final", "both"))
        passes = {"clean": ["frames_cleanpass"], "final": ["frames_finalpass"],
                  "both": ["frames_cleanpass", "frames_finalpass"]}[pass_name]
        verify_str_arg(camera, "camera", valid_values=("left", "right", "both"))
        cameras = ["left", "right"] if camera == "both" else [camera]
        base = Path(root) / "FlyingThings3D"
        for p, cam, direction in itertools.product(passes, cameras, ("into_future", "into_past")):
            image_dirs = sorted(Path(d) / cam for d in glob(str(base / p / split / "*/*")))
            flow_dirs = sorted(Path(d) / direction / cam for d in glob(str(base / "optical_flow" / split / "*/*")))
            if not image_dirs or not flow_dirs:
                raise DatasetNotFoundError(f"Could not find the FlyingThings3D flow images under {base}. Please make "
                                           "sure the directory structure is correct.")
            for image_dir, flow_dir in zip(image_dirs, flow_dirs):
                images = sorted(glob(str(image_dir / "*.png")))
                flows = sorted(glob(str(flow_dir / "*.pfm")))
                for i in range(len(flows) - 1):
                    if direction == "into_future":
                        self._image_list.append([images[i], images[i + 1]])
                        self._flow_list.append(flows[i])
                    else:
                        self._image_list.append([images[i + 1], images[i]])
                        self._flow_list.append(flows[i + 1])

    def _read_flow(self, file_name: str) -> np.ndarray:
        return _read_pfm(file_name)


class HD1K(FlowDataset):
    """`HD1K <http://hci-benchmark.iwr.uni-heidelberg.de/>`_: ``hd1k/hd1k_flow_gt/flow_occ/<seq>_*.png`` (16-bit,
    with a valid mask), ``hd1k_input/image_2`` and ``hd1k_challenge/image_2``.

    Args: root, split (``train``/``test``), transforms, loader.
    """

    _has_builtin_flow_mask = True

    def __init__(self, root: Union[str, Path], split: str = "train", transforms: Optional[Callable] = None,
                 loader: Callable[[str], Any] = default_loader) -> None:
        super().__init__(root=root, transforms=transforms, loader=loader)
        verify_str_arg(split, "split", valid_values=("train", "test"))
        base = Path(root) / "hd1k"
        if split == "train":
            for seq in range(36):
                flows = sorted(glob(str(base / "hd1k_flow_gt" / "flow_occ" / f"{seq:06d}_*.png")))
                images = sorted(glob(str(base / "hd1k_input" / "image_2" / f"{seq:06d}_*.png")))
                for i in range(len(flows) - 1):
                    self._flow_list.append(flows[i])
                    self._image_list.append([images[i], images[i + 1]])
        else:
            images1 = sorted(glob(str(base / "hd1k_challenge" / "image_2" / "*10.png")))
            images2 = sorted(glob(str(base / "hd1k_challenge" / "image_2" / "*11.png")))
            self._image_list = [[a, b] for a, b in zip(images1, images2)]
        self._require("HD1K")

    def _read_flow(self, file_name: str) -> Tuple[np.ndarray, np.ndarray]:
        return _read_16bits_png_with_flow_and_valid_mask(file_name)
