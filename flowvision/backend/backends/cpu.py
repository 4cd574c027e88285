"""``torch.backends.cpu``, and the CPU engine's algorithm switch.

``allow_winograd`` (default ``True``): float32 unit-stride 3x3 convolutions of a training step (the autograd
conv's forward, input gradient and weight gradient) run as Winograd F(4x4, 3x3) where the shapes let it pay, about
1.5-3x faster than a direct convolution on ResNet layers. Its float32 error is 2e-6 to 1.4e-5 of the output's
largest magnitude, against about 1e-6 for a direct conv (docs/architecture.md, "Winograd for the training 3x3
convs"). Set it to ``False`` for results as close to torch's direct convolution as float32 summation order allows,
the way ``torch.backends.cudnn.allow_tf32`` trades speed for accuracy on GPUs. The switch also covers the plans
``flowvision.compile`` builds afterwards, which take Winograd for their 3x3 convs where it pays (filters transformed
once, at capture); eager inference without gradients always uses the direct kernels.
"""
import sys
import types


def get_cpu_capability() -> str:
    """The kernel ISA in use, in torch's spelling ("AVX512", "AVX2" or "DEFAULT")."""
    from .._threads import cpu_isa
    return {"avx512": "AVX512", "avx2": "AVX2"}.get(str(cpu_isa()).lower(), "DEFAULT")


class _CpuBackend(types.ModuleType):
    _allow_winograd = True

    @property
    def allow_winograd(self) -> bool:
        return self._allow_winograd

    @allow_winograd.setter
    def allow_winograd(self, on: bool) -> None:
        if not isinstance(on, bool):
            raise TypeError(f"allow_winograd must be True or False, got {on!r}")
        from .. import _C
        _C.set_winograd_allowed(on)
        type(self)._allow_winograd = on


sys.modules[__name__].__class__ = _CpuBackend
