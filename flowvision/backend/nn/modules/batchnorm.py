"""BatchNorm1d/2d/3d and SyncBatchNorm (statistics over every MPI rank in training; BatchNorm otherwise)."""
from .module import Module
from ..parameter import Parameter
from .. import init
from ... import _creation as C
from ... import _dtype as D
from ..._tensor import Tensor

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]


def _F():
    from .. import functional
    return functional


class _NormBase(Module):
    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = Parameter(C.empty(num_features, dtype=dtype))
            if bias:
                self.bias = Parameter(C.empty(num_features, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", C.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", C.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", C.tensor(0, dtype=D.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            self.num_batches_tracked._data[...] = 0
            self.num_batches_tracked._version[0] += 1

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, bias={use_bias}, "
                "track_running_stats={track_running_stats}".format(**self.__dict__,
                                                                   use_bias=self.bias is not None))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:  # checkpoints from before num_batches_tracked existed
                state_dict[key] = self.num_batches_tracked if self.num_batches_tracked is not None else \
                    C.tensor(0, dtype=D.int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        if self.momentum is None:
            exponential_average_factor = 0.0
        else:
            exponential_average_factor = self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            nbt = self.num_batches_tracked
            nbt._data[...] = nbt._data + 1
            nbt._version[0] += 1
            if self.momentum is None:
                exponential_average_factor = 1.0 / float(nbt.item())
            else:
                exponential_average_factor = self.momentum
        if self.training:
            bn_training = True
        else:
            bn_training = (self.running_mean is None) and (self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return _F().batch_norm(input, self.running_mean if use_stats else None,
                               self.running_var if use_stats else None, self.weight, self.bias, bn_training,
                               exponential_average_factor, self.eps)


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """BatchNorm whose training statistics cover the batches of every rank of ``process_group``.

    With an initialised process group of several ranks (``flowvision.backend.distributed``), training-mode
    forward all-reduces the per-channel moments; on one process and in eval mode it is exactly BatchNorm.
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        from ... import distributed as dist
        if not (self.training and dist.is_initialized() and dist.get_world_size(self.process_group) > 1):
            return super().forward(input)
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            nbt = self.num_batches_tracked
            nbt._data[...] = nbt._data + 1
            nbt._version[0] += 1
            if self.momentum is None:
                factor = 1.0 / float(nbt.item())
        from ..parallel._sync_batchnorm import sync_batch_norm
        track = self.track_running_stats
        return sync_batch_norm(input, self.weight, self.bias, self.running_mean if track else None,
                               self.running_var if track else None, self.eps, factor, self.process_group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        output = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            output = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                   module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                output.weight = module.weight
                output.bias = module.bias
            output.running_mean = module.running_mean
            output.running_var = module.running_var
            output.num_batches_tracked = module.num_batches_tracked
            output.training = module.training
        for name, child in module.named_children():
            output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return output
