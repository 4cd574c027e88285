"""One rule for names: ``flowvision.models.<name>()`` / ``get_model(name)`` build torchvision's architecture (as
``import flowvision as torchvision`` code expects), ``create_model(name)`` timm's. Checked on the state-dict layout
(every key and shape) of every torchvision builder flowvision has, and of every timm name a torchvision builder
shares or converts to; the numerics are the parity tests' (test_models_tv_builders.py, test_models_parity.py).

Both sides are built without random initialisation (torch on its meta device, flowvision with its init functions
stubbed): only the layout is compared, and the 600M-parameter models take seconds instead of minutes.
"""
import warnings

import pytest

import flowvision
import flowvision.models as M
from flowvision.models import _api

tvm = pytest.importorskip("torchvision.models")
torch = pytest.importorskip("torch")
timm = pytest.importorskip("timm")

_api._load_subpackages()
BUILDERS = sorted(_api._BUILDERS)
# the timm names that are also torchvision builder names, and the timm models torchvision checkpoints convert to
TIMM_NAMES = sorted(set(M.TV_TO_TIMM.values()) | {n for n in BUILDERS if M.is_model(n)})
# task builders: no backbone download on either side
_NO_BACKBONE = {"weights_backbone": None}


@pytest.fixture
def no_init(monkeypatch):
    """Parameters keep their allocation values: the layout is what is compared, and init dominates build time."""
    from flowvision import backend
    from flowvision.backend.nn import init
    from flowvision.layers import weight_init

    def keep(tensor, *args, **kwargs):
        return tensor

    for fn in ("uniform_", "normal_", "trunc_normal_", "orthogonal_"):
        monkeypatch.setattr(init, fn, keep)
        monkeypatch.setattr(torch.nn.init, fn, keep)  # torch side: meta tensors hold no values to draw
    # position embeddings draw through backend.randn; flowvision.layers.trunc_normal_ is imported by name into
    # every family module, so its body is what gets replaced
    monkeypatch.setattr(backend, "randn", lambda *size, **kw: backend.zeros(*size, **kw))
    monkeypatch.setattr(weight_init.trunc_normal_, "__code__", keep.__code__)


def _layout(sd):
    return {k: tuple(v.shape) for k, v in sd.items()}


def _kwargs(name):
    import inspect
    return dict(_NO_BACKBONE) if "weights_backbone" in inspect.signature(_api._BUILDERS[name]).parameters else {}


def _torchvision_layout(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # googlenet / inception init_weights notice
        try:
            with torch.device("meta"):
                return _layout(tvm.get_model(name, **_kwargs(name)).state_dict())
        except NotImplementedError:  # RegNet computes its widths with tensors: uninitialised CPU memory then
            return _layout(tvm.get_model(name, **_kwargs(name)).state_dict())


def test_builder_set_is_torchvisions_image_builders():
    """Every builder is torchvision's name; what torchvision has beyond them is video, optical flow and quantized."""
    ref = set(tvm.list_models())
    assert set(BUILDERS) <= ref, sorted(set(BUILDERS) - ref)
    missing = ref - set(BUILDERS)
    assert all(n.startswith(("quantized_", "raft_", "r3d", "r2plus1d", "mc3", "s3d", "mvit", "swin3d")) for n in missing)


@pytest.mark.parametrize("name", BUILDERS)
def test_torchvision_builder_layout(name, no_init):
    """``import flowvision as torchvision; torchvision.models.<name>()`` has torchvision's state-dict layout."""
    import flowvision as torchvision
    module = M if _api._builder_module(_api._BUILDERS[name]).count(".") <= 2 else None
    ours = M.get_model(name, **_kwargs(name))
    assert _layout(ours.state_dict()) == _torchvision_layout(name), name
    if module is not None:  # classification builders: the package attribute is the builder
        assert getattr(torchvision.models, name) is _api._BUILDERS[name], name
    else:
        sub = getattr(torchvision.models, _api._builder_module(_api._BUILDERS[name]).split(".")[2])
        assert getattr(sub, name) is _api._BUILDERS[name], name


@pytest.mark.parametrize("name", TIMM_NAMES)
def test_create_model_is_timms(name, no_init):
    """``create_model(name)`` has timm's layout, including where torchvision has a builder of the same name."""
    ours = M.create_model(name)
    with torch.device("meta"):
        ref = timm.create_model(name)
    assert _layout(ours.state_dict()) == _layout(ref.state_dict()), name


def test_same_name_two_libraries():
    """vgg16: the module attribute and get_model are torchvision's VGG, the registry timm's; no keyword sniffing."""
    assert type(flowvision.models.vgg16).__name__ == "function"
    assert M.get_model_builder("vgg16") is flowvision.models.vgg16
    assert M.model_entrypoint("vgg16") is not flowvision.models.vgg16
    assert M.model_entrypoint("vgg16").__module__ == "flowvision.models.vgg"
    with pytest.raises(TypeError):
        M.model_entrypoint("resnet50")(weights=None)  # timm's entrypoint does not take torchvision's keywords


def test_manifest_is_generated_from_the_cfgs():
    """weights/manifest.json is what weights/generate_manifest.py builds from the cfgs next to the factories
    (timm tags' PretrainedCfg, torchvision builders' *_Weights): one source of truth for each model's weights."""
    import importlib.util
    import json
    import os
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.spec_from_file_location("generate_manifest", os.path.join(repo, "weights",
                                                                                    "generate_manifest.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    with open(os.path.join(repo, "weights", "manifest.json")) as f:
        assert json.load(f) == gen.build(), "weights/manifest.json is stale: run python weights/generate_manifest.py"
    entry = gen.build()["weights"]["torchvision/resnet50.IMAGENET1K_V2"]
    assert entry["sources"][0]["url"] == M.ResNet50_Weights.IMAGENET1K_V2.url
    assert gen.build()["weights"]["resnet50.a1_in1k"]["sources"][0]["hub_id"] == \
        M.get_pretrained_cfg("resnet50.a1_in1k").hf_hub_id
