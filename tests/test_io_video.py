"""io.read_video / read_video_timestamps / VideoReader on a small generated video.

torchvision 0.29 (the installed reference) no longer ships video decoding, so the reference is an independent
frame-by-frame OpenCV decode of the same file plus the frames that were written (colour order and content)."""
from fractions import Fraction

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

import flowvision.io as fio  # noqa: E402

FPS, T, H, W = 10, 12, 32, 48


def _frame(i):
    img = np.zeros((H, W, 3), np.uint8)  # RGB
    img[..., 0] = 20 * i            # red ramps with the frame index
    img[:, : W // 2, 1] = 200       # green on the left half
    img[H // 2:, :, 2] = 120        # blue on the bottom half
    return img


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("vid") / "clip.avi")
    wr = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"MJPG"), FPS, (W, H))
    assert wr.isOpened()
    for i in range(T):
        wr.write(cv2.cvtColor(_frame(i), cv2.COLOR_RGB2BGR))
    wr.release()
    return path


def _reference(path):
    cap = cv2.VideoCapture(path)
    out = []
    while True:
        ok, f = cap.read()
        if not ok:
            break
        out.append(cv2.cvtColor(f, cv2.COLOR_BGR2RGB))
    cap.release()
    return np.stack(out)


def test_read_video_whole_clip(video):
    v, a, info = fio.read_video(video)
    ref = _reference(video)
    assert tuple(v.shape) == (T, H, W, 3) and str(v.dtype).endswith("uint8")
    np.testing.assert_array_equal(v.numpy(), ref)
    written = np.stack([_frame(i) for i in range(T)]).astype(np.int16)
    assert np.abs(v.numpy().astype(np.int16) - written).mean() < 4  # RGB order and content survive MJPEG
    assert tuple(a.shape) == (1, 0) and info == {"video_fps": float(FPS)}
    tchw, _, _ = fio.read_video(video, output_format="TCHW")
    np.testing.assert_array_equal(tchw.numpy(), ref.transpose(0, 3, 1, 2))


def test_read_video_seconds_range_and_timestamps(video):
    v, _, _ = fio.read_video(video, start_pts=0.3, end_pts=0.6, pts_unit="sec")
    np.testing.assert_array_equal(v.numpy(), _reference(video)[3:7])  # both ends included, as torchvision
    ts, fps = fio.read_video_timestamps(video, pts_unit="sec")
    assert fps == FPS and ts == [Fraction(i, FPS) for i in range(T)]
    empty, _, _ = fio.read_video(video, start_pts=5.0, end_pts=6.0, pts_unit="sec")
    assert empty.shape[0] == 0


def test_video_reader(video):
    r = fio.VideoReader(video)
    frames = list(r)
    ref = _reference(video)
    assert len(frames) == T
    np.testing.assert_array_equal(np.stack([f["data"].numpy() for f in frames]), ref.transpose(0, 3, 1, 2))
    assert [round(f["pts"], 6) for f in frames] == [round(i / FPS, 6) for i in range(T)]
    md = r.get_metadata()["video"]
    assert md["fps"] == [float(FPS)] and abs(md["duration"][0] - T / FPS) < 1e-9
    first = next(r.seek(0.55))
    assert abs(first["pts"] - 0.6) < 1e-6
    np.testing.assert_array_equal(first["data"].numpy(), ref[6].transpose(2, 0, 1))


def test_video_errors(video, tmp_path):
    with pytest.raises(RuntimeError, match="not found"):
        fio.read_video(str(tmp_path / "missing.mp4"))
    bad = tmp_path / "bad.avi"
    bad.write_bytes(b"not a video")
    with pytest.raises(RuntimeError, match="Could not open"):
        fio.read_video(str(bad))
    with pytest.raises(NotImplementedError, match="pts_unit='sec'"):
        fio.read_video(video, start_pts=100, pts_unit="pts")
    with pytest.raises(ValueError, match="end_pts"):
        fio.read_video(video, start_pts=2, end_pts=1, pts_unit="sec")
    with pytest.raises(NotImplementedError, match="video streams only"):
        fio.VideoReader(video, stream="audio")
    with pytest.raises(ValueError, match="output_format"):
        fio.read_video(video, output_format="HWC")
