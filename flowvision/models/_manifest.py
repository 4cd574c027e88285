"""Join the registry's pretrained cfgs with the weights manifest (``weights/manifest.json``)."""
import functools


@functools.lru_cache(maxsize=1)
def manifest_tags():
    try:
        from flowvision.hub import load_manifest
        return frozenset(load_manifest()["weights"])
    except Exception:  # a broken or missing manifest must not break model construction
        return frozenset()


def manifest_entry(name):
    from flowvision.hub import get_weight_entry
    return get_weight_entry(name)
