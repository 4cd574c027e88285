"""The caching allocator behind numpy arrays (flowvision.backend.memory): reuse, zeroing, realloc, limits, threads,
fork, and the environment switch."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import flowvision.backend as flow
from flowvision.backend import memory

try:
    from numpy._core.multiarray import get_handler_name
except ImportError:  # numpy 1.x
    from numpy.core.multiarray import get_handler_name

BIG = 1 << 20  # float64 elements: 8 MiB, well above the 256 KiB the cache starts at


@pytest.fixture
def limit_restored():
    before = memory.cache_limit()
    yield
    memory.set_cache_limit(before)


def test_installed_for_new_arrays():
    assert memory.memory_stats()["installed"] == 1
    assert get_handler_name(np.empty(BIG)) == "flowvision_host_cache"
    assert get_handler_name(flow.randn(512, 512)._data) == "flowvision_host_cache"


def test_freed_block_is_reused_for_the_same_size():
    a = np.empty(BIG)
    address = a.ctypes.data
    before = memory.memory_stats()
    del a
    assert memory.memory_stats()["cached_bytes"] >= before["cached_bytes"] + BIG * 8
    b = np.empty(BIG)
    after = memory.memory_stats()
    assert after["hits"] == before["hits"] + 1
    assert b.ctypes.data == address


def test_zeros_from_a_reused_block_are_zero():
    a = np.empty(BIG)
    a.fill(7.0)
    del a
    hits = memory.memory_stats()["hits"]
    z = np.zeros(BIG)
    assert memory.memory_stats()["hits"] == hits + 1  # the dirty block came back
    assert not z.any()


@pytest.mark.parametrize("n", [1, 1000, BIG])
def test_data_is_64_byte_aligned(n):
    assert np.empty(n, np.uint8).ctypes.data % 64 == 0
    assert np.empty(n).ctypes.data % 64 == 0


@pytest.mark.parametrize("old,new", [(1000, 300000), (300000, 1000), (300000, 700000), (10, 20)])
def test_realloc_keeps_the_values(old, new):
    a = np.arange(old, dtype=np.float64)
    a.resize(new, refcheck=False)  # numpy grows or shrinks the buffer with the handler's realloc
    keep = min(old, new)
    np.testing.assert_array_equal(a[:keep], np.arange(keep, dtype=np.float64))
    if new > old:
        assert not a[old:].any()


def test_limit_zero_returns_blocks_and_empty_cache(limit_restored):
    a = np.empty(BIG)
    del a
    assert memory.memory_stats()["cached_bytes"] > 0
    memory.empty_cache()
    assert memory.memory_stats()["cached_bytes"] == 0
    memory.set_cache_limit(0)
    released = memory.memory_stats()["released"]
    b = np.empty(BIG)
    del b
    stats = memory.memory_stats()
    assert stats["cached_bytes"] == 0 and stats["released"] == released + 1
    with pytest.raises(ValueError, match=">= 0"):
        memory.set_cache_limit(-1)


def test_a_new_size_makes_room_under_the_limit(limit_restored):
    memory.empty_cache()
    block = BIG * 8 + 4096  # the 64-byte header rounds each mapping up by a page
    memory.set_cache_limit(3 * block)
    blocks = [np.empty(BIG) for _ in range(3)]
    del blocks
    assert memory.memory_stats()["cached_bytes"] == 3 * block
    other = np.empty(2 * BIG)  # a size the cache does not hold: cached blocks are released to keep it
    del other
    assert memory.memory_stats()["cached_bytes"] == block + (2 * BIG * 8 + 4096)


def test_arrays_freed_on_other_threads():
    arrays = [np.full(BIG // 4 + i, float(i)) for i in range(64)]
    errors = []

    def worker(chunk):
        try:
            for a in chunk:
                assert a[0] == a[-1]
            chunk.clear()
            for i in range(32):  # threads allocate with numpy's default handler; frees of ours still come here
                np.ones(BIG // 4 + i).sum()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    chunks = [arrays[i::4] for i in range(4)]
    del arrays
    threads = [threading.Thread(target=worker, args=(c,)) for c in chunks]
    for t in threads:
        t.start()
    for i in range(64):
        np.empty(BIG // 4 + i).fill(1.0)
    for t in threads:
        t.join()
    assert not errors
    stats = memory.memory_stats()
    assert stats["cached_bytes"] <= stats["limit_bytes"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork")
def test_fork_child_allocates():
    keep = [np.empty(BIG) for _ in range(4)]
    del keep[:2]
    pid = os.fork()
    if pid == 0:  # the child: reuse and allocate through the inherited cache, then leave without cleanup
        try:
            a = np.zeros(BIG)
            b = np.ones(2 * BIG)
            os._exit(0 if a.sum() == 0 and b.sum() == 2 * BIG else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def _child_handler(env_value):
    env = dict(os.environ, FLOWVISION_HOST_CACHE_MB=env_value)
    code = ("import warnings, numpy as np\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    import flowvision.backend as fb\n"
            "try:\n    from numpy._core.multiarray import get_handler_name\n"
            "except ImportError:\n    from numpy.core.multiarray import get_handler_name\n"
            "print(get_handler_name(np.empty(1 << 20)), fb.memory.cache_limit(), len([x for x in w if 'HOST_CACHE' in str(x.message)]))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    name, limit, warned = out.stdout.split()
    return name, int(limit), int(warned)


def test_environment_sets_the_limit_or_turns_the_cache_off():
    assert _child_handler("0")[0] == "default_allocator"
    assert _child_handler("64") == ("flowvision_host_cache", 64 << 20, 0)
    name, limit, warned = _child_handler("lots")
    assert name == "flowvision_host_cache" and limit > 0 and warned == 1
