"""flowvision.backend.nn: torch.nn's modules, Parameter, init and functional, on the flowvision engine."""
from .parameter import Parameter, Buffer, UninitializedParameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from . import init  # noqa: F401
from . import utils  # noqa: F401
from . import functional  # noqa: F401
from . import _sampling

# composed functions (no op of their own) join functional's namespace here
for _name in ("grid_sample", "affine_grid"):
    if not hasattr(functional, _name):
        setattr(functional, _name, getattr(_sampling, _name))
from . import parallel  # noqa: F401  (DistributedDataParallel loads mpi4py only when constructed)
from .parallel import DataParallel  # noqa: F401
