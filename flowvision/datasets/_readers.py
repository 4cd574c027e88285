"""Readers of the raw dataset file formats: python-2 pickles (restricted), idx/SN3 files, ``.mat`` files."""
import io
import math
import os
import pickle
from typing import Any, Dict

import numpy as np

from ..hub.errors import CheckpointError
from ..hub.pickle_reader import _NpArray, _RestrictedUnpickler, _materialize_checked, _prescan
from .utils import CorruptDatasetError

__all__ = ["read_restricted_pickle", "read_sn3_pascalvincent", "read_image_file", "read_label_file", "load_mat",
           "import_optional"]


class _Py2NpArray(_NpArray):
    """numpy array record of a python-2 pickle: its raw bytes arrive as a latin-1 ``str``."""

    __slots__ = ()

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) == 5 and isinstance(state[4], str):
            state = state[:4] + (state[4].encode("latin-1"),)
        super().__setstate__(state)


def _py2_reconstruct(subtype, shape, dtype):
    from ..hub.pickle_reader import _NDARRAY
    if subtype is not _NDARRAY:
        raise CheckpointError(f"numpy array subtype {subtype!r} is not allowed")
    return _Py2NpArray()


class _DatasetUnpickler(_RestrictedUnpickler):
    """The hub's allow-list unpickler, decoding python-2 strings as latin-1 (how torchvision loads them)."""

    def __init__(self, file, path):
        super().__init__(file, path, self._no_storage)
        # pickle.Unpickler keeps the encoding in C state set by __init__: re-run it with latin-1
        pickle.Unpickler.__init__(self, file, encoding="latin1")

    @staticmethod
    def _no_storage(pid):
        raise CheckpointError("dataset pickles hold no tensor storages")

    def find_class(self, module, name):
        if name == "_reconstruct" and module in ("numpy.core.multiarray", "numpy._core.multiarray"):
            return _py2_reconstruct
        return super().find_class(module, name)


def read_restricted_pickle(path: str) -> Any:
    """Unpickle a dataset file (CIFAR batches, ...) through the hub's allow-list: no code runs.

    Only containers, strings, numbers and plain numpy arrays are accepted.

    Raises:
        CorruptDatasetError: the file is truncated or malformed, or references a global outside the allow-list.
    """
    with open(path, "rb") as f:
        data = f.read()
    try:
        stream = io.BytesIO(data)
        _prescan(stream, path)  # bounds every length and memo index before the C unpickler allocates
        obj = _DatasetUnpickler(stream, path).load()
        return _materialize_checked(obj, path)
    except CheckpointError as e:
        raise CorruptDatasetError(f"{path}: refusing or unable to read the pickle: {e}") from e
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError,
            UnicodeDecodeError, OverflowError, MemoryError, RecursionError) as e:  # OverflowError: FRAME length
        raise CorruptDatasetError(f"{path} is not a readable pickle (truncated or corrupt): "
                                  f"{type(e).__name__}: {e}") from e


# ---------------------------------------------------------------------------------------------
# idx (SN3 "Pascal Vincent") files: MNIST, EMNIST, QMNIST

_SN3_TYPES = {8: np.uint8, 9: np.int8, 11: np.dtype(">i2"), 12: np.dtype(">i4"), 13: np.dtype(">f4"),
              14: np.dtype(">f8")}


def read_sn3_pascalvincent(path: str) -> np.ndarray:
    """Read an idx file: a big-endian header (0, 0, type code, ndim, then ndim uint32 sizes) and the data.

    Returns a native-endian numpy array of the stored shape.
    """
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 4:
        raise CorruptDatasetError(f"{path}: {len(data)} bytes, too short for an idx header")
    zero, code, nd = int.from_bytes(data[0:2], "big"), data[2], data[3]
    if zero != 0 or code not in _SN3_TYPES or not 1 <= nd <= 4:
        raise CorruptDatasetError(f"{path}: not an idx file (magic {data[:4].hex()}: expected 0000, a type code "
                                  f"in {sorted(_SN3_TYPES)} and 1-4 dimensions)")
    head = 4 * (nd + 1)
    if len(data) < head:
        raise CorruptDatasetError(f"{path}: truncated idx header")
    shape = tuple(int.from_bytes(data[4 * (i + 1): 4 * (i + 2)], "big") for i in range(nd))
    dtype = np.dtype(_SN3_TYPES[code])
    expected = math.prod(shape) * dtype.itemsize  # Python ints: np.prod would wrap around for 4 huge sizes
    if len(data) - head != expected:
        raise CorruptDatasetError(f"{path}: the header announces shape {shape} ({expected} bytes of data) but the "
                                  f"file holds {len(data) - head} bytes (truncated or corrupt)")
    if math.prod(n for n in shape if n) * dtype.itemsize >= 2 ** 63:
        # an empty array whose other sizes overflow numpy's index type: numpy refuses the shape
        raise CorruptDatasetError(f"{path}: the header announces shape {shape}, too large for an array")
    arr = np.frombuffer(data, dtype=dtype, offset=head).reshape(shape)
    return arr.astype(dtype.newbyteorder("="), copy=True)


def read_image_file(path: str) -> np.ndarray:
    """An idx file of uint8 images ``(N, H, W)``."""
    x = read_sn3_pascalvincent(path)
    if x.dtype != np.uint8 or x.ndim != 3:
        raise CorruptDatasetError(f"{path}: expected uint8 images of 3 dimensions, got {x.dtype} {x.shape}")
    return x


def read_label_file(path: str) -> np.ndarray:
    """An idx file of uint8 labels ``(N,)``, returned as int64."""
    x = read_sn3_pascalvincent(path)
    if x.dtype != np.uint8 or x.ndim != 1:
        raise CorruptDatasetError(f"{path}: expected uint8 labels of 1 dimension, got {x.dtype} {x.shape}")
    return x.astype(np.int64)


def import_optional(module: str, needed_for: str) -> Any:
    """Import the optional top-level package ``module`` (lmdb, h5py, ...) only when a dataset needs it.

    Args:
        module: the package's import name, which is also its PyPI name.
        needed_for: what reads the files, for the message (``"PCAM reads HDF5 files"``).

    Returns:
        The imported module.

    Raises:
        ImportError: naming what needs the package and how to install it.
    """
    try:
        return __import__(module)
    except ImportError as e:
        raise ImportError(f"{needed_for}, which needs the {module} package: pip install {module}") from e


# ---------------------------------------------------------------------------------------------
# MATLAB files (SVHN, ImageNet devkit, Flowers102, Stanford Cars, SBD, Caltech101)

def load_mat(path: str, **kwargs: Any) -> Dict[str, Any]:
    """``scipy.io.loadmat`` with a clear error when scipy (an optional dependency) is missing."""
    try:
        import scipy.io as sio
    except ImportError as e:
        raise ImportError(f"reading {os.path.basename(path)} (a MATLAB .mat file) needs scipy: "
                          "pip install 'flowvision[datasets]' (or pip install scipy)") from e
    try:
        return sio.loadmat(path, **kwargs)
    except (ValueError, TypeError, OSError, EOFError) as e:
        raise CorruptDatasetError(f"{path} is not a readable MATLAB file: {type(e).__name__}: {e}") from e
