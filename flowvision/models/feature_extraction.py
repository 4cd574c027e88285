"""``torchvision.models.feature_extraction``: node names as torchvision's fx tracer gives them.

``get_graph_node_names`` / ``create_feature_extractor`` record one forward pass (``_node_trace``): leaf modules
(``nn`` layers and ``flowvision.ops`` blocks, as torchvision treats torch.nn / torchvision.ops) are nodes named by
their qualified names, and inside the other modules every operator, tensor method, functional call and parameter
read is a node named ``{module path}.{op}`` with torchvision's ``_1``, ``_2`` suffixes, e.g. ``"layer1.0.add"``,
``"features.1.0.mul"``, ``"features.2.0.layer_norm"``.  A return node may also be a module path (``"layer1"``):
the last node inside it, as in torchvision.

Differences: names come from a concrete run on ``example_input`` (default: two zero images of the model's input
size, 224x224 if it does not declare one), so only the path that input takes is named; shape reads (``x.shape``) and
the size arithmetic on them are nodes only in modules written as torchvision's (``fx_shape_nodes``: its ViT).  While an extractor runs, the
recorder patches process-wide attributes under a lock: run one extractor at a time.
"""
from __future__ import annotations

import re
import warnings
from collections import OrderedDict

from ..backend.nn import Module
from ._node_trace import trace_names

__all__ = ["create_feature_extractor", "get_graph_node_names"]


def _example(model: Module, example_input=None):
    if example_input is not None:
        return example_input
    from .. import backend as B
    cfg = getattr(model, "default_cfg", None) or getattr(model, "pretrained_cfg", None) or {}
    size = tuple(cfg.get("input_size", (3, 224, 224))) if isinstance(cfg, dict) else (3, 224, 224)
    return B.zeros(2, *size)


def _names(model: Module, training: bool, example_input) -> list:
    """Node names of one forward in the given mode; the model's buffers (BatchNorm statistics) and the global
    random state are restored afterwards, so naming has no side effects (torchvision's tracing runs nothing)."""
    from .. import backend as B
    was = model.training
    buffers = [(b, b.detach().clone()) for b in model.buffers()]
    rng = B.get_rng_state()
    if training and getattr(example_input, "ndim", 0) and example_input.shape[0] == 1:
        example_input = B.cat([example_input, example_input])  # train-mode BatchNorm needs two samples
    model.train(training)
    try:
        with B.no_grad():
            names, _, _ = trace_names(model, example_input)
    finally:
        model.train(was)
        with B.no_grad():
            for buf, saved in buffers:
                buf.copy_(saved)
        B.set_rng_state(rng)
    return names


def get_graph_node_names(model: Module, tracer_kwargs=None, suppress_diff_warning: bool = False, *,
                         example_input=None):
    """(train node names, eval node names) in execution order, starting with ``"x"`` (the input)."""
    x = _example(model, example_input)
    train, evaln = _names(model, True, x), _names(model, False, x)
    if train != evaln and not suppress_diff_warning:
        warnings.warn("NOTE: The nodes obtained by tracing the model in eval mode are a subsequence of those obtained "
                      "in train mode. When choosing nodes for feature extraction, you may need to specify output "
                      "nodes for train and eval mode separately.")
    return train, evaln


def _resolve(queries: "OrderedDict[str, str]", names: list) -> "OrderedDict[str, str]":
    """{node name: output key}: a query names a node, or a module path standing for its last node (torchvision)."""
    out = OrderedDict()
    for query, key in queries.items():
        if not any(re.match(rf"^{re.escape(query)}(\.|$)", n) for n in names):
            raise ValueError(f"node: '{query}' is not present in model. Hint: use `get_graph_node_names` to make sure "
                             "the `return_nodes` you specified are present. It may even be that you need to specify "
                             "`train_return_nodes` and `eval_return_nodes` separately.")
        depth = query.count(".")
        for n in reversed(names):
            if ".".join(n.split(".")[: depth + 1]) == query:
                out[n] = key
                break
    order = {n: i for i, n in enumerate(names)}
    return OrderedDict(sorted(out.items(), key=lambda kv: order[kv[0]]))  # outputs in graph order, as torchvision


class _FeatureExtractor(Module):
    def __init__(self, model: Module, train_nodes: dict, eval_nodes: dict):
        super().__init__()
        self.model = model
        self._nodes = {True: train_nodes, False: eval_nodes}

    def forward(self, x):
        nodes = self._nodes[self.training]
        _, captured, _ = trace_names(self.model, x, capture=set(nodes))
        missing = [n for n in nodes if n not in captured]
        if missing:
            raise RuntimeError(f"nodes {missing} were not reached by this input (the graph was recorded on the "
                               "example input; pass a representative `example_input` to create_feature_extractor)")
        return OrderedDict((key, captured[n]) for n, key in nodes.items())


def _as_dict(nodes):
    if nodes is None:
        return None
    return OrderedDict((n, n) for n in nodes) if isinstance(nodes, (list, tuple)) else OrderedDict(nodes)


def create_feature_extractor(model: Module, return_nodes=None, train_return_nodes=None, eval_return_nodes=None,
                             tracer_kwargs=None, suppress_diff_warning: bool = False, concrete_args=None, *,
                             example_input=None) -> Module:
    """A module returning ``{output name: output}`` of the requested nodes of ``model`` (see the module docs).

    ``return_nodes`` is a list of node names or a ``{node name: output name}`` dict; separate train / eval node
    sets may be given instead, as in torchvision.
    """
    if return_nodes is None and (train_return_nodes is None or eval_return_nodes is None):
        raise ValueError("Either `return_nodes` or `train_return_nodes` and `eval_return_nodes` together, should "
                         "be specified")
    if return_nodes is not None and (train_return_nodes is not None or eval_return_nodes is not None):
        raise ValueError("If `train_return_nodes` and `eval_return_nodes` are specified, then both should be "
                         "specified and `return_nodes` should not be")
    x = _example(model, example_input)
    train_names, eval_names = _names(model, True, x), _names(model, False, x)
    train = _resolve(_as_dict(return_nodes if return_nodes is not None else train_return_nodes), train_names)
    evaln = _resolve(_as_dict(return_nodes if return_nodes is not None else eval_return_nodes), eval_names)
    extractor = _FeatureExtractor(model, train, evaln)
    extractor.train(model.training)
    return extractor
