"""Fuzz targets: one function per parser that reads bytes a user did not write.

Each target takes the raw fuzz input and either returns normally or raises the error type its parser documents
(``ALLOWED``). Any other exception, a crash, a hang or unbounded memory is a bug. The same functions run under
atheris (``tests/fuzz/run.py``) and replay the committed corpora in ``tests/test_fuzz_targets.py``.
"""
import contextlib
import os
import shutil
import socket
import tempfile
import threading
from typing import Callable, Dict, Tuple, Type

_SCRATCH = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
_tmpdir = None


def _workdir() -> str:
    """One private scratch directory per process (in RAM where possible: the fuzzers write a file per input)."""
    global _tmpdir
    if _tmpdir is None or not os.path.isdir(_tmpdir):
        _tmpdir = tempfile.mkdtemp(prefix="fv-fuzz-", dir=_SCRATCH)
    return _tmpdir


def _as_file(data: bytes, name: str) -> str:
    path = os.path.join(_workdir(), name)
    with open(path, "wb") as f:
        f.write(data)
    return path


# --------------------------------------------------------------------------------------------- checkpoints

def _touch_arrays(obj) -> None:
    """Read every element of every array in ``obj``: a view past its buffer's end would fault here."""
    import numpy as np
    seen, stack = set(), [obj]
    while stack:  # iterative, each container once: a pickle can build self-referencing lists
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if hasattr(o, "to_float32"):  # bfloat16 arrays are kept as bit patterns
            o = o.to_float32()
        if isinstance(o, np.ndarray):
            o.sum()
        elif isinstance(o, dict):
            stack.extend(o.values())
        elif isinstance(o, (list, tuple)):
            stack.extend(o)


def _check_state(obj) -> None:
    """A torch file may hold any picklable object (``torch.save((1,))`` is legal): the raw object is walked, then
    the state-dict path every loader takes must give a dict of arrays or a CheckpointError."""
    from flowvision.hub.readers import unwrap_state_dict
    _touch_arrays(obj)
    sd = unwrap_state_dict(obj)
    if not isinstance(sd, dict):
        raise AssertionError(f"unwrap_state_dict returned {type(sd).__name__}, not a dict")


def torch_zip(data: bytes) -> None:
    from flowvision.hub.readers import read_any
    _check_state(read_any(_as_file(data, "ckpt.pth")))


def torch_legacy(data: bytes) -> None:
    from flowvision.hub.pickle_reader import read_torch_checkpoint
    _check_state(read_torch_checkpoint(_as_file(data, "legacy.pth")))


def safetensors(data: bytes) -> None:
    from flowvision.hub.readers import read_safetensors
    _check_state(read_safetensors(_as_file(data, "model.safetensors")))


def npz(data: bytes) -> None:
    from flowvision.hub.readers import read_npz
    _check_state(read_npz(_as_file(data, "weights.npz")))


# --------------------------------------------------------------------------------------------- images

def image(data: bytes) -> None:
    """``flowvision.io`` decoders; the first byte picks the decoder, the read mode and EXIF handling."""
    from flowvision.io import ImageReadMode, decode_gif, decode_image, decode_jpeg, decode_png, decode_webp
    import numpy as np
    from PIL import Image
    import flowvision.backend as fb
    # a 4-megapixel bomb limit instead of Pillow's 89: the fuzzer's time goes into parsing, not into decoding the
    # large (and legal) canvases it declares; the check itself is what is under test
    Image.MAX_IMAGE_PIXELS = 1 << 22
    if not data:
        return
    sel, payload = data[0], data[1:]
    buf = fb.from_numpy(np.frombuffer(payload, np.uint8).copy())
    modes = list(ImageReadMode)
    mode = modes[(sel & 7) % len(modes)]
    which = ((sel >> 3) & 0xF) % 5
    exif = bool(sel & 0x80)
    if which == 0:
        out = decode_image(buf, mode, apply_exif_orientation=exif)
    elif which == 1:
        out = decode_jpeg(buf, mode, apply_exif_orientation=exif)
    elif which == 2:
        out = decode_png(buf, mode, apply_exif_orientation=exif)
    elif which == 3:
        out = decode_webp(buf, mode)
    else:
        out = decode_gif(buf)
    shape = tuple(out.shape)
    if len(shape) not in (3, 4) or 0 in shape:
        raise AssertionError(f"decoder returned shape {shape}")


# --------------------------------------------------------------------------------------------- datasets

def idx(data: bytes) -> None:
    from flowvision.datasets._readers import read_sn3_pascalvincent
    arr = read_sn3_pascalvincent(_as_file(data, "train-images-idx3-ubyte"))
    arr.sum()


def dataset_pickle(data: bytes) -> None:
    from flowvision.datasets._readers import read_restricted_pickle
    read_restricted_pickle(_as_file(data, "data_batch_1"))


_ARCHIVE_NAMES = ("a.tar", "a.tar.gz", "a.tgz", "a.tar.bz2", "a.tar.xz", "a.zip", "a.gz", "a.xz")


def archive(data: bytes) -> None:
    """Safe extraction: the first byte picks the archive kind; nothing may land outside the destination."""
    from flowvision.datasets.utils import extract_archive
    if not data:
        return
    root = os.path.join(_workdir(), "archive")
    shutil.rmtree(root, ignore_errors=True)
    dest = os.path.join(root, "dest", "inner")
    os.makedirs(dest)
    src = os.path.join(root, "src")
    os.makedirs(src)
    path = os.path.join(src, _ARCHIVE_NAMES[data[0] % len(_ARCHIVE_NAMES)])
    with open(path, "wb") as f:
        f.write(data[1:])
    try:
        extract_archive(path, dest)
    finally:
        # a member written anywhere but below dest is an escape, even when extraction then failed
        outside = [os.path.join(d, n) for d, _, names in os.walk(os.path.join(root, "dest"))
                   for n in names if not os.path.join(d, n).startswith(dest + os.sep)]
        links = [os.path.join(d, n) for d, dirs, names in os.walk(dest) for n in dirs + names
                 if os.path.islink(os.path.join(d, n))
                 and not os.path.realpath(os.path.join(d, n)).startswith(os.path.realpath(dest) + os.sep)]
        if outside or links or sorted(os.listdir(src)) != [os.path.basename(path)]:
            raise AssertionError(f"archive extraction escaped the destination: {outside + links}")


# --------------------------------------------------------------------------------------------- manifest

def manifest(data: bytes) -> None:
    from flowvision.hub import manifest as m
    path = _as_file(data, "manifest.json")
    m._cache.clear()
    loaded = m.load_manifest(path)
    root = os.path.join(_workdir(), "models")
    for tag in loaded["weights"]:
        for s in loaded["weights"][tag]["sources"]:
            if s["kind"] == "package":
                continue
            _, dst, _ = m._source_target(s, model_dir=root)
            if not os.path.abspath(dst).startswith(os.path.abspath(root) + os.sep):
                raise AssertionError(f"a valid manifest source caches outside the model directory: {dst}")


# --------------------------------------------------------------------------------------------- HTTP resume

_BODY = bytes(range(256)) * 8  # the file the server holds (2 KiB)
_STATUSES = (200, 206, 206, 206, 416, 503, 200, 404)


class _ScriptedServer:
    """A raw HTTP/1.1 server on 127.0.0.1 that answers each request with the next scripted reply (bytes)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.replies = []
        self.lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            conn, _ = self.sock.accept()
            with conn:
                conn.settimeout(2)
                try:
                    req = b""
                    while b"\r\n\r\n" not in req and len(req) < 65536:
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        req += chunk
                    with self.lock:
                        reply = self.replies.pop(0) if self.replies else b"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n"
                    conn.sendall(reply)
                except OSError:
                    pass


_server = None


def _reply(fdp_bytes: bytes, pos: int) -> Tuple[bytes, int]:
    """Build one HTTP reply from the fuzz bytes: status, Content-Range, Content-Length and body slice."""
    def take(n):
        nonlocal pos
        out = fdp_bytes[pos:pos + n]
        pos += n
        return out + b"\0" * (n - len(out))
    ctl, a, b, c = take(1)[0], take(1)[0], int.from_bytes(take(2), "little"), int.from_bytes(take(2), "little")
    status = _STATUSES[ctl % len(_STATUSES)]
    start = min(a * 16, len(_BODY))
    end = min(len(_BODY), start + b % (len(_BODY) + 64))
    body = _BODY[start:end]
    if ctl & 0x08:
        body = body[: len(body) // 2] + bytes([c & 0xFF]) + body[len(body) // 2 + 1:]  # corrupt a byte
    head = [f"HTTP/1.1 {status} X"]
    raw_len = take(1)[0]
    if ctl & 0x10:  # a fuzzed Content-Range text
        head.append("Content-Range: " + take(raw_len % 24).decode("latin-1").replace("\r", "").replace("\n", ""))
    elif status in (206, 416):
        total = "*" if ctl & 0x20 else str(len(_BODY) + (c % 5) - 2)
        head.append(f"Content-Range: bytes {start}-{max(end - 1, start)}/{total}" if status == 206
                    else f"Content-Range: bytes */{total}")
    if ctl & 0x40:
        head.append("Content-Length: " + take(raw_len % 12).decode("latin-1").replace("\r", "").replace("\n", ""))
    else:
        head.append(f"Content-Length: {len(body) + (c % 3 if ctl & 0x80 else 0)}")
    if c & 0x100:
        head.append('ETag: "v1"')
    head.append("Connection: close")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body, pos


def http_resume(data: bytes) -> None:
    """Resume a download against malformed Range/Content-Length answers: the result is the right file or an error."""
    import hashlib
    global _server
    from flowvision.hub.download import download_url_to_file
    from flowvision.hub.errors import DownloadError
    if _server is None:
        _server = _ScriptedServer()
    root = os.path.join(_workdir(), "dl")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    dst = os.path.join(root, "w.bin")
    pos = 1
    partial_len = (data[0] * 9) % (len(_BODY) + 1) if data else 0
    if partial_len:
        with open(dst + ".partial", "wb") as f:
            f.write(_BODY[:partial_len])
    replies = []
    while pos < len(data) and len(replies) < 6:
        r, pos = _reply(data, pos)
        replies.append(r)
    with _server.lock:
        _server.replies[:] = replies
    sha = hashlib.sha256(_BODY).hexdigest()
    with _download_env():
        _download_checked(download_url_to_file, DownloadError, dst, sha)


@contextlib.contextmanager
def _download_env():
    """Fast, online download settings for one call; the caller's environment is restored afterwards (the replay
    test runs inside pytest, where a leaked FLOWVISION_DOWNLOAD_MAX_BACKOFF=0 would change later tests)."""
    saved = dict(os.environ)
    os.environ.update(FLOWVISION_DOWNLOAD_RETRIES="3", FLOWVISION_DOWNLOAD_BACKOFF="0",
                      FLOWVISION_DOWNLOAD_MAX_BACKOFF="0", FLOWVISION_DOWNLOAD_READ_TIMEOUT="2",
                      FLOWVISION_DOWNLOAD_CONNECT_TIMEOUT="2")
    os.environ.pop("FLOWVISION_OFFLINE", None)
    os.environ.pop("HF_HUB_OFFLINE", None)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _download_checked(download_url_to_file, DownloadError, dst, sha) -> None:
    try:
        download_url_to_file(f"http://127.0.0.1:{_server.port}/w.bin", dst, progress=False, sha256=sha)
    except DownloadError:
        if os.path.exists(dst):
            raise AssertionError("a failed download left a file at the final path")
        return
    with open(dst, "rb") as f:
        if f.read() != _BODY:
            raise AssertionError("download returned a file with other bytes")


def _errors() -> Dict[str, Tuple[Type[BaseException], ...]]:
    from flowvision.datasets.utils import CorruptDatasetError, UnsafeArchiveError
    from flowvision.hub.errors import CheckpointError, HubError
    return {
        "torch_zip": (CheckpointError,), "torch_legacy": (CheckpointError,), "safetensors": (CheckpointError,),
        "npz": (CheckpointError,),
        # torchvision's decoders raise RuntimeError for undecodable bytes; flowvision.io keeps that contract
        # (an empty input tensor is an argument error: ValueError)
        "image": (RuntimeError, ValueError),
        "idx": (CorruptDatasetError,), "dataset_pickle": (CorruptDatasetError,),
        "archive": (CorruptDatasetError, UnsafeArchiveError),
        "manifest": (HubError,),
        "http_resume": (),  # DownloadError is handled inside the target: anything escaping is a bug
    }


TARGETS: Dict[str, Callable[[bytes], None]] = {
    "torch_zip": torch_zip, "torch_legacy": torch_legacy, "safetensors": safetensors, "npz": npz, "image": image,
    "idx": idx, "dataset_pickle": dataset_pickle, "archive": archive, "manifest": manifest,
    "http_resume": http_resume,
}

# the modules whose Python code atheris instruments for coverage feedback, per target
INSTRUMENT = {
    "torch_zip": ["flowvision.hub", "zipfile"], "torch_legacy": ["flowvision.hub"],
    "safetensors": ["flowvision.hub"], "npz": ["flowvision.hub", "zipfile", "numpy.lib.format"],
    "image": ["flowvision.io", "PIL"], "idx": ["flowvision.datasets"],
    "dataset_pickle": ["flowvision.datasets", "flowvision.hub"],
    "archive": ["flowvision.datasets", "tarfile", "zipfile", "gzip", "lzma", "bz2"],
    "manifest": ["flowvision.hub", "json"], "http_resume": ["flowvision.hub", "requests", "urllib3", "http.client"],
}


def call(name: str, data: bytes) -> None:
    """Run target ``name`` on ``data``; swallow only its documented errors."""
    allowed = _errors()[name]
    try:
        TARGETS[name](data)
    except allowed:
        pass


def allowed_errors(name: str) -> Tuple[Type[BaseException], ...]:
    return _errors()[name]

