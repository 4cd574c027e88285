"""SBU captioned photos and the PhotoTour (Multi-view Stereo Correspondence) patch datasets."""
import os
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple, Union

import numpy as np
from PIL import Image

from ._base import require
from .folder import default_loader
from .utils import CorruptDatasetError, DatasetNotFoundError, check_integrity, download_and_extract_archive, \
    download_url, extract_archive

from .vision import VisionDataset

__all__ = ["SBU", "PhotoTour"]


class SBU(VisionDataset):
    """`SBU Captioned Photo <http://www.cs.virginia.edu/~vicente/sbucaptions/>`_: ``(PIL image, caption)``.

    Args:
        root: the directory holding ``SBUCaptionedPhotoDataset.tar.gz`` and ``dataset/``.
        transform: as usual.
        target_transform: as usual.
        loader: as usual.
        download: fetch (md5-verified) and extract the URL/caption lists, then every photo still reachable on
            Flickr (the ones that fail are skipped, as in torchvision). Default True, like torchvision.

    Only photos present in ``dataset/`` are listed.
    """

    url = "https://www.cs.rice.edu/~vo9/sbucaptions/SBUCaptionedPhotoDataset.tar.gz"
    filename = "SBUCaptionedPhotoDataset.tar.gz"
    md5_checksum = "9aec147b3488753cf758b4d493422285"

    def __init__(self, root: Union[str, Path], transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = True,
                 loader: Callable[[str], Any] = default_loader) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.loader = loader
        if download:
            self.download()
        require(self._check_integrity(), f"{os.path.join(self.root, self.filename)} (md5 {self.md5_checksum})",
                self.url, self.md5_checksum, self.root)
        self.photos: List[str] = []
        self.captions: List[str] = []
        urls = os.path.join(self.root, "dataset", "SBU_captioned_photo_dataset_urls.txt")
        caps = os.path.join(self.root, "dataset", "SBU_captioned_photo_dataset_captions.txt")
        require(os.path.isfile(urls) and os.path.isfile(caps), f"{urls} and {caps}")
        with open(urls) as f1, open(caps) as f2:
            for line1, line2 in zip(f1, f2):
                photo = os.path.basename(line1.rstrip())
                if os.path.exists(os.path.join(self.root, "dataset", photo)):
                    self.photos.append(photo)
                    self.captions.append(line2.rstrip())

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(PIL image, caption)``."""
        img = self.loader(os.path.join(self.root, "dataset", self.photos[index]))
        target = self.captions[index]
        return self._apply_transforms(img, target)

    def __len__(self) -> int:
        return len(self.photos)

    def _check_integrity(self) -> bool:
        return check_integrity(os.path.join(self.root, self.filename), self.md5_checksum)

    def download(self) -> None:
        """Download the lists (md5-verified) and then each photo; photos that cannot be fetched are skipped."""
        if self._check_integrity():
            return
        download_and_extract_archive(self.url, self.root, self.root, self.filename, self.md5_checksum)
        with open(os.path.join(self.root, "dataset", "SBU_captioned_photo_dataset_urls.txt")) as fh:
            for line in fh:
                try:
                    download_url(line.rstrip(), os.path.join(self.root, "dataset"))
                except (DatasetNotFoundError, OSError):
                    pass  # many of the original Flickr photos are gone


class PhotoTour(VisionDataset):
    """`Multi-view Stereo Correspondence <http://matthewalunbrown.com/patchdata/patchdata.html>`_ 64x64 patches.

    Args:
        root: the directory holding ``<name>/`` (the bmp patch sheets, ``info.txt``, ``m50_100000_100000_0.txt``).
        name: ``notredame``, ``yosemite``, ``liberty`` or their ``_harris`` variants.
        train: samples are single patches (uint8 64x64 tensors), else ``(patch 1, patch 2, is_match)``.
        transform: applied to each patch.
        download: fetch (md5-verified) and safely extract the zip.

    The patches are cut from the 1024x1024 sheets (16x16 patches each, sorted sheet order) once and cached in
    ``<root>/<name>.npz``; a ``<name>.pt`` cache written by torchvision is read without torch.
    """

    urls = {
        "notredame_harris": ["http://matthewalunbrown.com/patchdata/notredame_harris.zip", "notredame_harris.zip",
                             "69f8c90f78e171349abdf0307afefe4d"],
        "yosemite_harris": ["http://matthewalunbrown.com/patchdata/yosemite_harris.zip", "yosemite_harris.zip",
                            "a73253d1c6fbd3ba2613c45065c00d46"],
        "liberty_harris": ["http://matthewalunbrown.com/patchdata/liberty_harris.zip", "liberty_harris.zip",
                           "c731fcfb3abb4091110d0ae8c7ba182c"],
        "notredame": ["http://icvl.ee.ic.ac.uk/vbalnt/notredame.zip", "notredame.zip",
                      "509eda8535847b8c0a90bbb210c83484"],
        "yosemite": ["http://icvl.ee.ic.ac.uk/vbalnt/yosemite.zip", "yosemite.zip", "533b2e8eb7ede31be40abc317b2fd4f0"],
        "liberty": ["http://icvl.ee.ic.ac.uk/vbalnt/liberty.zip", "liberty.zip", "fdd9152f138ea5ef2091746689176414"],
    }
    means = {"notredame": 0.4854, "yosemite": 0.4844, "liberty": 0.4437, "notredame_harris": 0.4854,
             "yosemite_harris": 0.4844, "liberty_harris": 0.4437}
    stds = {"notredame": 0.1864, "yosemite": 0.1818, "liberty": 0.2019, "notredame_harris": 0.1864,
            "yosemite_harris": 0.1818, "liberty_harris": 0.2019}
    lens = {"notredame": 468159, "yosemite": 633587, "liberty": 450092, "liberty_harris": 379587,
            "yosemite_harris": 450912, "notredame_harris": 325295}
    image_ext = "bmp"
    info_file = "info.txt"
    matches_files = "m50_100000_100000_0.txt"

    def __init__(self, root: Union[str, Path], name: str, train: bool = True, transform: Optional[Callable] = None,
                 download: bool = False) -> None:
        super().__init__(root, transform=transform)
        if name not in self.urls:
            raise ValueError(f"Unknown PhotoTour name {name!r}; one of {sorted(self.urls)}")
        self.name = name
        self.data_dir = os.path.join(self.root, name)
        self.data_down = os.path.join(self.root, f"{name}.zip")
        self.data_file = os.path.join(self.root, f"{name}.npz")
        self.train = train
        self.mean = self.means[name]
        self.std = self.stds[name]
        if download:
            self.download()
        data, labels, matches = self._load()
        from .. import backend
        self.data = backend.from_numpy(data)
        self.labels = backend.from_numpy(labels)
        self.matches = backend.from_numpy(matches)

    def _load(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        torch_cache = os.path.join(self.root, f"{self.name}.pt")
        if os.path.exists(self.data_file):
            with np.load(self.data_file, allow_pickle=False) as z:
                return z["data"], z["labels"], z["matches"]
        if os.path.exists(torch_cache):
            from ..hub.pickle_reader import read_torch_checkpoint
            data, labels, matches = read_torch_checkpoint(torch_cache)
            return np.asarray(data), np.asarray(labels), np.asarray(matches)
        require(os.path.isdir(self.data_dir), self.data_dir, self.urls[self.name][0], self.urls[self.name][2],
                self.root)
        out = (read_patches(self.data_dir, self.image_ext, self.lens[self.name]),
               read_info_file(self.data_dir, self.info_file), read_matches_files(self.data_dir, self.matches_files))
        tmp = self.data_file + ".tmp.npz"
        np.savez(tmp, data=out[0], labels=out[1], matches=out[2])
        os.replace(tmp, self.data_file)
        return out

    def __getitem__(self, index: int) -> Any:
        """A patch (train) or ``(patch 1, patch 2, is_match)``."""
        if self.train:
            data = self.data[index]
            return self.transform(data) if self.transform is not None else data
        m = self.matches[index]
        data1, data2 = self.data[int(m[0])], self.data[int(m[1])]
        if self.transform is not None:
            data1, data2 = self.transform(data1), self.transform(data2)
        return data1, data2, m[2]

    def __len__(self) -> int:
        return len(self.data if self.train else self.matches)

    def download(self) -> None:
        """Download (md5-verified) and safely extract the zip unless the folder or a cache is there."""
        if os.path.exists(self.data_file) or os.path.isdir(self.data_dir):
            return
        url, filename, md5 = self.urls[self.name]
        download_url(url, self.root, filename, md5)
        extract_archive(os.path.join(self.root, filename), self.data_dir, remove_finished=True)

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train is True else 'Test'}"


def read_patches(data_dir: str, image_ext: str, n: int) -> np.ndarray:
    """The first ``n`` 64x64 patches of the sorted ``*.<image_ext>`` sheets, row by row, as uint8 ``n x 64 x 64``."""
    sheets = sorted(os.path.join(data_dir, f) for f in os.listdir(data_dir) if f.endswith(image_ext))
    patches = []
    for path in sheets:
        with Image.open(path) as img:
            arr = np.asarray(img.convert("L"))
        h, w = arr.shape
        if h % 64 or w % 64:
            raise CorruptDatasetError(f"{path}: a {w}x{h} sheet is not a grid of 64x64 patches")
        patches.append(arr.reshape(h // 64, 64, w // 64, 64).transpose(0, 2, 1, 3).reshape(-1, 64, 64))
    if not patches:
        return np.zeros((0, 64, 64), np.uint8)
    return np.ascontiguousarray(np.concatenate(patches)[:n])


def read_info_file(data_dir: str, info_file: str) -> np.ndarray:
    """The 3D point id of each patch (first column of ``info.txt``)."""
    with open(os.path.join(data_dir, info_file)) as f:
        return np.array([int(line.split()[0]) for line in f if line.strip()], dtype=np.int64)


def read_matches_files(data_dir: str, matches_file: str) -> np.ndarray:
    """``(patch 1, patch 2, same point)`` rows of the matches file."""
    rows = []
    with open(os.path.join(data_dir, matches_file)) as f:
        for line in f:
            p = line.split()
            if p:
                rows.append([int(p[0]), int(p[3]), int(p[1] == p[4])])
    return np.array(rows, dtype=np.int64).reshape(-1, 3)
