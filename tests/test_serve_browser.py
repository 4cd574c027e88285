"""The ``flowvision serve`` web page in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``) driven by selenium uploads the example photo and reads the labels the page shows.

The screenshot after a detection request is written to ``<tmp>/serve_detection.png`` (and copied to
``$FLOWVISION_ARTIFACTS_DIR`` when set, for CI to keep).
"""
import os
import shutil

import numpy as np
import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAT = os.path.join(ROOT, "examples", "chelsea.jpg")
DET = "ssdlite320_mobilenet_v3_large"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def _browser_or_skip():
    missing = [n for n, p in (("chromium", CHROMIUM), ("chromedriver", CHROMEDRIVER)) if not p]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (pip)")
    if missing:
        why = f"needs {', '.join(missing)}: apt-get install -y chromium chromium-driver; pip install selenium"
        if os.environ.get("CI"):
            pytest.fail(why)  # CI installs them: a skip there would hide a broken page
        pytest.skip(why)


@pytest.fixture(scope="module")
def driver():
    _browser_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    opts = Options()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1100,1000",
              "--disable-extensions", "--no-first-run"):
        opts.add_argument(a)
    drv = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    drv.set_page_load_timeout(60)
    try:
        yield drv
    finally:
        drv.quit()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from safetensors.numpy import save_file

    from flowvision import backend as flow
    from flowvision.models import get_model
    from flowvision.serve._process import ServerProcess
    flow.manual_seed(0)
    det = get_model(DET, weights=None, weights_backbone=None)
    ckpt = str(tmp_path_factory.mktemp("serve_browser") / "det.safetensors")
    save_file({k: np.ascontiguousarray(v.numpy()) for k, v in det.state_dict().items()}, ckpt)
    # the default model with its offline weights, and a random-weight detector from a checkpoint
    args = ["--model", DET, "--checkpoint", ckpt, "--model", "tf_efficientnet_lite0", "--max-batch", "1",
            "--threads", "1", "--log-level", "warning"]
    with ServerProcess(args) as srv:
        yield srv


def _upload(driver, path, model):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
    wait = WebDriverWait(driver, 60)
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#model option")) == 2)
    Select(driver.find_element(By.ID, "model")).select_by_value(model)
    driver.find_element(By.ID, "file").send_keys(path)
    wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-state") in ("done", "error"))
    assert driver.find_element(By.TAG_NAME, "body").get_attribute("data-state") == "done", \
        driver.find_element(By.ID, "status").text


def test_page_classifies_the_example_photo(server, driver):
    from selenium.webdriver.common.by import By

    from flowvision.models._predict import classify
    driver.get(server.url + "/")
    _upload(driver, CAT, "tf_efficientnet_lite0")
    top1 = driver.find_element(By.ID, "top1").text
    expected = classify([CAT], "tf_efficientnet_lite0", topk=5)[0][1]
    assert top1 == expected[0][0] and "cat" in top1
    rows = driver.find_elements(By.CSS_SELECTOR, "#result .row")
    assert [r.find_element(By.CLASS_NAME, "label").text for r in rows] == [label for label, _, _ in expected]
    widths = [float(r.find_element(By.CLASS_NAME, "bar").value_of_css_property("width")[:-2]) for r in rows]
    assert widths == sorted(widths, reverse=True) and widths[0] > widths[-1]  # bars scale with the scores
    assert "ms server" in driver.find_element(By.ID, "latency").text


def test_page_draws_detection_boxes_and_screenshot(server, driver, tmp_path):
    from PIL import Image
    from selenium.webdriver.common.by import By
    driver.get(server.url + "/")
    _upload(driver, CAT, DET)
    with open(CAT, "rb") as f:
        api = httpx.post(server.url + "/v1/predict", files=[("file", ("c.jpg", f.read(), "image/jpeg"))],
                         data={"model": DET}, timeout=60).json()["predictions"][0]
    assert driver.find_element(By.ID, "result").text == f"{len(api['boxes'])} boxes"
    canvas = driver.find_element(By.ID, "canvas")
    assert canvas.is_displayed()
    with Image.open(CAT) as im:
        size = im.size
    assert (int(canvas.get_attribute("width")), int(canvas.get_attribute("height"))) == size
    # the boxes are on the canvas: it differs from the same photo drawn plainly by the same browser
    changed = driver.execute_async_script(
        "const done = arguments[arguments.length - 1]; const img = new Image();"
        "img.onload = () => { const c = document.getElementById('canvas'); const o = document.createElement('canvas');"
        " o.width = c.width; o.height = c.height; const octx = o.getContext('2d'); octx.drawImage(img, 0, 0);"
        " const a = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        " const b = octx.getImageData(0, 0, c.width, c.height).data; let n = 0;"
        " for (let i = 0; i < a.length; i += 4) if (a[i] !== b[i] || a[i + 1] !== b[i + 1]) n++; done(n); };"
        "img.src = URL.createObjectURL(document.getElementById('file').files[0]);")
    assert changed > 100
    shot = tmp_path / "serve_detection.png"
    assert driver.save_screenshot(str(shot))
    with Image.open(shot) as im:
        arr = np.asarray(im.convert("RGB"))
    assert arr.shape[0] > 300 and arr.std() > 10
    print(f"screenshot: {shot}")
    if os.environ.get("FLOWVISION_ARTIFACTS_DIR"):
        os.makedirs(os.environ["FLOWVISION_ARTIFACTS_DIR"], exist_ok=True)
        shutil.copy(shot, os.environ["FLOWVISION_ARTIFACTS_DIR"])
