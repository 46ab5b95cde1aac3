"""``engine.func``, as ``torch.func``: function transforms over the engine's autograd, for a script written in the
functional style (per-sample gradients, model ensembles, meta-learning):

- ``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``: derivatives of a function of
  tensors (or of dicts, lists and tuples of them: ``grad(loss)(params, x)`` with ``params`` a dict), composable
  (``grad(grad(f))``, ``vmap(grad(f))``);
- ``functional_call(module, params, args)``: a module run with other tensors in place of its parameters and
  buffers; ``stack_module_state(models)``: the parameters of several same-shaped models stacked;
- ``vmap(f, in_dims, out_dims)``: ``f`` mapped over a dimension of its inputs.

Two differences from PyTorch, both in how, not in what: ``vmap`` runs ``f`` once per slice and stacks the results
(PyTorch batches the ops; the results are the same, the time grows with the batch), and ``jacfwd`` computes the
Jacobian in reverse mode (the same matrix)."""

from __future__ import annotations

import contextlib

from . import creation
from . import random as _random
from .autograd import functional as _functional
from .autograd.grad_mode import enable_grad
from .autograd.graph import grad as _autograd_grad
from .tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap", "functional_call",
           "stack_module_state"]


# ---------------------------------------------------------------------------------------------------- pytrees

def _flatten(tree):
    """``(leaves, spec)`` of a nest of dicts, lists and tuples (the leaves: everything else, tensors among them)."""
    if isinstance(tree, dict):
        keys = list(tree)
        parts = [_flatten(tree[k]) for k in keys]
        return [leaf for leaves, _ in parts for leaf in leaves], ("dict", keys, [spec for _, spec in parts])
    if isinstance(tree, (list, tuple)):
        parts = [_flatten(v) for v in tree]
        kind = "list" if isinstance(tree, list) else ("tuple", type(tree))
        return [leaf for leaves, _ in parts for leaf in leaves], (kind, len(tree), [spec for _, spec in parts])
    return [tree], None


def _unflatten(spec, leaves):
    it = iter(leaves)
    out = _build(spec, it)
    return out


def _build(spec, it):
    if spec is None:
        return next(it)
    kind, keys, specs = spec
    if kind == "dict":
        return {k: _build(s, it) for k, s in zip(keys, specs)}
    values = [_build(s, it) for s in specs]
    if kind == "list":
        return values
    cls = kind[1]
    return cls(*values) if hasattr(cls, "_fields") else cls(values)


# ---------------------------------------------------------------------------------------------------- derivatives

def _argnums(argnums, n_args: int, fn: str) -> tuple:
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if not nums:
        raise RuntimeError(f"{fn}: argnums must be non-empty")
    for a in nums:
        if isinstance(a, bool) or not isinstance(a, int):
            raise RuntimeError(f"{fn}: argnums must be int or Tuple[int, ...], got: {type(a).__name__}")
        if not -n_args <= a < n_args:
            raise RuntimeError(f"{fn}: Got argnums={argnums}, but only {n_args} positional inputs")
    return tuple(a % n_args for a in nums)


def _tracked(x):
    """``x`` as an input to differentiate by: connected to an outer transform's input where it is one (so that
    ``grad(grad(f))`` sees the inner gradient's dependence on it), else a leaf of its own."""
    if not isinstance(x, Tensor):
        raise RuntimeError(f"the inputs to differentiate by must be Tensors, got {type(x).__name__}")
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    return x.view_as(x) if x.requires_grad else x.detach().requires_grad_(True)


def _prepare(args, nums):
    """The arguments with those at ``nums`` made differentiable: (new args, their leaves per argnum, specs, whether an
    outer transform tracks any of them)."""
    args = list(args)
    leaves, specs, outer = [], [], False
    for n in nums:
        flat, spec = _flatten(args[n])
        outer = outer or any(isinstance(x, Tensor) and x.requires_grad for x in flat)
        tracked = [_tracked(x) for x in flat]
        args[n] = _unflatten(spec, tracked)
        leaves.append(tracked)
        specs.append(spec)
    return args, leaves, specs, outer


def _reaches_other_leaves(outputs, internal) -> bool:
    """Whether the graph of ``outputs`` reaches a tensor that requires grad other than the transform's own inputs
    (``internal``: their ids): a parameter the function closes over (a gradient penalty's critic). The results then
    stay differentiable with respect to it, as PyTorch's do."""
    seen, stack = set(), [o for o in outputs if isinstance(o, Tensor)]
    while stack:
        t = stack.pop()
        if id(t) in internal:
            continue
        node = t.grad_fn
        if node is None:
            if t.requires_grad:
                return True
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(x for x in node._inputs if x is not None)
    return False


def _grads_of(output, leaves, specs, create_graph, single, grad_outputs=None):
    flat = [x for group in leaves for x in group]
    grads = _autograd_grad(output, flat, grad_outputs=grad_outputs, retain_graph=True, create_graph=create_graph,
                           allow_unused=True)
    grads = [g if g is not None else x.new_zeros(*x.shape) for g, x in zip(grads, flat)]
    if not create_graph:
        grads = [g.detach() for g in grads]
    out, start = [], 0
    for group, spec in zip(leaves, specs):
        out.append(_unflatten(spec, grads[start:start + len(group)]))
        start += len(group)
    return out[0] if single else tuple(out)


def _split_aux(result, has_aux: bool, fn: str):
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(f"{fn}(f)(*args): output of function f should be a tuple: (output, aux) if has_aux is True")
    return result


def _detached(tree, keep: bool):
    if keep:
        return tree
    flat, spec = _flatten(tree)
    return _unflatten(spec, [x.detach() if isinstance(x, Tensor) else x for x in flat])


def grad_and_value(func, argnums=0, has_aux: bool = False):
    """A function returning ``(gradient, value)`` of ``func`` (which returns a 0-d tensor, or ``(it, aux)`` with
    ``has_aux``) with respect to its positional arguments ``argnums`` (each a tensor or a nest of them; the
    gradient has the same nesting)."""

    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args), "grad_and_value(f)(*args)")
        with enable_grad():
            new_args, leaves, specs, outer = _prepare(args, nums)
            output, aux = _split_aux(func(*new_args, **kwargs), has_aux, "grad_and_value")
            if not isinstance(output, Tensor):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(output).__name__}")
            if output.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                                   f"with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            if not output.requires_grad:
                grads = [_unflatten(s, [x.new_zeros(*x.shape) for x in g]) for g, s in zip(leaves, specs)]
                grads = grads[0] if not isinstance(argnums, tuple) else tuple(grads)
            else:
                outer = outer or _reaches_other_leaves([output], {id(x) for g in leaves for x in g})
                grads = _grads_of(output, leaves, specs, outer, not isinstance(argnums, tuple))
        value = output if outer else output.detach()
        if has_aux:
            return grads, (value, _detached(aux, outer))
        return grads, value

    return wrapper


def grad(func, argnums=0, has_aux: bool = False):
    """A function returning the gradient of ``func`` (a 0-d tensor) with respect to its arguments ``argnums``
    (``(gradient, aux)`` with ``has_aux``)."""
    both = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        grads, value = both(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


def vjp(func, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)`` (and aux): ``vjp_fn(cotangents)`` gives the vector-Jacobian product with respect
    to each primal, a tuple, each nested as its primal; it may be called more than once."""
    nums = tuple(range(len(primals)))
    with enable_grad():
        new_args, leaves, specs, outer = _prepare(primals, nums)
        output, aux = _split_aux(func(*new_args), has_aux, "vjp")
    out_flat, out_spec = _flatten(output)
    outer = outer or _reaches_other_leaves(out_flat, {id(x) for g in leaves for x in g})

    def vjp_fn(cotangents):
        cot_flat, _ = _flatten(cotangents)
        if len(cot_flat) != len(out_flat):
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function: {len(cot_flat)} tensors given, {len(out_flat)} expected")
        pairs = [(o, c) for o, c in zip(out_flat, cot_flat) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            return tuple(_unflatten(s, [x.new_zeros(*x.shape) for x in g]) for g, s in zip(leaves, specs))
        with enable_grad():
            return _grads_of([o for o, _ in pairs], leaves, specs, outer, False, grad_outputs=[c for _, c in pairs])

    kept = _detached(output, outer)
    return (kept, vjp_fn, _detached(aux, outer)) if has_aux else (kept, vjp_fn)


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None):
    """A function returning the Jacobian of ``func`` with respect to its arguments ``argnums``: for a tensor output
    and a tensor input, of shape ``output.shape + input.shape`` (nests of them for nests)."""

    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args), "jacrev(f, ...)(*args)")
        with enable_grad():
            new_args, leaves, specs, outer = _prepare(args, nums)
            output, aux = _split_aux(func(*new_args, **kwargs), has_aux, "jacrev")
        out_flat, out_spec = _flatten(output)
        flat_in = [x for group in leaves for x in group]
        outer = outer or _reaches_other_leaves(out_flat, {id(x) for x in flat_in})
        jac_per_out = []
        for o in out_flat:
            rows = []
            for i in range(o.numel()):
                if o.requires_grad:
                    with enable_grad():
                        gs = _autograd_grad(o.reshape(-1)[i], flat_in, retain_graph=True, create_graph=outer,
                                            allow_unused=True)
                else:
                    gs = [None] * len(flat_in)
                rows.append([g if g is not None else x.new_zeros(*x.shape) for g, x in zip(gs, flat_in)])
            blocks = []
            for j, x in enumerate(flat_in):
                stacked = creation.stack([r[j] for r in rows]) if rows else x.new_zeros(0, *x.shape)
                block = stacked.reshape(*o.shape, *x.shape)
                blocks.append(block if outer else block.detach())
            per_arg, start = [], 0
            for group, spec in zip(leaves, specs):
                per_arg.append(_unflatten(spec, blocks[start:start + len(group)]))
                start += len(group)
            jac_per_out.append(per_arg[0] if not isinstance(argnums, tuple) else tuple(per_arg))
        jac = _unflatten(out_spec, jac_per_out)
        return (jac, _detached(aux, outer)) if has_aux else jac

    return wrapper


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """:func:`jacrev`'s Jacobian (computed here in reverse mode: the same matrix)."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func, argnums=0):
    """A function returning the Hessian of ``func`` (a 0-d tensor) with respect to its arguments ``argnums``."""
    return jacfwd(jacrev(func, argnums), argnums)


def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product (tensors, tuples of them)."""
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples. E.g. jvp(f, (x,), "
                           "(t,))")
    if len(primals) != len(tangents):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                           f"primals with structure {len(primals)} and tangents with structure {len(tangents)}")
    aux_box = []

    def plain(*xs):
        out = func(*xs)
        if has_aux:
            out, aux = _split_aux(out, True, "jvp")
            aux_box.append(aux)
        return out

    outer = any(p.requires_grad for p in primals)
    output, product = _functional.jvp(plain, primals, tangents, create_graph=outer)
    if has_aux:
        return output, product, _detached(aux_box[0], outer)
    return output, product


# ---------------------------------------------------------------------------------------------------- vmap

def _dims_for(in_dims, args):
    if isinstance(in_dims, int) or in_dims is None:
        return [in_dims] * len(args)
    if not isinstance(in_dims, (tuple, list)) or len(in_dims) != len(args):
        raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the structure of "
                         f"`inputs`. in_dims has structure {in_dims!r} but inputs has {len(args)} positional "
                         "arguments")
    return list(in_dims)


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """``func`` mapped over dimension ``in_dims`` of its positional inputs (an int for all, or one per input: an
    int, None for an input passed whole, or a nest matching the input's), the results stacked along ``out_dims``.
    Runs ``func`` once per slice (the same results as PyTorch's batched ops). ``randomness``: ``"error"`` refuses a
    random draw inside, ``"different"`` draws anew for each slice, ``"same"`` gives every slice the same draws (of
    the CPU generator, which these modes watch: on a GPU each slice draws anew)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    def wrapper(*args, **kwargs):
        dims = _dims_for(in_dims, args)
        flat_args, leaf_dims, specs = [], [], []
        for arg, d in zip(args, dims):
            flat, spec = _flatten(arg)
            if isinstance(d, (int, type(None))):
                ds = [d if isinstance(x, Tensor) else None for x in flat]
            else:
                ds, _ = _flatten(d)
                if len(ds) != len(flat):
                    raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                                     "structure of `inputs`")
            flat_args.append(flat)
            leaf_dims.append(ds)
            specs.append(spec)
        sizes = set()
        for flat, ds in zip(flat_args, leaf_dims):
            for x, d in zip(flat, ds):
                if d is None:
                    continue
                if not isinstance(x, Tensor):
                    raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but the "
                                     f"input is of type {type(x)}. We cannot vmap over non-Tensor arguments")
                if not -x.dim() <= d < x.dim():
                    raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but "
                                     f"that input is a Tensor of dimensionality {x.dim()} so expected in_dim to "
                                     f"satisfy -{x.dim()} <= in_dim < {x.dim()}.")
                sizes.add(x.shape[d])
        if not sizes:
            raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): at least one input must be mapped over "
                             f"(got in_dims={in_dims})")
        if len(sizes) > 1:
            raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): Expected all tensors to have the same size "
                             f"in the mapped dimension, got sizes {sorted(sizes)} for the mapped dimension")
        (batch,) = sizes
        state = _random.get_state_bytes()
        results = []
        for i in range(batch):
            if randomness == "same":
                _random.set_state_bytes(state)
            call = []
            for flat, ds, spec in zip(flat_args, leaf_dims, specs):
                call.append(_unflatten(spec, [x if d is None else x.select(d, i) for x, d in zip(flat, ds)]))
            results.append(func(*call, **kwargs))
            if randomness == "error" and i == 0 and _random.get_state_bytes() != state:
                raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                                   "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
        out_flat0, out_spec = _flatten(results[0])
        per_result = [_flatten(r)[0] for r in results]
        if isinstance(out_dims, int) or out_dims is None:
            odims = [out_dims] * len(out_flat0)
        else:
            odims, _ = _flatten(out_dims)
            if len(odims) != len(out_flat0):
                raise ValueError(f"vmap(f, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                                 "structure of `outputs`")
        stacked = []
        for k, (first, od) in enumerate(zip(out_flat0, odims)):
            if not isinstance(first, Tensor):
                raise ValueError(f"vmap(f, ...): `f` must only return Tensors, got type {type(first)}. Did you mean "
                                 "to set out_dims= to None for output?")
            if od is None:
                stacked.append(first)
            else:
                stacked.append(creation.stack([r[k] for r in per_result], dim=od))
        return _unflatten(out_spec, stacked)

    return wrapper


# ---------------------------------------------------------------------------------------------------- modules

def _owner(module, dotted: str):
    *path, leaf = dotted.split(".")
    for part in path:
        module = getattr(module, part)
    return module, leaf


@contextlib.contextmanager
def _swapped(module, tensors: dict):
    """``module``'s parameters and buffers named in ``tensors`` (dotted names) replaced by them inside the block."""
    saved = []
    try:
        for name, value in tensors.items():
            owner, leaf = _owner(module, name)
            d = owner.__dict__
            for table in ("_parameters", "_buffers"):
                if leaf in d.get(table, ()):
                    saved.append((d[table], leaf, d[table][leaf]))
                    d[table][leaf] = value
                    break
            else:
                saved.append((None, (owner, leaf), owner.__dict__.get(leaf, _MISSING)))
                object.__setattr__(owner, leaf, value)
        yield
    finally:
        for table, leaf, old in reversed(saved):
            if table is None:
                owner, name = leaf
                if old is _MISSING:
                    owner.__dict__.pop(name, None)
                else:
                    object.__setattr__(owner, name, old)
            else:
                table[leaf] = old


_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights: bool = True,
                    strict: bool = False):
    """``module(*args, **kwargs)`` with the tensors of ``parameter_and_buffer_dicts`` (a dict, or a tuple of dicts,
    by dotted names as ``named_parameters()`` gives them) in place of its own, for that call only. With
    ``tie_weights`` a parameter tied to another (the same tensor under two names) follows the one given; with
    ``strict`` every parameter and buffer must be given, and no other name."""
    dicts = parameter_and_buffer_dicts if isinstance(parameter_and_buffer_dicts, (tuple, list)) else \
        (parameter_and_buffer_dicts,)
    tensors: dict = {}
    for d in dicts:
        if not isinstance(d, dict):
            raise ValueError(f"Expected all elements of parameter_and_buffer_dicts to be dictionaries, got "
                             f"{type(d).__name__}")
        repeated = set(d) & set(tensors)
        if repeated:
            raise ValueError(f"{sorted(repeated)} appeared in multiple dictionaries; behavior of functional call is "
                             "ambiguous")
        tensors.update(d)
    own = dict(module.named_parameters())
    own.update(dict(module.named_buffers()))
    if tie_weights:
        by_identity: dict = {}
        for name, t in _all_named(module):
            by_identity.setdefault(id(t), []).append(name)
        for names in by_identity.values():
            given = [n for n in names if n in tensors]
            if given:
                for n in names:
                    tensors.setdefault(n, tensors[given[0]])
    if strict:
        missing = sorted(set(own) - set(tensors))
        unexpected = sorted(set(tensors) - set(own) - {n for n, _ in _all_named(module)})
        if missing or unexpected:
            lines = []
            if unexpected:
                lines.append("\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
            if missing:
                lines.append("\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n" + "\n".join(lines))
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, tensors):
        return module(*args, **(kwargs or {}))


def _all_named(module):
    """Every (dotted name, tensor) of the module's parameters and buffers, the tied ones under each of their
    names."""
    out = []
    for prefix, sub in module.named_modules():
        lead = prefix + "." if prefix else ""
        for name, p in sub.__dict__.get("_parameters", {}).items():
            if p is not None:
                out.append((lead + name, p))
        for name, b in sub.__dict__.get("_buffers", {}).items():
            if b is not None:
                out.append((lead + name, b))
    return out


def stack_module_state(models):
    """``(params, buffers)``: each of the models' (same-shaped) parameters and buffers stacked along a new first
    dimension, by name: the state of an ensemble for ``vmap(functional_call...)``. The stacked parameters are new
    leaves that require grad where the models' do."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {}
    for name, _ in models[0].named_parameters():
        group = [dict(m.named_parameters())[name] for m in models]
        stacked = creation.stack([p.detach() for p in group])
        params[name] = stacked.requires_grad_(True) if all(p.requires_grad for p in group) else stacked
    buffers = {name: creation.stack([dict(m.named_buffers())[name] for m in models])
               for name, _ in models[0].named_buffers()}
    return params, buffers
