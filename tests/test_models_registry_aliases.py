"""What ``list_models`` lists against what ``create_model`` accepts, as timm draws the line.

timm lists canonical names only: a deprecated name (timm's alias) is creatable (``is_model`` is True) but left out
of ``list_models()`` and listed by ``get_deprecated_models()``. flowvision does the same with its aliases (the
original flowvision 0.2.2 spellings, short names): ``list_aliases()`` is the mapping, ``list_models(...,
include_aliases=True)`` adds them to a listing, and ``flowvision.models.<alias>`` is a builder as in 0.2.2.
"""
import subprocess
import sys

import pytest

import flowvision.models as M


def test_aliases_are_creatable_but_not_listed_like_timms_deprecated_names():
    timm = pytest.importorskip("timm")
    from timm.models import get_deprecated_models
    ref = get_deprecated_models()
    # timm's own convention, the one this registry follows
    some = next(iter(ref))
    assert timm.is_model(some) and some not in timm.list_models()
    ours = M.list_aliases()
    listed = set(M.list_models())
    assert ours and not set(ours) & listed
    assert all(M.is_model(a) for a in ours if M.is_model(ours[a]))
    # where timm deprecated the same name, it maps it to the same architecture, and to the same tag where timm's
    # map names a tag timm has (a few of its entries name tags since renamed: '.sam' for '.sam_in1k')
    common = set(ours) & set(ref)
    assert len(common) >= 15
    timm_tags = set(timm.list_models(include_tags=True))
    for alias in common:
        assert ours[alias].split(".")[0] == ref[alias].split(".")[0], alias
        if ref[alias] in timm_tags:
            assert ours[alias] == ref[alias], alias


def test_original_names_are_listed_with_include_aliases():
    original_cait = {"cait_XS24_384", "cait_S24_224", "cait_S24_384", "cait_S36_384", "cait_M36_384", "cait_M48_448"}
    assert not original_cait & set(M.list_models("cait*"))
    with_aliases = set(M.list_models("cait*", include_aliases=True))
    assert original_cait <= with_aliases and set(M.list_models("cait*")) <= with_aliases
    assert set(M.list_aliases("cait_*")) >= original_cait
    assert M.list_aliases("cait_S24*") == {"cait_S24_224": "cait_s24_224", "cait_S24_384": "cait_s24_384"}
    # module and exclude filters apply to the alias's target / name
    assert "cait_S24_224" in M.list_models(module="cait", include_aliases=True)
    assert "cait_S24_224" not in M.list_models(module="resnet", include_aliases=True)
    assert "cait_S24_224" not in M.list_models("cait*", exclude_filters="*S24*", include_aliases=True)


def test_pretrained_listing_keeps_timms_tags():
    tagged = M.list_models("vit_base_patch16_224", pretrained=True)
    assert tagged and all(n.startswith("vit_base_patch16_224.") for n in tagged)
    assert tagged == M.list_pretrained("vit_base_patch16_224")
    with_aliases = M.list_models("vit_base_patch16_224*", pretrained=True, include_aliases=True)
    assert "vit_base_patch16_224_in21k" in with_aliases  # an alias of a tag with weights
    assert set(M.list_models("vit_base_patch16_224*", pretrained=True)) < set(with_aliases)


def test_original_builder_attribute():
    build = M.cait_S24_224
    assert build.__name__ == "cait_S24_224"
    model = build(num_classes=3, depth=1, img_size=32)
    assert model.pretrained_cfg["architecture"] == "cait_s24_224" and model.num_classes == 3
    with pytest.raises(AttributeError):
        M.cait_S99_224


@pytest.mark.parametrize("typo,expected", [("alexnett", "alexnet"), ("fast_neural_styl", "fast_neural_style"),
                                           ("fasterrcnn_resnet101fpn", "fasterrcnn_resnet101_fpn"),
                                           ("CAIT_S24_224", "cait_s24_224"), ("resnet5O", "resnet50")])
def test_unknown_names_suggest_every_kind_of_name(typo, expected):
    # torchvision-only and task builders are suggested too, case-insensitively, canonical spelling first
    with pytest.raises(RuntimeError, match=r"closest matches: [^.]*\b" + expected + r"\b"):
        M.create_model(typo)


def test_original_detectors_live_in_the_detection_package():
    from flowvision.models import detection
    from flowvision.models._factory import _torchvision_builder
    for name in ("fasterrcnn_resnet101_fpn", "retinanet_resnet101_fpn", "retinanet_resnext50_32x4d_fpn"):
        assert name in detection.__all__ and _torchvision_builder(name) is getattr(detection, name)
        # not a torchvision builder: torchvision's listing of the package is unchanged
        assert name not in M.list_models(module=detection)
    with pytest.raises(ValueError, match="weights"):
        detection.retinanet_resnet101_fpn(weights="DEFAULT")
    # create_model finds them before anything imported the detection package
    code = ("import sys, flowvision.models as M; assert 'flowvision.models.detection' not in sys.modules; "
            "print(type(M.create_model('retinanet_resnext50_32x4d_fpn')).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "RetinaNet"
