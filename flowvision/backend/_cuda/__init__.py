"""CUDA side of the engine in Python: device tensors and the per-op dispatch table.

Nothing here is imported by ``import flowvision``; the package loads on the first ``.cuda()`` /
``.to("cuda")`` / ``device="cuda"`` call (see ``flowvision/backend/cuda.py`` for the lazy loader
of the compiled ``_C_cuda`` module).

Design (docs/architecture.md, "CUDA backend"):
- a CUDA tensor is the ordinary ``Tensor`` whose ``_data`` is a ``_C_cuda.DeviceArray`` (dense,
  row-major device memory from the caching allocator) instead of a numpy array;
- ``Function.apply`` runs a call with a CUDA operand through the op's own ``forward_cuda`` kernel (declared on
  the op, written against the array namespace ``xp.py``) and records the same autograd ``Node``; the op's one
  backward runs on device arrays with ``xp`` as its namespace (``dispatch.py`` is the device runtime);
- the hook is armed only once a CUDA tensor exists, so CPU-only processes never pay for it.
"""
