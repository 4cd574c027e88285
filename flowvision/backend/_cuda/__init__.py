"""CUDA side of the engine in Python: device tensors and the per-op dispatch table.

Nothing here is imported by ``import flowvision``; the package loads on the first ``.cuda()`` /
``.to("cuda")`` / ``device="cuda"`` call (see ``flowvision/backend/cuda.py`` for the lazy loader
of the compiled ``_C_cuda`` module).

Design (docs/architecture.md, "CUDA backend"):
- a CUDA tensor is the ordinary ``Tensor`` whose ``_data`` is a ``_C_cuda.DeviceArray`` (dense,
  row-major device memory from the caching allocator) instead of a numpy array;
- ``Function.apply`` hands any call with a CUDA operand to ``dispatch.cuda_apply``, which looks the
  op's class up in ``dispatch.TABLE`` and runs its CUDA twin (same forward/backward contract,
  DeviceArrays instead of numpy arrays), recording the same autograd ``Node``;
- the hook is armed only once a CUDA tensor exists, so CPU-only processes never pay for it.
"""
