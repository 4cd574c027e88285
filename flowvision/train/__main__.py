"""``python -m flowvision.train``: the same as ``flowvision train``."""
import sys

from .recipe import main

if __name__ == "__main__":
    sys.exit(main())
