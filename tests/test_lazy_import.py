"""OpenCV is imported on the first fast path that needs it, once, even when several threads get there together."""
import subprocess
import sys
import textwrap


def test_cv2_imports_on_first_use_and_threads_see_the_whole_module():
    code = textwrap.dedent("""
        import sys, threading
        import numpy as np
        import flowvision.transforms, flowvision.data
        from flowvision.transforms import _functional_numpy as F
        assert "cv2" not in sys.modules, "cv2 was imported with the package"
        start, errors = threading.Barrier(8), []

        def work():
            start.wait()
            try:
                planes = F.to_planar(np.arange(8 * 8 * 3, dtype=np.uint8).reshape(8, 8, 3))
                assert planes.shape == (3, 8, 8) and planes[1, 0, 0] == 1, planes.shape
            except Exception as e:  # noqa: BLE001 - reported to the parent
                errors.append(repr(e))

        threads = [threading.Thread(target=work) for _ in range(8)]
        [t.start() for t in threads]
        [t.join(60) for t in threads]
        assert not errors, errors
        assert "cv2" in sys.modules
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
