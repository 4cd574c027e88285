"""PatchCamelyon from its HDF5 files (needs h5py, an optional dependency)."""
import pathlib
from typing import Any, Callable, Optional, Tuple, Union

from PIL import Image

from ._readers import import_optional
from .utils import CorruptDatasetError, DatasetNotFoundError, download_file_from_google_drive, extract_archive, \
    verify_str_arg
from .vision import VisionDataset

__all__ = ["PCAM"]


class PCAM(VisionDataset):
    """`PatchCamelyon <https://github.com/basveeling/pcam>`_: 96x96 histopathology patches, metastasis yes/no.

    Args:
        root: the directory holding ``pcam/camelyonpatch_level_2_split_<split>_{x,y}.h5``.
        split: ``train``, ``test`` or ``val``.
        transform: as usual.
        target_transform: as usual.
        download: the files live on Google Drive: present ``.h5.gz`` files are verified and decompressed, missing
            ones are listed with their URL, destination and md5.
    """

    _FILES = {
        "train": {"images": ("camelyonpatch_level_2_split_train_x.h5", "1Ka0XfEMiwgCYPdTI-vv6eUElOBnKFKQ2",
                             "1571f514728f59376b705fc836ff4b63"),
                  "targets": ("camelyonpatch_level_2_split_train_y.h5", "1269yhu3pZDP8UYFQs-NYs3FPwuK-nGSG",
                              "35c2d7259d906cfc8143347bb8e05be7")},
        "test": {"images": ("camelyonpatch_level_2_split_test_x.h5", "1qV65ZqZvWzuIVthK8eVDhIwrbnsJdbg_",
                            "d8c2d60d490dbd479f8199bdfa0cf6ec"),
                 "targets": ("camelyonpatch_level_2_split_test_y.h5", "17BHrSrwWKjYsOgTMmoqrIjDy6Fa2o_gP",
                             "60a7035772fbdb7f34eb86d4420cf66a")},
        "val": {"images": ("camelyonpatch_level_2_split_valid_x.h5", "1hgshYGWK8V-eGRy8LToWJJgDU_rXWVJ3",
                           "d5b63470df7cfa627aeec8b9dc0c066e"),
                "targets": ("camelyonpatch_level_2_split_valid_y.h5", "1bH8ZRbhSVAhScTS0p9-ZzGnX91cHT3uO",
                            "2b85f58b927af9964a4c15b8f7e8f179")},
    }

    def __init__(self, root: Union[str, pathlib.Path], split: str = "train", transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        self.h5py = import_optional("h5py", "PCAM reads HDF5 files")
        self._split = verify_str_arg(split, "split", ("train", "test", "val"))
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._base_folder = pathlib.Path(self.root) / "pcam"
        if download:
            self._download()
        if not self._check_exists():
            names = ", ".join(f[0] for f in self._FILES[self._split].values())
            raise DatasetNotFoundError(f"Dataset not found: {names} missing from {self._base_folder}. You can use "
                                       "download=True to see where to get them.")

    def _open(self, key: str):
        path = self._base_folder / self._FILES[self._split][key][0]
        try:
            return self.h5py.File(path, "r")
        except OSError as e:
            raise CorruptDatasetError(f"{path} is not a readable HDF5 file: {e}") from e

    def __len__(self) -> int:
        with self._open("images") as f:
            return f["x"].shape[0]

    def __getitem__(self, idx: int) -> Tuple[Any, Any]:
        """``(PIL RGB image, 0 or 1)``."""
        with self._open("images") as f:
            image = Image.fromarray(f["x"][idx]).convert("RGB")
        with self._open("targets") as f:
            target = int(f["y"][idx, 0, 0, 0])  # stored as (N, 1, 1, 1)
        return self._apply_transforms(image, target)

    def _check_exists(self) -> bool:
        return all((self._base_folder / f[0]).exists() for f in self._FILES[self._split].values())

    def _download(self) -> None:
        if self._check_exists():
            return
        missing = []
        for file_name, file_id, md5 in self._FILES[self._split].values():
            try:
                download_file_from_google_drive(file_id, str(self._base_folder), filename=file_name + ".gz", md5=md5)
            except DatasetNotFoundError as e:
                missing += e.missing
                continue
            extract_archive(str(self._base_folder / (file_name + ".gz")))
        if missing:
            raise DatasetNotFoundError("PCAM is hosted on Google Drive, which flowvision does not download from. "
                                       "Download each file below and put it at the path shown:\n"
                                       + "\n".join(f"  {u}\n    -> {p}  (md5 {m})" for u, p, m in missing), missing)
