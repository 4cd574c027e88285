"""``flowvision serve``: an HTTP inference server (FastAPI + uvicorn, the ``serve`` extra).

``create_app(ServeConfig(...))`` builds the ASGI app; ``Predictor`` is the same model path in-process.
Importing this package does not import FastAPI; the names below load on first use.
"""
from ._predictor import ModelSpec, Predictor, decode_image

__all__ = ["ModelSpec", "Predictor", "decode_image", "ServeConfig", "create_app"]


def __getattr__(name):
    if name in ("ServeConfig", "create_app"):
        from . import _app
        return getattr(_app, name)
    raise AttributeError(f"module 'flowvision.serve' has no attribute {name!r}")
