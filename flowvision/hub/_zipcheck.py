"""Structural check of a zip checkpoint before any member is read.

:mod:`zipfile` trusts the central directory: a damaged entry can hide members (a garbled
length field swallows the next entry) and the archive still opens, so a checkpoint could load
with tensors missing. torch and numpy write their members back to back, each local header
directly followed by its data (and a data descriptor when flag bit 3 is set), with the
central directory right after the last one; this module checks exactly that tiling, so any
byte of the archive that no member accounts for is reported as damage.
"""
import struct

from .errors import CheckpointError

__all__ = ["check_zip_layout"]

_LOCAL = struct.Struct("<4s22xHH")  # signature, (version, flags, method, time, date, crc, sizes), name/extra lengths
_DESCRIPTOR_SIG = b"PK\x07\x08"


def _member_span(raw, info, path):
    """(offset of ``info``'s data, offset just past its data and data descriptor)."""
    raw.seek(info.header_offset)
    head = raw.read(_LOCAL.size)
    if len(head) < _LOCAL.size:
        raise CheckpointError(f"local header of {info.filename!r} lies past the end of the archive", path=path)
    sig, name_len, extra_len = _LOCAL.unpack(head)
    if sig != b"PK\x03\x04":
        raise CheckpointError(f"bad local header for {info.filename!r} (corrupt archive)", path=path)
    start = info.header_offset + _LOCAL.size + name_len + extra_len
    end = start + info.compress_size
    if info.flag_bits & 0x08:
        raw.seek(end)
        tail = raw.read(28)
        if tail[:4] == _DESCRIPTOR_SIG:
            tail, end = tail[4:], end + 4
        # zip64 descriptors hold 8-byte sizes; tell them apart by the sizes they repeat
        zip64 = (info.compress_size >= 0xFFFFFFFF or info.file_size >= 0xFFFFFFFF
                 or (len(tail) >= 20 and struct.unpack("<QQ", tail[4:20]) == (info.compress_size, info.file_size)))
        size = 20 if zip64 else 12
        if len(tail) < size or struct.unpack("<I", tail[:4])[0] != info.CRC:
            raise CheckpointError(f"data descriptor of {info.filename!r} is damaged", path=path)
        end += size
    return start, end


def check_zip_layout(zf, raw, path):
    """Raise :class:`CheckpointError` unless the members of ``zf`` tile the archive up to its directory.

    ``raw`` is the archive opened in binary mode (read with its own seeks, not ``zf``'s handle).
    Returns ``{member name: offset of its data}``.
    """
    starts = {}
    infos = sorted(zf.infolist(), key=lambda i: i.header_offset)
    if not infos:
        raise CheckpointError("empty zip archive", path=path)
    expected = infos[0].header_offset
    if expected != 0:
        raise CheckpointError(f"{expected} bytes before the first zip member: corrupt archive", path=path)
    for info in infos:
        if info.header_offset != expected:
            raise CheckpointError(
                f"zip member {info.filename!r} starts at byte {info.header_offset}, the previous one ends at "
                f"{expected}: the central directory is damaged or members are missing", path=path)
        starts[info.filename], expected = _member_span(raw, info, path)
    start_dir = getattr(zf, "start_dir", None)
    if start_dir is not None and start_dir != expected:
        raise CheckpointError(f"zip central directory starts at byte {start_dir}, the last member ends at "
                              f"{expected}: damaged archive", path=path)
    if len({i.filename for i in infos}) != len(infos):
        raise CheckpointError("zip archive lists one member name twice: damaged archive", path=path)
    return starts
