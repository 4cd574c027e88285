"""Memory-safety regressions of the compiled kernels (found with an AddressSanitizer build).

Each case runs in a subprocess, so an out-of-bounds access that crashes (SIGSEGV/SIGFPE) fails the
test instead of taking the whole pytest run down.
"""
import subprocess
import sys
import textwrap


def _run(code):
    src = "import numpy as np\nfrom flowvision.backend import _C\n" + textwrap.dedent(code) + "\nprint('ok')\n"
    r = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), (r.returncode, r.stdout, r.stderr[-3000:])


def test_roi_pool_backward_ignores_out_of_range_argmax():
    # argmax is caller supplied: entries outside [0, H*W) are skipped, like max_pool2d_backward does, so no
    # write lands outside the gradient buffer.
    _run("""
        for threads in (1, 2, 3):
            _C.set_num_threads(threads)
            x = np.arange(2 * 3 * 4 * 4, dtype=np.float32).reshape(2, 3, 4, 4)
            rois = np.array([[0, 0, 0, 3, 3], [1, 1, 1, 2, 3]], np.float32)
            y, am = _C.roi_pool_forward(x, rois, 1.0, 2, 2)
            gy = np.ones_like(y)
            ref = _C.roi_pool_backward(gy, am, rois, [2, 3, 4, 4])
            bad = am.copy()
            bad[0, 0, 0, 0] = 16          # == H * W: one past the plane
            bad[0, 1, 1, 1] = 1 << 40     # far outside the buffer
            bad[1, 2, 0, 1] = -5
            got = _C.roi_pool_backward(gy, bad, rois, [2, 3, 4, 4])
            want = ref.copy()
            want[0, 0].flat[am[0, 0, 0, 0]] -= 1
            want[0, 1].flat[am[0, 1, 1, 1]] -= 1
            want[1, 2].flat[am[1, 2, 0, 1]] -= 1
            np.testing.assert_array_equal(got, want)
            got64 = _C.roi_pool_backward(gy.astype(np.float64), bad, rois.astype(np.float64), [2, 3, 4, 4])
            np.testing.assert_array_equal(got64, want)
    """)


def test_roi_align_on_empty_feature_map():
    # H == 0 or W == 0: bilinear() clamped to H - 1 == -1 and read/wrote before the plane
    _run("""
        rois = np.array([[0, -1, -1, 0, 0], [0, 0, 0, 3, 3], [0, -0.5, -0.5, 0.2, 0.2]], np.float32)
        for threads in (1, 2):
            _C.set_num_threads(threads)
            for shape in [(1, 2, 0, 5), (1, 2, 5, 0), (1, 2, 0, 0)]:
                for aligned in (False, True):
                    for dt in (np.float32, np.float64):
                        x = np.ones(shape, dt)
                        y = _C.roi_align_forward(x, rois.astype(dt), 1.0, 2, 3, 2, aligned)
                        assert y.shape == (3, 2, 2, 3)
                        assert not y.any()
                        gx = _C.roi_align_backward(np.ones((3, 2, 2, 3), dt), rois.astype(dt), list(shape), 1.0, 2,
                                                   aligned)
                        assert gx.shape == shape
    """)


def test_col2im_zero_kernel_size_raises():
    # kernel_size 0 was an integer division by zero (SIGFPE) before the shape validation ran
    _run("""
        import pytest
        for k in ([0, 2], [3, 0], [0, 0]):
            with pytest.raises(ValueError, match="kernel_size"):
                _C.col2im(np.ones((1, 4, 9), np.float32), [3, 3], k, [1, 1], [0, 0], [1, 1])
    """)
