"""torchvision.io's video reading (``read_video``, ``read_video_timestamps``, ``VideoReader``) on OpenCV's FFmpeg
decoder (opencv is already a dependency).

Frames come back as uint8 RGB tensors, as torchvision returns them.  Differences, all stated in the errors they raise:
OpenCV decodes no audio (``aframes`` is the empty (1, 0) float tensor torchvision returns for a file without an audio
stream, and ``VideoReader(stream="audio")`` raises), and it does not expose the stream's time base, so explicit
bounds must be given in seconds (``pts_unit="sec"``); the default ``pts_unit="pts"`` with the default bounds (the
whole video) works.
"""
from __future__ import annotations

import math
import os
from fractions import Fraction
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

__all__ = ["read_video", "read_video_timestamps", "VideoReader"]


def _cv2():
    import cv2
    return cv2


def _open(filename):
    cv2 = _cv2()
    path = os.fspath(filename)
    if not os.path.exists(path):
        raise RuntimeError(f"File not found: {path}")
    cap = cv2.VideoCapture(path)
    if not cap.isOpened():
        raise RuntimeError(f"Could not open {path!r} as a video (OpenCV/FFmpeg cannot decode it)")
    return cap


def _frames(cap):
    """(timestamp in seconds, RGB frame) for every decoded frame, in order."""
    cv2 = _cv2()
    fps = cap.get(cv2.CAP_PROP_FPS) or 0.0
    index = 0
    while True:
        ok, frame = cap.read()
        if not ok:
            return
        msec = cap.get(cv2.CAP_PROP_POS_MSEC)
        t = msec / 1000.0 if msec or index == 0 or not fps else index / fps
        yield t, cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
        index += 1


def _bounds_in_seconds(start_pts, end_pts, pts_unit):
    if pts_unit not in ("pts", "sec"):
        raise ValueError(f"pts_unit must be 'pts' or 'sec', got {pts_unit!r}")
    end = math.inf if end_pts is None else float(end_pts)
    start = float(start_pts)
    if pts_unit == "pts" and (start != 0 or end != math.inf):
        raise NotImplementedError("explicit bounds in stream time-base units (pts_unit='pts') need the stream's time "
                                  "base, which OpenCV does not expose; give them in seconds with pts_unit='sec'")
    if end < start:
        raise ValueError(f"end_pts should be larger than start_pts, got start_pts={start_pts} and end_pts={end_pts}")
    return start, end


def read_video(filename: Union[str, os.PathLike], start_pts: Union[int, float, Fraction] = 0,
               end_pts: Optional[Union[int, float, Fraction]] = None, pts_unit: str = "pts",
               output_format: str = "THWC") -> Tuple[Any, Any, Dict[str, Any]]:
    """Decode the frames with timestamps in [start_pts, end_pts].

    Returns ``(vframes, aframes, info)``: vframes is a uint8 tensor (T, H, W, 3) (``output_format="TCHW"``:
    (T, 3, H, W)), aframes the empty (1, 0) float32 tensor (no audio decoding), info ``{"video_fps": fps}``.
    """
    from ..backend import _creation as C
    from ..backend import float32
    output_format = output_format.upper()
    if output_format not in ("THWC", "TCHW"):
        raise ValueError(f"output_format should be either 'THWC' or 'TCHW', got {output_format}.")
    start, end = _bounds_in_seconds(start_pts, end_pts, pts_unit)
    cap = _open(filename)
    try:
        fps = float(cap.get(_cv2().CAP_PROP_FPS) or 0.0)
        eps = 1e-6
        kept = [f for t, f in _frames(cap) if start - eps <= t <= end + eps]
    finally:
        cap.release()
    if kept:
        arr = np.stack(kept)
    else:
        arr = np.zeros((0, 1, 1, 3), np.uint8)
    if output_format == "TCHW":
        arr = np.ascontiguousarray(arr.transpose(0, 3, 1, 2))
    return C.tensor(arr), C.empty((1, 0), dtype=float32), {"video_fps": fps}


def read_video_timestamps(filename: Union[str, os.PathLike], pts_unit: str = "pts") -> Tuple[List[Fraction], float]:
    """(timestamps of every frame, fps); timestamps are ``Fraction`` seconds (``pts_unit="sec"``)."""
    if pts_unit != "sec":
        raise NotImplementedError("timestamps in stream time-base units (pts_unit='pts') need the stream's time base, "
                                  "which OpenCV does not expose; use pts_unit='sec'")
    cap = _open(filename)
    try:
        fps = float(cap.get(_cv2().CAP_PROP_FPS) or 0.0)
        ts = [Fraction(t).limit_denominator(1_000_000) for t, _ in _frames(cap)]
    finally:
        cap.release()
    return ts, fps


class VideoReader:
    """Frame-by-frame reader: ``next(reader)`` gives ``{"data": uint8 (3, H, W) tensor, "pts": seconds}``;
    ``seek(seconds)`` jumps to the first frame at or after that time; ``get_metadata()`` gives torchvision's dict."""

    def __init__(self, src: Union[str, bytes, os.PathLike], stream: str = "video", num_threads: int = 0) -> None:
        if not isinstance(src, (str, bytes, os.PathLike)):
            raise TypeError("VideoReader here reads files: pass a path (bytes/tensor sources are not supported)")
        self._path = os.fspath(src)
        self._cap = _open(self._path)
        self._fps = float(self._cap.get(_cv2().CAP_PROP_FPS) or 0.0)
        n = int(self._cap.get(_cv2().CAP_PROP_FRAME_COUNT) or 0)
        self._duration = n / self._fps if self._fps else 0.0
        self.set_current_stream(stream)
        self._iter = _frames(self._cap)
        self._pending: Optional[Tuple[float, Any]] = None  # a frame read ahead by seek()

    def set_current_stream(self, stream: str) -> bool:
        kind = stream.split(":")[0]
        if kind != "video":
            raise NotImplementedError(f"stream {stream!r}: OpenCV decodes video streams only")
        self._stream = stream
        return True

    def __iter__(self):
        return self

    def __next__(self) -> dict:
        from ..backend import _creation as C
        if self._pending is not None:
            t, frame = self._pending
            self._pending = None
        else:
            t, frame = next(self._iter)  # StopIteration ends the loop, as torchvision's reader does
        return {"data": C.tensor(np.ascontiguousarray(frame.transpose(2, 0, 1))), "pts": float(t)}

    def seek(self, time_s: float, keyframes_only: bool = False) -> "VideoReader":
        """Position the reader on the first frame whose timestamp is >= ``time_s`` (decoding from the start: exact)."""
        self._cap.release()
        self._cap = _open(self._path)
        self._iter = _frames(self._cap)
        self._pending = None
        for t, frame in self._iter:
            if t >= time_s - 1e-6:
                self._pending = (t, frame)
                break
        return self

    def get_metadata(self) -> dict:
        return {"video": {"duration": [self._duration], "fps": [self._fps]}}

    def __del__(self):
        cap = getattr(self, "_cap", None)
        if cap is not None:
            cap.release()
