"""download=True against a local HTTP server; safe extraction of crafted archives; offline errors."""
import functools
import gzip
import http.server
import io
import os
import tarfile
import threading
import zipfile

import numpy as np
import pytest

import flowvision.datasets as fds
from flowvision.datasets.utils import (CorruptDatasetError, DatasetNotFoundError, UnsafeArchiveError,
                                       download_and_extract_archive, extract_archive)
from test_datasets_fixtures import make_cifar, make_mnist, md5, with_md5s


@pytest.fixture
def server(tmp_path, monkeypatch):
    """A static file server on 127.0.0.1 over ``tmp_path/served``; ``.hits`` counts GET requests per path."""
    served = tmp_path / "served"
    served.mkdir()
    hits = {}

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            hits[self.path] = hits.get(self.path, 0) + 1
            return super().do_GET()

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(served)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("FLOWVISION_DOWNLOAD_RETRIES", "0")
    monkeypatch.delenv("FLOWVISION_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    httpd.dir, httpd.hits = served, hits
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def _tar_gz(src_dir, arcname, dst):
    with tarfile.open(dst, "w:gz") as tar:
        tar.add(src_dir, arcname=arcname)
    return dst


def _cifar_class(server, tmp_path):
    build = tmp_path / "build"
    folder = make_cifar(str(build))
    archive = _tar_gz(folder, "cifar-10-batches-py", str(server.dir / "cifar-10-python.tar.gz"))
    cls = with_md5s(fds.CIFAR10, folder)
    return type("CIFAR10", (cls,), {"url": server.url + "cifar-10-python.tar.gz", "tgz_md5": md5(archive)}), folder


def test_cifar_download_verify_extract_and_cache(server, tmp_path):
    cls, folder = _cifar_class(server, tmp_path)
    root = tmp_path / "root"
    ds = cls(str(root), train=True, download=True)
    ref = cls(str(tmp_path / "build"), train=True)
    assert len(ds) == len(ref) and ds.targets == ref.targets
    np.testing.assert_array_equal(ds.data, ref.data)
    assert server.hits == {"/cifar-10-python.tar.gz": 1}
    assert sorted(os.listdir(root)) == ["cifar-10-batches-py", "cifar-10-python.tar.gz"]  # no temporary files left
    cls(str(root), train=False, download=True)  # verified files: no second download
    assert server.hits == {"/cifar-10-python.tar.gz": 1}


def test_tampered_archive_is_rejected(server, tmp_path):
    cls, _ = _cifar_class(server, tmp_path)
    with open(server.dir / "cifar-10-python.tar.gz", "ab") as f:
        f.write(b"tampered")
    root = tmp_path / "root"
    with pytest.raises(DatasetNotFoundError, match="md5 mismatch") as e:
        cls(str(root), download=True)
    assert "cifar-10-python.tar.gz" in str(e.value) and cls.tgz_md5 in str(e.value)
    assert os.listdir(root) == []  # nothing half-written


def test_mnist_mirrors_gz_and_second_call(server, tmp_path):
    raw = make_mnist(str(tmp_path / "build"))
    resources = []
    for name in sorted(os.listdir(raw)):
        with open(os.path.join(raw, name), "rb") as f:
            data = gzip.compress(f.read())
        (server.dir / (name + ".gz")).write_bytes(data)
        resources.append((name + ".gz", md5(server.dir / (name + ".gz"))))
    cls = type("MNIST", (fds.MNIST,), {"mirrors": [server.url + "missing/", server.url], "resources": resources})
    ds = cls(str(tmp_path / "root"), download=True)
    ref = cls(str(tmp_path / "build"))
    np.testing.assert_array_equal(ds.data.numpy(), ref.data.numpy())
    got = dict(server.hits)
    assert all(got[f"/{n}"] == 1 for n, _ in resources) and all(got[f"/missing/{n}"] == 1 for n, _ in resources)
    cls(str(tmp_path / "root"), train=False, download=True)
    assert dict(server.hits) == got


def test_offline_error_names_every_file(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOWVISION_OFFLINE", "1")
    with pytest.raises(DatasetNotFoundError) as e:
        fds.MNIST(str(tmp_path), download=True)
    msg = str(e.value)
    for name, checksum in fds.MNIST.resources:
        assert fds.MNIST.mirrors[0] + name in msg and checksum in msg
        assert os.path.join(str(tmp_path), "MNIST", "raw", name) in msg
    assert len(e.value.missing) == 4 and "FLOWVISION_OFFLINE" in msg


def test_unreachable_server_names_url_and_destination(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOWVISION_DOWNLOAD_RETRIES", "0")
    monkeypatch.delenv("FLOWVISION_OFFLINE", raising=False)
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there
    cls = type("C", (fds.CIFAR10,), {"url": f"http://127.0.0.1:{port}/cifar-10-python.tar.gz"})
    with pytest.raises(DatasetNotFoundError) as e:
        cls(str(tmp_path), download=True)
    msg = str(e.value)
    assert cls.url in msg and os.path.join(str(tmp_path), "cifar-10-python.tar.gz") in msg and cls.tgz_md5 in msg
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# crafted archives

def _tar_with(path, members):
    with tarfile.open(path, "w") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _file(name, data=b"x"):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _link(name, target, kind=tarfile.SYMTYPE):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


@pytest.mark.parametrize("evil", [
    [_file("ok.txt"), _file("../escape.txt")],
    [_file("/tmp/flowvision-absolute-escape.txt")],
    [_file("a/../../escape.txt")],
    [_link("link", "../../outside")],
    [_link("link", "/etc/passwd")],
    [_link("sub/hard", "../../escape", tarfile.LNKTYPE)],
    [_link("dev", "", tarfile.CHRTYPE)],
    [_link("fifo", "", tarfile.FIFOTYPE)],
], ids=["dotdot", "absolute", "nested-dotdot", "symlink-out", "symlink-abs", "hardlink-out", "chardev", "fifo"])
def test_unsafe_tar_is_refused(tmp_path, evil):
    archive = _tar_with(str(tmp_path / "evil.tar"), evil)
    dest = tmp_path / "dest" / "root"
    with pytest.raises(UnsafeArchiveError):
        extract_archive(archive, str(dest))
    assert os.listdir(dest) == [] and sorted(os.listdir(tmp_path / "dest")) == ["root"]
    assert not os.path.exists("/tmp/flowvision-absolute-escape.txt")


def test_safe_links_inside_root_are_kept(tmp_path):
    archive = _tar_with(str(tmp_path / "ok.tar"), [_file("d/a.txt", b"hello"), _link("d/b.txt", "a.txt")])
    extract_archive(archive, str(tmp_path / "out"))
    assert (tmp_path / "out" / "d" / "b.txt").read_bytes() == b"hello"


def test_unsafe_zip_is_refused(tmp_path):
    for name in ("../escape.txt", "/abs.txt", "a/../../x.txt", "C:/win.txt"):
        path = tmp_path / "evil.zip"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("fine.txt", b"1")
            zf.writestr(name, b"2")
        with pytest.raises(UnsafeArchiveError):
            extract_archive(str(path), str(tmp_path / "out"))
        assert os.listdir(tmp_path / "out") == []
    link = zipfile.ZipInfo("link")
    link.external_attr = (0o120777 << 16)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(link, b"../../etc/passwd")
    with pytest.raises(UnsafeArchiveError, match="link"):
        extract_archive(str(path), str(tmp_path / "out"))


def test_corrupt_archives_leave_nothing(tmp_path):
    src = tmp_path / "src"
    (src / "d").mkdir(parents=True)
    (src / "d" / "big.bin").write_bytes(os.urandom(200_000))
    archive = _tar_gz(str(src / "d"), "d", str(tmp_path / "a.tar.gz"))
    data = open(archive, "rb").read()
    open(archive, "wb").write(data[: len(data) // 2])
    with pytest.raises(CorruptDatasetError, match="a.tar.gz"):
        extract_archive(archive, str(tmp_path / "out"))
    assert os.listdir(tmp_path / "out") == []
    zpath = tmp_path / "a.zip"
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("d/x.bin", os.urandom(50_000))
    raw = bytearray(zpath.read_bytes())
    raw[100:140] = b"\x00" * 40
    zpath.write_bytes(bytes(raw))
    with pytest.raises(CorruptDatasetError, match="a.zip"):
        extract_archive(str(zpath), str(tmp_path / "out2"))
    assert os.listdir(tmp_path / "out2") == []
    gz = tmp_path / "f.gz"
    gz.write_bytes(gzip.compress(os.urandom(10_000))[:-20])
    with pytest.raises(CorruptDatasetError, match="f.gz"):
        extract_archive(str(gz), str(tmp_path / "out3"))
    assert os.listdir(tmp_path / "out3") == []


def test_path_traversal_archive_via_download(server, tmp_path):
    archive = _tar_with(str(server.dir / "evil.tar"), [_file("../escape.txt")])
    with pytest.raises(UnsafeArchiveError):
        download_and_extract_archive(server.url + "evil.tar", str(tmp_path / "root"), md5=md5(archive))
    assert not (tmp_path / "escape.txt").exists()
