"""Put stand-in torchvision datasets at ``flowvision.datasets`` when flowvision has no such module.

Loaded from ``PYTHONPATH`` by the drop-in harness, so the script under test and every process it spawns see
the same module.  The finder sits last on ``sys.meta_path``: a real ``flowvision.datasets`` always wins.
"""
import importlib.abc
import importlib.util
import os
import sys


class _StandinFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "flowvision.datasets":
            return None
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_standin_datasets.py")
        return importlib.util.spec_from_file_location(name, here)


sys.meta_path.append(_StandinFinder())
