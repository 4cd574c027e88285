"""Fixtures shared by the tests: `isa` runs a test once per kernel ISA this CPU supports (and restores the one in
use); `threads` restores the kernel thread count a test changes; `torch_two_threads` runs the torch reference of a
module at 2 threads (the parity modules use it through `pytestmark`)."""
import pytest

try:
    from flowvision.backend import _C
    _ISAS = list(_C.supported_isas())
except ImportError:  # the tests that need the kernels skip themselves (importorskip)
    _C, _ISAS = None, []


@pytest.fixture(params=_ISAS)
def isa(request):
    old = _C.cpu_isa()
    _C._set_isa_for_testing(request.param)
    yield request.param
    _C._set_isa_for_testing(old)


@pytest.fixture
def threads():
    old = _C.get_num_threads()
    yield
    _C.set_num_threads(old)


@pytest.fixture(scope="module")
def torch_two_threads():
    torch = pytest.importorskip("torch")
    old = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(old)
