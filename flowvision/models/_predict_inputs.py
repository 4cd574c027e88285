"""What ``flowvision predict`` reads and writes: image paths from files/directories/globs, JSON-ready results."""
import glob
import os
from typing import List, Sequence, Tuple

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".gif", ".ppm", ".pgm")
_GLOB_CHARS = set("*?[")

__all__ = ["expand_image_args", "IMAGE_EXTENSIONS"]


def expand_image_args(args: Sequence[str]) -> Tuple[List[str], List[str]]:
    """Image paths for the command-line arguments, in argument order, each directory/glob sorted.

    Args:
        args: image files, directories (every image file below them, recursively) and glob patterns
            (``imgs/*.jpg``, ``data/**/*.png``).

    Returns:
        ``(paths, problems)``: the image paths (duplicates removed, first occurrence kept) and one message per
        argument that named nothing usable (a missing file, a directory without images, a glob without matches).
    """
    paths: List[str] = []
    problems: List[str] = []
    for arg in args:
        if os.path.isdir(arg):
            found = sorted(os.path.join(root, f) for root, _dirs, files in os.walk(arg) for f in files
                           if f.lower().endswith(IMAGE_EXTENSIONS))
            if not found:
                problems.append(f"no image files ({', '.join(IMAGE_EXTENSIONS)}) in directory {arg}")
        elif os.path.isfile(arg):
            found = [arg]
        elif _GLOB_CHARS & set(arg):
            found = sorted(p for p in glob.glob(arg, recursive=True) if os.path.isfile(p))
            if not found:
                problems.append(f"no files match {arg!r}")
        else:
            found = []
            problems.append(f"no such file or directory: {arg}")
        paths.extend(found)
    seen = set()
    unique = []
    for p in paths:
        key = os.path.abspath(p)
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique, problems
