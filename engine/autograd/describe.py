"""What ``backward()`` will walk: a plain description of the graph recorded for a tensor.

:func:`describe` follows the nodes' recorded inputs from a tensor (the loss) down to its leaves and returns a
:class:`GraphDescription`: one :class:`GraphNode` per recorded Function (built-in ops by their Function's name,
``MatMul``, ``Clamp``; a user's ``autograd.Function`` such as the tutorial's ``MyReLU`` by its class name) and one
per leaf that requires a gradient (``AccumulateGrad``: the gradient is added to its ``.grad``), with each node's
output shape, dtype and device and its edges. A tensor used twice (the dynamic net's shared weight) is one node
with two consumers. Nothing is recorded for it while training: the description walks what autograd already keeps,
only when asked.

With ``stats=True`` each node also carries figures of its output and of the gradient of the root with respect to
that output (norm, min, max, share of exact zeros: a ReLU's mask shows as its gradient's zeros), computed with
``autograd.grad`` on a retained graph, so the tensor can still be backpropagated afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..backend import to_host

__all__ = ["GraphNode", "GraphDescription", "describe", "tensor_stats"]


@dataclass(frozen=True)
class GraphNode:
    id: int  # 0 is the root's node; ids grow away from the root (a breadth-first order)
    op: str  # the Function's name ("MatMul", "MyReLU"), or "AccumulateGrad" for a leaf
    kind: str  # "op" (built-in), "function" (a user's autograd.Function) or "leaf"
    shape: tuple
    dtype: str
    device: str
    inputs: tuple = ()  # ids of the nodes whose outputs this one takes, in argument order (leaves: none)
    name: str | None = None  # a leaf's name, when the caller gave one
    depth: int = 0  # the longest path from the root (the layout's row)
    output: dict | None = None  # stats of the output (stats=True)
    grad: dict | None = None  # stats of the root's gradient with respect to the output (stats=True)
    grad_fn: str | None = None  # PyTorch's name of the node, as a printed tensor shows it ("MmBackward0"); leaves: None


@dataclass(frozen=True)
class GraphDescription:
    nodes: tuple  # GraphNode, the root's first
    root_shape: tuple = ()
    root_dtype: str = ""
    edges: tuple = field(default=())  # (from id, to id): the output of `from` is an input of `to`

    def by_op(self, op: str) -> list:
        return [n for n in self.nodes if n.op == op]

    @property
    def leaves(self) -> list:
        return [n for n in self.nodes if n.kind == "leaf"]

    def rows(self) -> list:
        """The nodes by depth: row 0 holds the root's node, the last row the deepest leaves."""
        out: list = [[] for _ in range(max((n.depth for n in self.nodes), default=-1) + 1)]
        for n in self.nodes:
            out[n.depth].append(n)
        return out

    def to_dict(self) -> dict:
        return {"root": {"shape": list(self.root_shape), "dtype": self.root_dtype},
                "nodes": [{"id": n.id, "op": n.op, "kind": n.kind, "shape": list(n.shape), "dtype": n.dtype,
                           "device": n.device, "inputs": list(n.inputs), "name": n.name, "depth": n.depth,
                           "output": n.output, "grad": n.grad, "grad_fn": n.grad_fn} for n in self.nodes],
                "edges": [list(e) for e in self.edges]}


def tensor_stats(array) -> dict:
    """Norm, min, max, mean and the share of exact zeros of an array (on the host, in float64); of a complex one the
    norm of the moduli, the min, max and mean of the real and imaginary parts together, and the share of elements
    that are exactly 0."""
    host = to_host(array)
    if host.size == 0:
        return {"norm": 0.0, "min": 0.0, "max": 0.0, "mean": 0.0, "zeros": 0.0, "size": 0}
    zeros = float(np.count_nonzero(host == 0) / host.size)
    a = np.asarray(np.stack((host.real, host.imag)) if host.dtype.kind == "c" else host, dtype=np.float64)
    return {"norm": float(np.sqrt(np.sum(a * a))), "min": float(a.min()), "max": float(a.max()),
            "mean": float(a.mean()), "zeros": zeros, "size": int(host.size)}


def _meta(data) -> tuple:
    device = "cpu" if data.__class__ is np.ndarray or isinstance(data, np.generic) else "cuda"
    if device == "cuda":
        device = f"cuda:{data.device.id}"
    return tuple(int(n) for n in data.shape), str(data.dtype), device


def describe(root: Tensor, names: dict | None = None, stats: bool = False) -> GraphDescription:
    """The graph recorded for ``root``. ``names`` maps leaf tensors (by identity: ``{id(w1): "w1"}``, or a dict of
    name -> tensor) to the names shown for them."""
    if not isinstance(root, Tensor):
        raise TypeError(f"describe() takes a Tensor, got {type(root).__name__}")
    if root.grad_fn is None:
        raise RuntimeError("describe(): the tensor has no recorded graph (it does not require grad, or was "
                           "computed under no_grad)")
    by_id = {}
    if names:
        for k, v in names.items():
            if isinstance(k, str) and isinstance(v, Tensor):
                by_id[id(v)] = k
            else:
                by_id[k] = v
    # key of a graph node: the Function object for recorded ops, the tensor for leaves
    order: list = []
    index: dict = {}
    tensor_of: dict = {}  # key -> the tensor holding its output (what stats read)
    meta: dict = {}
    inputs_of: dict = {}

    def key_of(t):
        return t.grad_fn if t.grad_fn is not None else t

    def visit(t):
        k = key_of(t)
        if id(k) not in index:
            index[id(k)] = len(order)
            order.append(k)
            tensor_of[id(k)] = t
            meta[id(k)] = _meta(t._data)
        return index[id(k)]

    visit(root)
    i = 0
    while i < len(order):
        k = order[i]
        ins = []
        if not isinstance(k, Tensor):
            for t in k._inputs_as_recorded():
                if t is not None and (t.grad_fn is not None or t._rg):
                    ins.append(visit(t))
        inputs_of[i] = tuple(ins)
        i += 1
    # depth: the longest path from the root, so an input always sits below every node that consumes it
    depth = [0] * len(order)
    # newest first is a topological order (a node is recorded after each of its inputs), leaves last
    for i in sorted(range(len(order)), key=lambda i: -order[i]._seq if not isinstance(order[i], Tensor) else 1):
        for j in inputs_of[i]:
            depth[j] = max(depth[j], depth[i] + 1)
    out_stats: dict = {}
    grad_stats: dict = {}
    if stats:
        from .graph import grad as _grad

        targets = [tensor_of[id(k)] for k in order]
        grads = _grad([root], targets, retain_graph=True, allow_unused=True)
        for i, (t, g) in enumerate(zip(targets, grads)):
            out_stats[i] = tensor_stats(t._data)
            grad_stats[i] = tensor_stats(g._data) if g is not None else None
    nodes = []
    edges = []
    for i, k in enumerate(order):
        shape, dtype, device = meta[id(k)]
        if isinstance(k, Tensor):
            op, kind, name, grad_fn = "AccumulateGrad", "leaf", by_id.get(id(k)), None
        else:
            cls = type(k)
            # the Function's name, or the one op of several it stands for (a log_softmax of Softmax, a gather)
            op = getattr(k, "op_label", None) or cls.__name__
            kind, name, grad_fn = ("op" if cls.raw else "function"), None, k.name()
        for j in inputs_of[i]:
            edges.append((j, i))
        nodes.append(GraphNode(i, op, kind, shape, dtype, device, inputs_of[i], name, depth[i],
                               out_stats.get(i), grad_stats.get(i), grad_fn))
    shape, dtype, _ = _meta(root._data)
    return GraphDescription(tuple(nodes), shape, dtype, tuple(edges))


from ..tensor import Tensor  # noqa: E402
