"""``torchvision.models.feature_extraction`` by module names.

torchvision traces the model with torch.fx and names every node; this engine has no symbolic tracer, so nodes
here are the model's submodules (``named_modules()`` names such as ``"layer1"``, ``"layer4.1.conv2"``,
``"avgpool"``), which is what most feature-extraction code asks for.  A name that is only a traced functional
op in torchvision (e.g. ``"layer1.0.add"``) raises a ``ValueError`` listing the available names.
"""
from __future__ import annotations

from collections import OrderedDict

from ..backend.nn import Module

__all__ = ["create_feature_extractor", "get_graph_node_names"]


def get_graph_node_names(model: Module, tracer_kwargs=None, suppress_diff_warning: bool = False):
    """(train node names, eval node names): ``"x"`` (the input) and every submodule name, in definition order."""
    names = ["x"] + [n for n, _ in model.named_modules() if n]
    return names, list(names)


class _FeatureExtractor(Module):
    def __init__(self, model: Module, train_nodes: dict, eval_nodes: dict):
        super().__init__()
        self.model = model
        self._nodes = {True: train_nodes, False: eval_nodes}

    def forward(self, x):
        nodes = self._nodes[self.training]
        out, handles = {}, []
        modules = dict(self.model.named_modules())
        for node, key in nodes.items():
            if node == "x":
                out[key] = x
                continue

            def hook(mod, inp, result, key=key):
                out[key] = result
            handles.append(modules[node].register_forward_hook(hook))
        try:
            self.model(x)
        finally:
            for h in handles:
                h.remove()
        return OrderedDict((key, out[key]) for key in nodes.values())


def _as_dict(nodes, model):
    if nodes is None:
        return None
    d = OrderedDict((n, n) for n in nodes) if isinstance(nodes, (list, tuple)) else OrderedDict(nodes)
    available = set(get_graph_node_names(model)[0])
    missing = [n for n in d if n not in available]
    if missing:
        raise ValueError(f"node names {missing} are not submodules of the model (this implementation hooks "
                         f"modules; it has no torch.fx tracer). Available: {sorted(available)[:50]}...")
    return d


def create_feature_extractor(model: Module, return_nodes=None, train_return_nodes=None, eval_return_nodes=None,
                             tracer_kwargs=None, suppress_diff_warning: bool = False,
                             concrete_args=None) -> Module:
    """A module returning ``{name: output}`` of the requested submodules of ``model`` (see the module docs).

    ``return_nodes`` is a list of module names or a ``{module name: output name}`` dict; separate train / eval
    node sets may be given instead, as in torchvision.
    """
    if return_nodes is None and (train_return_nodes is None or eval_return_nodes is None):
        raise ValueError("Either `return_nodes` or `train_return_nodes` and `eval_return_nodes` together, should "
                         "be specified")
    if return_nodes is not None and (train_return_nodes is not None or eval_return_nodes is not None):
        raise ValueError("If `train_return_nodes` and `eval_return_nodes` are specified, then both should be "
                         "specified and `return_nodes` should not be")
    train = _as_dict(return_nodes if return_nodes is not None else train_return_nodes, model)
    evaln = _as_dict(return_nodes if return_nodes is not None else eval_return_nodes, model)
    extractor = _FeatureExtractor(model, train, evaln)
    extractor.train(model.training)
    return extractor
