"""``torch.autograd.functional``: a function's Jacobian, its vector products and its Hessian, for one who checks an
engine's derivatives whole (every output against every input), built on ``autograd.grad``: one backward pass per
output element. ``create_graph=True`` keeps the results differentiable, and ``hessian`` is the Jacobian of the
gradient, through the recorded backward of engine.autograd.higher."""

from __future__ import annotations

from contextlib import nullcontext as _nullcontext

from ..creation import stack
from ..tensor import Tensor
from . import higher as _higher  # noqa: F401 - registers the walk create_graph=True runs (engine.autograd.higher)
from .grad_mode import enable_grad
from .graph import grad

__all__ = ["jacobian", "vjp", "jvp", "hessian"]


def _as_tuple(value, what: str) -> tuple[tuple, bool]:
    if isinstance(value, Tensor):
        return (value,), False
    if isinstance(value, (tuple, list)) and all(isinstance(v, Tensor) for v in value):
        return tuple(value), True
    raise TypeError(f"The {what} given to jacobian/vjp/jvp must be either a Tensor or a tuple of Tensors but the "
                    f"given {what} has type {type(value).__name__}.")


def _run(func, inputs, create_graph=False):
    """``func`` on leaves of its own; with ``create_graph`` the inputs themselves where they require a gradient (so
    that the results stay connected to them, as PyTorch's)."""
    with enable_grad():
        leaves = tuple(t if create_graph and t.requires_grad else t.detach().requires_grad_(True) for t in inputs)
        outputs = func(*leaves)
    return leaves, outputs


def _checked_v(v, against, what: str) -> tuple:
    """``v`` as a tuple, each of the shape of its ``what`` (output or input), or PyTorch's error."""
    vs, _ = _as_tuple(v, "v")
    for t, w in zip(against, vs):
        if tuple(t.shape) != tuple(w.shape):
            raise RuntimeError(f"Mismatch in shape: {what} has shape {list(t.shape)} while v has shape "
                               f"{list(w.shape)}")
    return vs


def _kept(t, create_graph):
    return t if create_graph else t.detach()


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for one input and one output, a tensor of shape
    ``output.shape + input.shape``; tuples of them otherwise, as PyTorch's (outputs first, then inputs). An input
    an output does not depend on gets zeros (``strict=True`` refuses it)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    inputs, many_in = _as_tuple(inputs, "inputs")
    leaves, outputs = _run(func, inputs, create_graph)
    outputs, many_out = _as_tuple(outputs, "outputs")
    table = []
    for i, out in enumerate(outputs):
        rows = []
        flat = out.reshape(-1)
        for k in range(flat.numel()):
            if not flat.requires_grad:
                grads = (None,) * len(leaves)
            else:
                grads = grad(flat[k], leaves, retain_graph=True, create_graph=create_graph, allow_unused=True)
            rows.append(grads)
        per_input = []
        for j, leaf in enumerate(leaves):
            if strict and any(r[j] is None for r in rows):
                raise RuntimeError(f"Output {i} of the user-provided function is independent of input {j}. This is "
                                   "not allowed in strict mode.")
            parts = [leaf.new_zeros(*leaf.shape) if r[j] is None else r[j] for r in rows]
            stacked = stack([_kept(p, create_graph) for p in parts]) if parts else leaf.new_zeros(0, *leaf.shape)
            per_input.append(stacked.reshape(*out.shape, *leaf.shape))
        table.append(tuple(per_input) if many_in else per_input[0])
    return tuple(table) if many_out else table[0]


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product, one backward pass (``v`` may be left out for an
    output of one element)."""
    inputs, many_in = _as_tuple(inputs, "inputs")
    leaves, outputs = _run(func, inputs, create_graph)
    outs, many_out = _as_tuple(outputs, "outputs")
    if v is None:
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor "
                               "with a single element.")
        vs = None
    else:
        vs = _checked_v(v, outs, "output")
    grads = grad(outs, leaves, grad_outputs=vs, create_graph=create_graph, allow_unused=True)
    if strict and any(g is None for g in grads):
        raise RuntimeError("The output of the user-provided function is independent of an input. This is not allowed "
                           "in strict mode.")
    grads = tuple(leaf.new_zeros(*leaf.shape) if g is None else _kept(g, create_graph)
                  for g, leaf in zip(grads, leaves))
    kept = tuple(_kept(o, create_graph) for o in outs)
    return (kept if many_out else kept[0]), (grads if many_in else grads[0])


def _grads_of_some(outputs, inputs, grad_outputs, create_graph):
    """``grad(outputs, inputs, grad_outputs)`` over the outputs that require a gradient (with their
    ``grad_outputs``); None for each input none of them reaches (PyTorch's ``_autograd_grad``)."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad([o for o, _ in pairs], inputs, grad_outputs=[g for _, g in pairs], retain_graph=True,
                create_graph=create_graph, allow_unused=True)


def _jvp_from_jacobian(func, inputs_t, outs, many_out, vs, create_graph, strict):
    """``J v`` from the whole Jacobian (one backward pass per output element), for where the double-backward trick
    cannot see: an op of ``func`` with no differentiable backward, a user's Function whose backward is not written
    in Tensor ops."""
    jac = jacobian(func, inputs_t, create_graph=create_graph, strict=strict)  # (a row per output, a tuple each)
    products = []
    for o, row in zip(outs, jac if many_out else (jac,)):
        total = None
        for j, w in zip(row, vs):
            term = (j.reshape(o.numel(), -1) @ w.reshape(-1).to(j.dtype)).reshape(*o.shape)
            total = term if total is None else total + term
        products.append(total)
    return products


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)``: the Jacobian-vector product by PyTorch's double-backward trick: the vector-Jacobian
    product ``u -> J^T u`` recorded for a ``u`` that requires a gradient (it is linear in ``u``), then
    differentiated with respect to ``u`` in the direction ``v``: ``func`` runs once, and two backward passes give
    the product whatever the sizes. Where that cannot see the whole derivative (an op of ``func`` whose backward
    the engine cannot record, or a user's Function whose backward is not written in Tensor ops: its gradient is a
    constant of the recorded graph), the product comes from the whole Jacobian instead, one backward pass per
    output element: the same result, slower."""
    inputs_t, many_in = _as_tuple(inputs, "inputs")
    if v is None:
        if len(inputs_t) != 1 or inputs_t[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                               "Tensor with a single element.")
        vs = tuple(t.new_ones(*t.shape) for t in inputs_t)
    else:
        vs = _checked_v(v, inputs_t, "input")
        if len(vs) != len(inputs_t):
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(inputs_t)} but got {len(vs)}.")
    leaves, outputs = _run(func, inputs_t, create_graph)
    outs, many_out = _as_tuple(outputs, "outputs")
    if strict:
        for i, o in enumerate(outs):
            if not o.requires_grad:
                raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The "
                                   "outputs must be computed in a differentiable manner from the input when running "
                                   "in strict mode.")
    products = None
    with enable_grad():
        us = tuple(o.new_zeros(*o.shape).requires_grad_(True) for o in outs)
        try:
            with _higher.constants_from_user_functions() as seen:
                grad_inputs = _grads_of_some(outs, leaves, us, create_graph=True)
        except NotImplementedError:  # an op the recording walk refuses by name
            grad_inputs = None
        else:
            if seen or any(g is not None and not g.requires_grad for g in grad_inputs):
                grad_inputs = None  # (part of the derivative is a constant the second pass would not see)
    if grad_inputs is None:
        products = _jvp_from_jacobian(func, inputs_t, outs, many_out, vs, create_graph, strict)
    else:
        for i, g in enumerate(grad_inputs):
            if strict and g is None:
                raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is "
                                   "not allowed in strict mode.")
        pairs = [(g, w) for g, w in zip(grad_inputs, vs) if g is not None]
        with enable_grad() if create_graph else _nullcontext():
            found = (_grads_of_some([g for g, _ in pairs], us, [w.to(g.dtype) for g, w in pairs], create_graph)
                     if pairs else (None,) * len(us))
        products = []
        for i, (p, o) in enumerate(zip(found, outs)):
            if p is None:
                if strict:
                    raise RuntimeError(f"The gradient with respect to the input is independent of entry {i} in the "
                                       "grad_outputs when using the double backward trick to compute forward mode "
                                       "gradients. This is not allowed in strict mode.")
                p = o.new_zeros(*o.shape)
            elif strict and create_graph and not p.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. This "
                                   "is not allowed in strict mode when create_graph=True.")
            products.append(_kept(p, create_graph))
    kept = tuple(_kept(o, create_graph) for o in outs)
    return (kept if many_out else kept[0]), (tuple(products) if many_out else products[0])


def hessian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of ``func`` (which returns one element) at ``inputs``: the Jacobian of its gradient, the gradient
    recorded (``create_graph=True``) so that it can be differentiated once more. One input: a tensor of shape
    ``input.shape + input.shape``; several: a tuple of tuples, as PyTorch's."""
    inputs_t, many_in = _as_tuple(inputs, "inputs")

    def gradient(*xs):
        out = func(*xs)
        if not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        if not out.requires_grad:
            grads = (None,) * len(xs)
        else:
            grads = grad(out.reshape(()), xs, create_graph=True, allow_unused=True)
        if strict and any(g is None for g in grads):
            raise RuntimeError("The output of the user-provided function is independent of an input. This is not "
                               "allowed in strict mode.")
        grads = tuple(x.new_zeros(*x.shape) if g is None else g for g, x in zip(grads, xs))
        return grads if many_in else grads[0]

    return jacobian(gradient, inputs if many_in else inputs_t[0], create_graph=create_graph, strict=False,
                    strategy=outer_jacobian_strategy)


def _second_order(name, func, inputs, v, create_graph, strict):
    """(func(inputs), v^T H) of a function that returns one element: its gradient recorded, then differentiated
    against ``v``. H is symmetric, so this is also H v (``hvp``), as PyTorch's answers agree."""
    inputs_t, many_in = _as_tuple(inputs, "inputs")
    leaves, out = _run(func, inputs_t, create_graph)
    if not isinstance(out, Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if out.numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single element")
    if v is None:
        if not all(x.numel() == 1 for x in leaves):
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                               "Tensor with a single element.")
        vs = tuple(x.new_ones(*x.shape) for x in leaves)
    else:
        vs = _checked_v(v, leaves, "input")
    with enable_grad():  # (the gradient is recorded, whatever the caller's grad mode)
        first = grad(out.reshape(()), leaves, create_graph=True, allow_unused=True) if out.requires_grad else \
            (None,) * len(leaves)
    if strict and any(g is None for g in first):
        raise RuntimeError("The output of the user-provided function is independent of an input. This is not allowed "
                           "in strict mode.")
    used = [(g, w) for g, w in zip(first, vs) if g is not None and g.requires_grad]
    with enable_grad():
        second = grad([g for g, _ in used], leaves, grad_outputs=[w for _, w in used], create_graph=create_graph,
                      allow_unused=True) if used else (None,) * len(leaves)
    if strict and any(s is None for s in second):
        raise RuntimeError("The jacobian of the user-provided function is independent of an input. This is not "
                           "allowed in strict mode.")
    second = tuple(x.new_zeros(*x.shape) if s is None else _kept(s, create_graph) for s, x in zip(second, leaves))
    return _kept(out, create_graph), (second if many_in else second[0])


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)``: the vector-Hessian product of a function that returns one element."""
    return _second_order("vhp", func, inputs, v, create_graph, strict)


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)``: the Hessian-vector product of a function that returns one element."""
    return _second_order("hvp", func, inputs, v, create_graph, strict)


__all__ += ["vhp", "hvp"]
