"""Deterministic mutation fuzzing of flowvision.hub's checkpoint readers.

Small valid checkpoints (torch zip, torch legacy, safetensors, npz) are damaged in a few hundred
ways drawn from a fixed seed: bit flips, truncations, inserted and deleted bytes, huge length
fields, and damage aimed at the zip central directory / end record / local headers. Every damaged
file must either load to the original tensors or raise ``CheckpointError`` whose message names
the file — never a raw ``zipfile.BadZipFile``/``OSError``/``struct.error``/``MemoryError``...
Formats without checksums (legacy torch, safetensors) may also load *different* values when only
tensor bytes were overwritten; that is undetectable without a hash (the manifest's sha256 covers
it), so the test then only requires a well-formed result: the same names, shapes and dtypes.
"""
import io
import pickle
import pickletools
import random
import struct
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

from flowvision.hub import CheckpointError, load_checkpoint

torch = pytest.importorskip("torch")

SEED = 20261125
PER_FORMAT = 200  # 4 formats x 200 = 800 damaged files in about a second
FORMATS = ("torch_zip", "torch_legacy", "safetensors", "npz")
_HUGE = (2 ** 63 - 1, 2 ** 62, 2 ** 40, 2 ** 32 - 1, 2 ** 31, 0xFFFF, 0)


def _state_dict():
    g = torch.Generator().manual_seed(0)
    base = torch.randn(4, 6, generator=g)
    return OrderedDict([
        ("conv.weight", base),
        ("conv.bias", torch.randn(6, generator=g)),
        ("bn.num_batches_tracked", torch.tensor(7, dtype=torch.int64)),
        ("half", torch.randn(3, 2, generator=g).half()),
        ("bf16", torch.randn(5, generator=g).bfloat16()),
        ("view", base[1:3, ::2]),  # shares base's storage in torch files
    ])


def _reference(sd):
    out = OrderedDict()
    for k, v in sd.items():
        if v.dtype == torch.bfloat16:
            out[k] = v.contiguous().view(torch.int16).numpy().view(np.uint16)
        else:
            out[k] = v.contiguous().numpy()
    return out


def _write(fmt, sd, path):
    if fmt == "torch_zip":
        torch.save(sd, str(path))
    elif fmt == "torch_legacy":
        torch.save(sd, str(path), _use_new_zipfile_serialization=False)
        distinct = []
        for t in sd.values():
            if all(t.untyped_storage().data_ptr() != d.untyped_storage().data_ptr() for d in distinct):
                distinct.append(t)
        path.write_bytes(_fixed_legacy_keys(path.read_bytes(), [t.untyped_storage().nbytes() for t in distinct]))
    elif fmt == "safetensors":
        from safetensors.torch import save_file
        save_file({k: v.contiguous() for k, v in sd.items()}, str(path))
    else:
        np.savez(str(path), **{k: v.numpy() for k, v in sd.items() if v.dtype != torch.bfloat16})


def _fixed_legacy_keys(data, storage_nbytes):
    """Rewrite a legacy file so its bytes do not depend on memory addresses.

    The legacy format names storages by their address and writes them sorted by that name, so every
    run would fuzz different bytes. Storages get same-length names in order of first use in the object
    pickle (``storage_nbytes`` lists their sizes in that order) and are written in that order.
    """
    f = io.BytesIO(data)
    for _ in range(3):  # magic number, protocol version, system info
        pickle.load(f)
    first_use = []
    for op, arg, _ in pickletools.genops(f):  # step over the object pickle without running it
        if op.name == "STOP":
            break
        if isinstance(arg, str) and arg.isdigit() and arg not in first_use:
            first_use.append(arg)
    object_end = f.tell()
    keys = pickle.load(f)
    assert sorted(keys) == sorted(first_use) and len(keys) == len(storage_nbytes)
    nbytes = dict(zip(first_use, storage_nbytes))
    sections = {}
    for key in keys:
        sections[key] = f.read(8 + nbytes[key])
    assert f.read() == b""
    names = {key: str(10 ** (len(key) - 1) + i) for i, key in enumerate(first_use)}
    head = data[:object_end]
    for key, name in names.items():
        assert len(name) == len(key)
        head = head.replace(key.encode(), name.encode())
    return head + pickle.dumps([names[k] for k in first_use], protocol=2) + b"".join(
        sections[k] for k in first_use)


def _as_plain(arr):
    return np.asarray(arr.view(np.ndarray) if hasattr(arr, "view") else arr)


# ---------------------------------------------------------------------------------------------
# mutations: each takes (bytes, rng) and returns (bytes, description)

def _bit_flips(data, rng):
    b = bytearray(data)
    spots = [rng.randrange(len(b) * 8) for _ in range(rng.choice((1, 1, 2, 4, 16)))]
    for bit in spots:
        b[bit // 8] ^= 1 << (bit % 8)
    return bytes(b), f"flip bits {spots}"


def _truncate(data, rng):
    n = rng.choice((0, 1, 7, 8, 9, rng.randrange(len(data)), len(data) - 1, len(data) // 2))
    return data[:n], f"truncate to {n}"


def _insert(data, rng):
    at, n = rng.randrange(len(data) + 1), rng.choice((1, 3, 8, 64))
    return data[:at] + bytes(rng.randrange(256) for _ in range(n)) + data[at:], f"insert {n} at {at}"


def _delete(data, rng):
    at = rng.randrange(len(data))
    n = rng.choice((1, 4, 30))
    return data[:at] + data[at + n:], f"delete {n} at {at}"


def _huge_field(data, rng):
    """Overwrite an aligned 8-, 4- or 2-byte field with a huge or zero value (declared sizes, counts)."""
    width = rng.choice((8, 4, 2))
    at = rng.randrange(0, max(1, len(data) - width))
    value = rng.choice(_HUGE) & ((1 << (8 * width)) - 1)
    fmt = {8: "<Q", 4: "<I", 2: "<H"}[width]
    return data[:at] + struct.pack(fmt, value) + data[at + width:], f"field[{at}:{at + width}]={value}"


def _header_length(data, rng):
    """The first 8 bytes: the safetensors header length / the start of the legacy magic pickle."""
    value = rng.choice(_HUGE + (len(data), len(data) - 8, 1, 2))
    return struct.pack("<Q", value) + data[8:], f"header length {value}"


def _zip_damage(data, rng):
    """Corrupt a field of the end record, a central-directory entry or a local header."""
    targets = []
    eocd = data.rfind(b"PK\x05\x06")
    if eocd >= 0:  # entries on disk, total entries, cd size, cd offset, comment length
        targets += [(eocd + off, w) for off, w in ((8, 2), (10, 2), (12, 4), (16, 4), (20, 2))]
    pos = data.find(b"PK\x01\x02")
    while pos >= 0:  # version made/needed, flags, method, crc, sizes, name/extra lengths, header offset
        targets += [(pos + off, w) for off, w in ((4, 2), (6, 2), (8, 2), (10, 2), (16, 4), (20, 4), (24, 4),
                                                   (28, 2), (30, 2), (42, 4))]
        pos = data.find(b"PK\x01\x02", pos + 4)
    pos = data.find(b"PK\x03\x04")
    while pos >= 0:
        targets += [(pos + off, w) for off, w in ((4, 2), (8, 2), (18, 4), (22, 4), (26, 2), (28, 2))]
        pos = data.find(b"PK\x03\x04", pos + 4)
    z64 = data.rfind(b"PK\x06\x06")
    if z64 >= 0:
        targets += [(z64 + off, 8) for off in (24, 32, 40, 48)]
    if not targets:
        return _bit_flips(data, rng)
    at, width = rng.choice(targets)
    fmt = {2: "<H", 4: "<I", 8: "<Q"}[width]
    value = rng.choice(_HUGE + (1, 20, 45, 99, 0xDEAD)) & ((1 << (8 * width)) - 1)
    return data[:at] + struct.pack(fmt, value) + data[at + width:], f"zip field[{at}:{at + width}]={value}"


_MUTATIONS = (_bit_flips, _bit_flips, _truncate, _insert, _delete, _huge_field, _header_length, _zip_damage,
              _zip_damage)


def mutants(fmt, data, n, seed=SEED):
    """``n`` (bytes, description) damaged copies of ``data``, the same for every run."""
    rng = random.Random(f"{seed}-{fmt}")
    out = []
    for _ in range(n):
        mutate = rng.choice(_MUTATIONS)
        if mutate is _zip_damage and fmt in ("torch_legacy", "safetensors"):
            mutate = _huge_field
        mutated, what = mutate(data, rng)
        if mutated != data:
            out.append((mutated, f"{mutate.__name__}: {what}"))
    return out


def classify(path, ref, same_length):
    """'same', 'different' (well-formed but other values), 'error', or raises AssertionError."""
    try:
        got = load_checkpoint(path)
    except CheckpointError as e:  # UnsafeCheckpointError too: a flip can garble an allowed global's name
        msg = str(e)
        assert str(path) in msg and e.path == str(path), f"{type(e).__name__} does not name the file: {msg}"
        assert "delete it and download it again" in msg, f"{type(e).__name__} does not say what to do: {msg}"
        return "error"
    assert isinstance(got, dict) and all(isinstance(v, np.ndarray) for v in got.values())
    if sorted(got) == sorted(ref) and all(
            _as_plain(got[k]).dtype == ref[k].dtype and np.array_equal(_as_plain(got[k]), ref[k], equal_nan=True)
            for k in ref):
        return "same"
    # no checksum in these formats: overwritten tensor bytes cannot be detected, only kept well-formed
    assert same_length, "a file with bytes inserted or removed loaded to other tensors without an error"
    return "different"


@pytest.fixture(scope="module")
def originals(tmp_path_factory):
    sd = _state_dict()
    root = tmp_path_factory.mktemp("fuzz-originals")
    out = {}
    for fmt in FORMATS:
        path = root / f"model.{fmt}"
        _write(fmt, sd, path)
        ref = _reference(sd)
        if fmt == "npz":
            ref = OrderedDict((k, v) for k, v in ref.items() if k != "bf16")
        got = load_checkpoint(path)
        assert sorted(got) == sorted(ref)  # safetensors files keep their own order
        for k in ref:
            np.testing.assert_array_equal(_as_plain(got[k]), ref[k])
        out[fmt] = (path.read_bytes(), ref)
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_damaged_checkpoints_load_or_raise_checkpoint_error(fmt, originals, tmp_path):
    data, ref = originals[fmt]
    counts = {"same": 0, "different": 0, "error": 0}
    cases = mutants(fmt, data, PER_FORMAT)
    assert len(cases) >= PER_FORMAT * 0.9
    for i, (mutated, what) in enumerate(cases):
        path = tmp_path / f"damaged-{i}.bin"
        path.write_bytes(mutated)
        try:
            counts[classify(path, ref, same_length=len(mutated) == len(data) and fmt != "npz")] += 1
        except AssertionError as e:
            raise AssertionError(f"{fmt} mutant {i} ({what}): {e}") from None
        except Exception as e:  # a raw exception: the bug this test exists for
            raise AssertionError(f"{fmt} mutant {i} ({what}) raised {type(e).__name__}: {e}") from e
    assert counts["error"] > len(cases) // 3  # the mutations really damage the files
    if fmt in ("torch_zip", "npz"):  # CRC-32 checked: overwritten bytes never load silently
        assert counts["different"] == 0


def test_error_message_says_what_to_do(originals, tmp_path):
    data, _ = originals["torch_zip"]
    path = tmp_path / "cut.pth"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(path)
    msg = str(info.value)
    assert str(path) in msg and "delete" in msg and "download" in msg
    assert info.value.path == str(path)


def test_zip_version_needed_and_bad_offsets_are_checkpoint_errors(originals, tmp_path):
    """Damage that zipfile reports as NotImplementedError / OSError(EINVAL) / BadZipFile."""
    data, _ = originals["torch_zip"]
    cd = data.find(b"PK\x01\x02")
    z64 = data.rfind(b"PK\x06\x06")  # torch writes a zip64 end record: its directory offset is the one used
    assert z64 > 0
    cases = {
        "version": data[:cd + 6] + struct.pack("<H", 2210) + data[cd + 8:],  # "zip file version 221.0"
        "method": data[:cd + 10] + struct.pack("<H", 99) + data[cd + 12:],
        "cd_offset": data[:z64 + 48] + struct.pack("<Q", 2 ** 62) + data[z64 + 56:],
        "cd_offset_small": data[:z64 + 48] + struct.pack("<Q", 5) + data[z64 + 56:],
        "header_offset": data[:cd + 42] + struct.pack("<I", 0x7FFFFFF0) + data[cd + 46:],
    }
    for name, mutated in cases.items():
        path = tmp_path / f"{name}.pth"
        path.write_bytes(mutated)
        with pytest.raises(CheckpointError, match="delete") as info:
            load_checkpoint(path)
        assert str(path) in str(info.value), name


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA],
                         ids=["deflate", "bzip2", "lzma"])
@pytest.mark.parametrize("kind", ["npz", "torch_zip"])
def test_damaged_compressed_member_is_a_checkpoint_error(originals, tmp_path, method, kind):
    """Each compression method's decoder raises its own error type (zlib.error, OSError, LZMAError) on a
    damaged stream; every one must surface as CheckpointError naming the file."""
    data, _ = originals[kind]
    with zipfile.ZipFile(io.BytesIO(data)) as src:
        members = [(info.filename, src.read(info)) for info in src.infolist()]
    for damage in range(3):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", method) as dst:
            for name, payload in members:
                dst.writestr(name, payload)
        raw = bytearray(buf.getvalue())
        first = zipfile.ZipFile(io.BytesIO(bytes(raw))).infolist()[0]
        start = first.header_offset + 30 + len(first.filename.encode()) + len(first.extra)
        # the stream's first bytes (its format/properties header), a byte in its body, its last byte
        at = (start, start + first.compress_size // 2, start + first.compress_size - 1)[damage]
        raw[at:at + 4] = b"\xff\xff\xff\xff"[: max(1, min(4, start + first.compress_size - at))]
        path = tmp_path / f"{kind}-{method}-{damage}.bin"
        path.write_bytes(bytes(raw))
        with pytest.raises(CheckpointError) as info:
            load_checkpoint(path)
        assert str(path) in str(info.value)


def test_huge_declared_sizes_are_refused_before_allocating(tmp_path):
    """Shapes claiming terabytes must give CheckpointError, not MemoryError or a giant zero-filled array."""
    import json

    from numpy.lib import format as npy_format

    header = io.BytesIO()
    npy_format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (2 ** 40,)})
    npz = tmp_path / "huge.npz"
    with zipfile.ZipFile(npz, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("w.npy", header.getvalue() + b"\0" * 64)
    text = json.dumps({"w": {"dtype": "F32", "shape": [2 ** 40], "data_offsets": [0, 2 ** 42]}}).encode()
    st = tmp_path / "huge.safetensors"
    st.write_bytes(struct.pack("<Q", len(text)) + text + b"\0" * 64)
    for path in (npz, st):
        with pytest.raises(CheckpointError, match="download it again") as info:
            load_checkpoint(path)
        assert info.value.path == str(path)


def test_central_directory_entry_hiding_members_is_detected(originals, tmp_path):
    """A garbled comment length in one directory entry swallows the entries after it; zipfile still opens
    the archive, so without the layout check the checkpoint loaded with members silently missing."""
    for fmt in ("npz", "torch_zip"):
        data, _ = originals[fmt]
        entries = []
        pos = data.find(b"PK\x01\x02")
        while pos >= 0:
            entries.append(pos)
            pos = data.find(b"PK\x01\x02", pos + 4)
        end = data.find(b"PK\x06\x06") if fmt == "torch_zip" else data.rfind(b"PK\x05\x06")
        victim = entries[-3]
        swallow = end - entries[-2]  # the last two entries become the victim's comment
        mutated = data[:victim + 32] + struct.pack("<H", swallow) + data[victim + 34:]
        path = tmp_path / f"hidden.{fmt}"
        path.write_bytes(mutated)
        with zipfile.ZipFile(path) as zf:  # the archive opens, with two members fewer
            assert len(zf.infolist()) == len(entries) - 2
        with pytest.raises(CheckpointError, match="members are missing|damaged") as info:
            load_checkpoint(path)
        assert info.value.path == str(path)
