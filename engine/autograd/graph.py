"""The backward walk over the recorded graph: ``backward``, ``grad``, and what ``Tensor.backward`` calls.

The walk is iterative (no recursion limit on deep graphs): it runs the newest recorded node with a pending
gradient first (a heap on recording order), so each node runs once, after all its consumers. Gradients are
accumulated, and broadcasting is undone in one place (:func:`unbroadcast`). A ``.grad`` whose ``zero_()`` is
still to be written (``engine.tensor._LazyZeros``) takes the new gradient's array instead of adding it to
zeros, when that array is free to be given away.

``Tensor.backward()`` on one root runs this walk compiled (``_cgraph.c``, built at install where a C compiler is
at hand: :mod:`._compiled`): the same steps, calling the same helpers here for everything but the bookkeeping.
``_run`` below is the reference and the fallback, and runs whatever the compiled walk leaves to it
(``autograd.grad``, several roots, a multi-output root). The engine's autograd tests run through both.
"""

from __future__ import annotations

import threading
import weakref
from heapq import heappop as _heappop
from heapq import heappush as _heappush

import numpy as np

from ..backend import xp_of
from ..dtypes import cast_gradient, from_numpy_dtype
from ..errors import FREED_GRAPH
from . import _compiled, _writes

__all__ = ["backward", "grad", "unbroadcast"]

# engine.profiler's recorder while a profile() block runs: told of each node's backward, and undoes broadcasting
# (its unbroadcast: this module's, timed as a row of its own)
_observer = None
_retaining = False  # whether any node has had a retain_grad() or a hook (until then the walk does not ask each node)
_leaf_hooks = False  # whether any leaf has had register_hook() (until then accumulating does not look for them)
_node_hooks = False  # whether any node has had register_hook()/register_prehook() (until then none is asked)
_anomaly = None  # while anomaly detection is on (engine.autograd.anomaly_mode): its check around each node's backward
_held = threading.local()  # .leaves: id -> (leaf, summed gradient) of the hooked leaves, while a walk runs


def unbroadcast(g, shape):
    """Sum ``g`` down to ``shape``: the one place where broadcasting is undone."""
    if g.shape == shape:
        return g
    extra = g.ndim - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    if isinstance(g, np.generic):
        g = np.asarray(g)
    return g.reshape(shape) if g.shape != shape else g


def _add_pending(pending, node, index, g):
    """Add ``g`` to what has arrived for output ``index`` of ``node``: the gradient itself for a single-output
    node, a list of slots for a multi-output one."""
    if node._n_out == 1:
        prev = pending.get(node)
        pending[node] = g if prev is None else prev + g
        return
    slots = pending.get(node)
    if slots is None:
        slots = pending[node] = [None] * node._n_out
    slots[index] = g if slots[index] is None else slots[index] + g


def _run(roots, root_grads, retain_graph, capture=None):
    """Propagate ``root_grads`` from ``roots`` through the graph.

    Without ``capture``: accumulate into the leaves' ``.grad`` (Tensor.backward). With ``capture`` (a dict
    keyed by id of the wanted tensors): collect their gradients there and touch no ``.grad`` (autograd.grad).

    Nodes run newest first (``_seq``, numbered at recording). A node's consumers were all recorded after
    it, so by the time it is the newest node with a pending gradient, every gradient it will receive has
    arrived: no pass over the graph to count consumers is needed, and nodes the roots do not reach are
    never visited.
    """
    if not _leaf_hooks:
        return _walk(roots, root_grads, retain_graph, capture)
    try:
        _walk(roots, root_grads, retain_graph, capture)
    except BaseException:
        _flush_hooked_leaves(set(), ok=False)
        raise
    _flush_hooked_leaves(set())


def edge_masks(roots, capture, wanted_nodes):
    """For ``autograd.grad`` (``capture``: id -> None of the wanted tensors): the nodes a path from ``roots`` to a
    wanted tensor runs through, each with the inputs that path leaves it by. The walk runs only these nodes, each
    with ``needs_input_grad`` narrowed by its mask (False: an input that needs a gradient but leads to no wanted
    tensor; ``()`` for a wanted non-leaf's node with nothing wanted behind it: delivered, not run), as PyTorch's
    engine does: a gradient nobody asked for is not computed, nor refused (``grad(igamma(a, x), x)`` with ``a``
    requiring grad). Two passes: the nodes the roots reach, then their masks oldest first (a node's inputs were
    made before it); None after the first where nothing is left out (every leaf it met that needs a gradient is
    wanted, and no non-leaf is)."""
    last = _writes.last
    seen: set = set()
    order: list = []
    stack = [t.grad_fn for t in roots if t.grad_fn is not None]
    prune = bool(wanted_nodes)  # whether anything is to be left out: a wanted non-leaf, or a leaf not wanted
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        old = node._seq < last
        for t in node._inputs:
            if t is not None:
                if old:
                    t = t._as_it_was(node._seq)
                fn = t.grad_fn
                if fn is None:
                    if not prune and t._rg and id(t) not in capture:
                        prune = True
                elif fn not in seen:
                    stack.append(fn)
    if not prune:
        return None  # every leaf behind the roots that needs a gradient is wanted: every node runs, as it is
    order.sort(key=_seq_of)
    masks: dict = {}
    for node in order:
        old = node._seq < last
        mask = []
        needed = False
        for t in node._inputs:
            if t is None:
                mask.append(True)  # (True: nothing to narrow; the walk skips it)
                continue
            if old:
                t = t._as_it_was(node._seq)
            fn = t.grad_fn
            if fn is None:
                wanted = id(t) in capture
                mask.append(wanted or not t._rg)
            else:
                wanted = fn in masks
                mask.append(wanted)
            needed = needed or wanted
        if needed:
            masks[node] = tuple(mask)
        elif node in wanted_nodes:
            masks[node] = ()  # (a wanted non-leaf's node with nothing wanted behind it: delivered, not run)
    return masks


def _seq_of(node):
    return node._seq


def _walk(roots, root_grads, retain_graph, capture):
    if _cwalk is not None and capture is None and len(roots) == 1 and _anomaly is None and not (
            _node_hooks and _compiled.set_node_hooks is None):
        node = roots[0].grad_fn
        if node is not None and node._n_out == 1:  # this function's walk, compiled (_cgraph.c)
            _cwalk(node, root_grads[0], retain_graph, _observer, _deliver_retained if _retaining else None,
                   _writes.last, _check_writes, _writes._written, Tensor._as_it_was)
            return
    pending: dict = {}
    heap: list = []
    for t, g in zip(roots, root_grads):
        node = t.grad_fn
        if node is None:
            if capture is not None:
                if id(t) in capture:
                    capture[id(t)] = g if capture[id(t)] is None else capture[id(t)] + g
            else:
                _accumulate_leaf(t, g, set())
            continue
        if node not in pending:
            _heappush(heap, (-node._seq, node))
        _add_pending(pending, node, t._out_index, g)

    # non-leaf tensors whose gradient autograd.grad wants, by the node that made them
    wanted_nodes: dict = {}
    if capture is not None:
        for t in capture.pop("__targets__", ()):
            wanted_nodes.setdefault(t.grad_fn, []).append(t)

    masks = edge_masks(roots, capture, wanted_nodes) if capture is not None else None  # (None: all of them)
    assigned: set = set()
    while heap:
        node = _heappop(heap)[1]
        gouts = pending.pop(node)
        if masks is not None:
            mask = masks.get(node)
            if mask is None:  # no wanted tensor lies behind it
                continue
        if (_retaining and node._retained is not None) or (wanted_nodes and node in wanted_nodes):
            delivered = _deliver_nonleaf(node, [gouts] if node._n_out == 1 else gouts, capture, wanted_nodes)
            gouts = delivered[0] if node._n_out == 1 else delivered  # as a hook left them
        if masks is not None and not mask:
            continue  # (a wanted non-leaf's node, with nothing wanted behind it)
        older = node._seq < _writes.last  # than the newest in-place write: what it saved, and its inputs, may
        if older:  # have been written or rebound since
            _check_writes(node)
        if _observer is not None:
            token = _observer.node_begin(node)
        if masks is None:
            gins = _backward_of(node, gouts) if _anomaly is None else _anomaly(node, gouts, _backward_of)
        else:
            gins = with_mask(node, gouts, mask, _backward_of if _anomaly is None else
                             lambda n, g: _anomaly(n, g, _backward_of))
        if _observer is not None:
            _observer.node_end(node, token)
        for k, (inp, g) in enumerate(zip(node._inputs, gins)):
            if inp is None or g is None or (masks is not None and not mask[k]):
                continue
            if older:  # an input an in-place op has rebound since is taken as it was then
                inp = inp._as_it_was(node._seq)
            data = inp._data
            if g.shape != data.shape:
                g = unbroadcast(g, data.shape) if _observer is None else _observer.unbroadcast(g, data.shape)
            dtype = g.dtype
            if dtype is not data.dtype and dtype != data.dtype:
                g = cast_gradient(g, data.dtype)  # a mixed-dtype op: each input gets its gradient in its own dtype
            fn = inp.grad_fn
            if fn is None:
                if capture is None:
                    _accumulate_leaf(inp, g, assigned)
                elif id(inp) in capture:
                    prev = capture[id(inp)]
                    capture[id(inp)] = g if prev is None else prev + g
            elif fn._n_out == 1:
                prev = pending.get(fn)
                if prev is None:
                    pending[fn] = g
                    _heappush(heap, (-fn._seq, fn))
                else:
                    pending[fn] = prev + g
            else:
                if fn not in pending:
                    _heappush(heap, (-fn._seq, fn))
                _add_pending(pending, fn, inp._out_index, g)
        if not retain_graph:  # free what the node saved (built-ins: .saved; a user's Function: ._saved)
            if node.saved is not None:
                node._freed = True
                node.saved = None
            if not node.raw and node._saved:  # (built-ins never save_for_backward)
                node._freed = True
                node._saved = ()


def _add_node_hook(node, table_name, fn):
    """``fn`` into the node's ``_pre_hooks`` or ``_post_hooks``; a handle whose ``remove()`` takes it away. From
    now on the walks ask each node for its hooks (the compiled one hands a node that has some to
    :func:`_backward_of`; a build without that runs every walk here)."""
    from collections import OrderedDict

    from ..utils.hooks import RemovableHandle

    global _node_hooks
    table = node.__dict__.get(table_name)
    if table is None:
        table = OrderedDict()
        setattr(node, table_name, table)
    handle = RemovableHandle(table)
    table[handle.id] = fn
    _node_hooks = True
    if _compiled.set_node_hooks is not None:
        _compiled.set_node_hooks(True)
    return handle


def hook_result(hook, result, n):
    """What a node's hook returned, as a tuple of ``n`` gradients (PyTorch's error where it is not)."""
    result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if len(result) != n:
        raise RuntimeError(f"hook '{getattr(hook, '__name__', type(hook).__name__)}' has returned an incorrect number "
                           f"of values (got {len(result)}, but expected {n})")
    return result


def _node_pre_hooks(node, gouts):
    """``node``'s register_prehook() hooks on the gradients of its outputs (Tensors; None for an output no path
    used), each free to replace them; back as the walk holds them (an array, or a slot per output)."""
    single = node._n_out == 1
    grads = tuple(None if g is None else _wrap(g) for g in ([gouts] if single else gouts))
    for hook in list(node._pre_hooks.values()):
        result = hook(grads)
        if result is not None:
            grads = hook_result(hook, result, len(grads))
    arrays = [None if g is None else g._data for g in grads]
    return arrays[0] if single else arrays


def edge_gradients(node, gins) -> list:
    """``(position, input, gradient)`` for each edge of ``node``, in ``next_functions``' order (None where there is
    no input or no gradient): what its register_hook() hooks see, in either walk."""
    inputs = node._inputs
    return [(k, inputs[k] if k < len(inputs) else None, gins[k] if k < len(gins) else None)
            for k in node._edge_positions()]


def by_position(node, edges, grads, gins) -> tuple:
    """The hooks' gradients, one per edge, back in the node's argument positions (None elsewhere)."""
    out = [None] * max(len(node._inputs), len(gins))
    for (k, _, _), g in zip(edges, grads):
        out[k] = g
    return tuple(out)


def _node_post_hooks(node, gins, gouts):
    """``node``'s register_hook() hooks on (grad_inputs, grad_outputs): one gradient per edge of the node (as
    ``next_functions`` lists them), each already of its input's shape and dtype (None where the input gets none),
    free to be replaced."""
    edges = edge_gradients(node, gins)
    grads = []
    for _, inp, g in edges:
        if inp is None or g is None:
            grads.append(None)
            continue
        data = inp._data
        if g.shape != data.shape:
            g = unbroadcast(g, data.shape)
        if g.dtype != data.dtype:
            g = cast_gradient(g, data.dtype)
        grads.append(_wrap(g))
    grads = tuple(grads)
    outs = tuple(None if g is None else _wrap(g) for g in ([gouts] if node._n_out == 1 else gouts))
    for hook in list(node._post_hooks.values()):
        result = hook(grads, outs)
        if result is not None:
            grads = hook_result(hook, result, len(grads))
    return by_position(node, edges, [None if g is None else g._data for g in grads], gins)


def with_mask(node, gouts, mask, run):
    """``run(node, gouts)`` with the built-in node's ``needs_input_grad`` narrowed to ``mask`` (and put back): it
    computes only the gradients a wanted tensor lies behind. A user's Function keeps its own, as in PyTorch."""
    if False not in mask or not node.raw:
        return run(node, gouts)
    own = node.needs_input_grad
    # (None stays None: a number's position is no edge, and the node's hooks count its edges from these)
    narrowed = tuple(n if n is None else (bool(n) and m) for n, m in zip(own, mask)) + tuple(own[len(mask):])
    if narrowed == tuple(own):
        return run(node, gouts)
    node.needs_input_grad = narrowed
    try:
        return run(node, gouts)
    finally:
        node.needs_input_grad = own


def _check_writes(node):
    """Refuse to run ``node``'s backward when a value it saved has been written in place since it was recorded
    (PyTorch's check of a saved tensor's version). The walks call it only for a node older than the newest write
    (:mod:`._writes`). A built-in is checked on the arrays in its ``saved`` that the gradients it owes read
    (``saved_uses``); a user's Function on the tensors it gave ``save_for_backward``, which an in-place op may also
    have rebound to a new array."""
    seq = node._seq
    if node.raw:
        seq = max(seq, getattr(node, "_own_write", seq))  # (an in-place op's own write: _saved_as_written)
        saved = node.saved
        if saved is None:
            return  # freed: the walk says so
        uses, needs = node.saved_uses, node.needs_input_grad
        for k, arr in enumerate(saved if saved.__class__ is tuple else (saved,)):
            if uses is not None and uses[k] is not None and not any(needs[j] for j in uses[k] if j < len(needs)):
                continue  # read only for a gradient no input needs (w in w * x where x needs none)
            if hasattr(arr, "base") and _writes.written_after(arr, seq):
                raise RuntimeError(modified_message(node, arr))
        return
    for t, arr in zip(node._saved, node._saved_arrays):
        if arr is not None and (t._data is not arr or _writes.written_after(arr, seq)):
            raise RuntimeError(modified_message(node, arr))


def modified_message(node, arr, what="saved") -> str:
    """PyTorch's words for a saved value written in place (its first sentence, which is what one searches for)."""
    kind = "torch." if isinstance(arr, np.ndarray) else "torch.cuda."
    try:
        kind += from_numpy_dtype(arr.dtype).legacy_name
    except (KeyError, TypeError, ValueError):
        kind += "Tensor"
    return (f"one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[{kind} {list(arr.shape)}], which {node.name()} {what}, was written in place after the forward pass "
            f"used it. Hint: make the in-place change after backward(), or on a clone() (x = x.clone() first), so "
            f"that the value the forward used stays as it was.")


def _backward_of(node, gouts):
    """A node's backward on what arrived for its outputs (the gradient of a single-output node, a slot per output
    of a multi-output one; an output no path used gets zeros): its gradients, one per input, as a tuple. The
    node's own hooks (register_prehook, register_hook) around it."""
    if _node_hooks and (node._pre_hooks or node._post_hooks):  # (no node asked for before any has hooks)
        if node._pre_hooks:
            gouts = _node_pre_hooks(node, gouts)
        gins = _plain_backward_of(node, gouts)
        return _node_post_hooks(node, gins, gouts) if node._post_hooks else gins
    return _plain_backward_of(node, gouts)


def _plain_backward_of(node, gouts):
    single = node._n_out == 1
    if not single:
        gouts = [g if g is not None else _zeros_for_output(node, i) for i, g in enumerate(gouts)]
    if not node.raw:
        return node._run_backward([gouts] if single else gouts)
    if node._freed:
        raise RuntimeError(FREED_GRAPH)
    # built-ins: straight to backward; the walk's zip() drops the option slots that follow the tensor inputs
    gins = node.backward(node, gouts) if single else node.backward(node, *gouts)
    return gins if gins.__class__ is tuple else (gins,)


def _zeros_for_output(node, index):
    """A zero gradient for an output of a multi-output Function that no path used."""
    shape, np_dtype, xp = node._out_meta[index]
    return xp.zeros(shape, dtype=np_dtype)


def _deliver_retained(node, gouts):
    """The compiled walk's way to the hooks and retained ``.grad`` of a node's non-leaf outputs: as this walk does
    it. The node's gradient as the hooks left it, or None where it has no hooks."""
    delivered = _deliver_nonleaf(node, [gouts] if node._n_out == 1 else gouts, None, {})
    if not node._hooks:
        return None
    return delivered[0] if node._n_out == 1 else delivered


def run_hooks(table, g):
    """``g`` through a tensor's hooks in the order they were registered: each is called with the gradient as a
    tensor, and what one returns (not None) is the gradient from there on, as PyTorch's ``register_hook``. ``g``
    is an array, or a Tensor in the recorded walk of create_graph=True (engine.autograd.higher)."""
    recorded = isinstance(g, Tensor)
    for hook in list(table.values()):
        out = hook(g if recorded else _wrap(g))
        if out is not None:
            if not isinstance(out, Tensor):
                raise TypeError(f"expected Variable, but hook returned '{type(out).__name__}'")
            new = out if recorded else out._data
            if tuple(new.shape) != tuple(g.shape):
                raise RuntimeError(f"hook '{getattr(hook, '__name__', hook)}' has changed the size of value")
            g = new
    return g


def _deliver_nonleaf(node, gouts, capture, wanted_nodes):
    """Each output's gradient through its tensor's hooks (in place in ``gouts``, which it returns), then to the
    retained ``.grad`` and to what autograd.grad wants."""
    if node._hooks:
        for index, table in node._hooks.items():
            if table and gouts[index] is not None:
                gouts[index] = run_hooks(table, gouts[index])
    if node._retained is not None and capture is None:
        for index, ref in node._retained.items():
            t = ref()
            g = gouts[index]
            if t is not None and g is not None:
                if t.grad is None:
                    t.grad = _wrap(g.copy())
                else:
                    t.grad._data = t.grad._data + g
    if capture is not None and node in wanted_nodes:
        for t in wanted_nodes[node]:
            g = gouts[t._out_index]
            if g is not None:
                prev = capture.get(id(t))
                capture[id(t)] = g if prev is None else prev + g
    return gouts


def _givable(g, assigned) -> bool:
    """Whether ``g`` may become a ``.grad`` as it is: it owns its memory, went to no other ``.grad`` of this walk,
    and can be written (CuPy's flags have no ``writeable``: its arrays are all writable)."""
    return g.base is None and id(g) not in assigned and (g.__class__ is not np.ndarray or g.flags.writeable)


def _accumulate_leaf(leaf, g, assigned):
    if not leaf._rg:
        return
    if _leaf_hooks and (leaf.__dict__.get("_grad_hooks") or leaf.__dict__.get("_post_accumulate_hooks")):
        # a leaf with hooks: its gradients of this walk are summed first (a copy: the arrays may be other .grads),
        # and the hooks see the sum, as PyTorch's do, when the walk ends (_flush_hooked_leaves)
        held = _held.__dict__.setdefault("leaves", {})
        prev = held.get(id(leaf))
        held[id(leaf)] = (leaf, g.copy() if prev is None else prev[1] + g)
        return
    _accumulate_now(leaf, g, assigned)


def _flush_hooked_leaves(assigned, ok=True):
    """The walk is over: each hooked leaf's summed gradient through its hooks and into its ``.grad`` (dropped
    when the walk raised)."""
    held = getattr(_held, "leaves", None)
    if not held:
        return
    _held.leaves = {}
    if ok:
        for leaf, g in held.values():
            _accumulate_now(leaf, run_hooks(leaf.__dict__.get("_grad_hooks") or {}, g), assigned)
            run_post_accumulate(leaf)


def run_post_accumulate(leaf):
    """A leaf's ``register_post_accumulate_grad_hook`` hooks, each called with the leaf once its ``.grad`` holds
    this backward's gradient (PyTorch's way to step an optimizer inside backward)."""
    for hook in list((leaf.__dict__.get("_post_accumulate_hooks") or {}).values()):
        hook(leaf)


def register_post_accumulate_grad_hook(tensor, hook):
    """``tensor.register_post_accumulate_grad_hook(hook)`` (a leaf that requires grad): the handle removes it."""
    from collections import OrderedDict

    from ..utils.hooks import RemovableHandle

    global _leaf_hooks
    if tensor.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not tensor._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    table = tensor.__dict__.get("_post_accumulate_hooks")
    if table is None:
        table = tensor._post_accumulate_hooks = OrderedDict()
    _leaf_hooks = True  # (the walk then hands every leaf's gradient to _accumulate_leaf, compiled or not)
    if _compiled.set_leaf_hooks is not None:
        _compiled.set_leaf_hooks(True)
    handle = RemovableHandle(table)
    table[handle.id] = hook
    return handle


def _accumulate_now(leaf, g, assigned):
    existing = leaf._grad
    if existing is None:
        if not _givable(g, assigned):  # the first gradient becomes .grad: a copy when it may share memory
            g = g.copy()
        assigned.add(id(g))
        leaf._grad = _wrap(g)  # (the walk gives each input a gradient of its shape: the setter's check holds)
    else:
        if existing.__class__ is _LazyZeros:
            # zero_() not written yet, and no one else holds the old array: the gradient's array takes its place
            # when it is givable and laid out as the old one
            old = _data_get(existing)
            if (g.__class__ is np.ndarray and g.dtype is old.dtype and g.shape == old.shape
                    and g.strides == old.strides and _givable(g, assigned)):
                assigned.add(id(g))
                existing.__class__ = Tensor  # what the property's setter does, without its call
                existing._data = g
                return
        arr = existing._data
        if arr.shape == g.shape and (arr.dtype is g.dtype or arr.dtype == g.dtype):
            if id(arr) in assigned:
                # an array this walk gave to .grad as it was may be on its way to other nodes too (Add's backward
                # hands one array to both its inputs: x + f(w) + x gave f's node the sum of x's two gradients)
                arr = arr.copy()
                existing._data = arr
            try:
                arr += g  # in place, as PyTorch accumulates
                return
            except ValueError:  # a read-only array (say a broadcast view) was given as .grad
                pass
        existing._data = arr + g


def _scalar_seed(data):
    """The implicit gradient of a one-element output: a one of its dtype, shape and device. A complex output has
    none (which real loss would it be the gradient of?), as in PyTorch."""
    if data.dtype.kind == "c":
        raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                           f"{from_numpy_dtype(data.dtype)}")
    if data.__class__ is np.ndarray and data.ndim == 0:
        return np.array(1, dtype=data.dtype)
    return _xp(data).ones(data.shape, dtype=data.dtype)


def _seed_grads(tensors, grad_tensors, who):
    grads = []
    for i, t in enumerate(tensors):
        gt = grad_tensors[i] if grad_tensors is not None else None
        if not t._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if gt is None:
            if t._data.size != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs ({who} was called on a "
                    f"tensor of shape {tuple(t._data.shape)}: pass gradient= of that shape)"
                )
            g = _scalar_seed(t._data)
        else:
            g = gt._data if isinstance(gt, Tensor) else gt
            g = _xp(t._data).asarray(g, dtype=t._data.dtype)
            if g.shape != t._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and output[{i}] "
                    f"has a shape of {tuple(t._data.shape)}."
                )
            g = g.copy()  # never let .grad alias the caller's array
        grads.append(g)
    return grads


_xp = xp_of

# engine.autograd.higher's walk, which it registers here when imported: the walk that runs with create_graph=True
_create_walk = None


def _seed_tensors(tensors, grad_tensors, who):
    """The roots' gradients as Tensors, for the walk that records (create_graph=True): a gradient given as a Tensor
    is used as it is, so that what is computed from it stays connected to it (a double-backward's ``v``)."""
    grads = _seed_grads(tensors, grad_tensors, who)
    out = []
    for i, g in enumerate(grads):
        given = grad_tensors[i] if grad_tensors is not None else None
        if isinstance(given, Tensor) and given._data.dtype == g.dtype:
            out.append(given)
        else:
            out.append(_wrap(g))
    return out


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves they depend on. With
    ``create_graph=True`` the gradients are recorded too (engine.autograd.higher): ``.grad`` gets a ``grad_fn``."""
    if retain_graph is None:
        retain_graph = create_graph  # PyTorch's default
    if inputs is not None and not isinstance(inputs, Tensor) and not len(inputs):
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    if isinstance(tensors, Tensor):
        tensors = (tensors,)
    if isinstance(grad_tensors, Tensor) or (grad_tensors is not None and not isinstance(grad_tensors, (list, tuple))):
        grad_tensors = (grad_tensors,)
    tensors = tuple(tensors)
    if create_graph:
        grads = _seed_tensors(tensors, grad_tensors, "backward()")
        if inputs is None:
            return _create_walk(tensors, grads, bool(retain_graph))
    else:
        grads = _seed_grads(tensors, grad_tensors, "backward()")
    if inputs is not None:
        wanted = tuple(inputs) if not isinstance(inputs, Tensor) else (inputs,)
        seeds = grads if create_graph else [_wrap(g) for g in grads]
        captured = grad(tensors, wanted, seeds, retain_graph=retain_graph, create_graph=create_graph,
                        allow_unused=True)
        for t, g in zip(wanted, captured):
            if g is None:
                continue
            if create_graph:
                if t._rg:
                    t._grad = g if t._grad is None or t._grad.__class__ is _LazyZeros else t._grad + g
            else:
                _accumulate_leaf(t, g._data, set())
        return
    _run(tensors, grads, bool(retain_graph))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         is_grads_batched=False, materialize_grads=False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned (``.grad`` is left alone). With
    ``create_graph=True`` they are recorded (engine.autograd.higher): they can be differentiated in turn. With
    ``is_grads_batched``, the first dimension of each of ``grad_outputs`` is a batch of them: one walk each (PyTorch
    uses vmap), the results stacked along a new first dimension."""
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    if retain_graph is None:
        retain_graph = create_graph  # PyTorch's default
    if isinstance(outputs, Tensor):
        outputs = (outputs,)
    single_input = isinstance(inputs, Tensor)
    inputs = (inputs,) if single_input else tuple(inputs)
    if isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    outputs = tuple(outputs)
    for i, t in enumerate(inputs):
        if not t._rg:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not require grad")
    capture: dict = {id(t): None for t in inputs}
    capture["__targets__"] = [t for t in inputs if t.grad_fn is not None]
    if create_graph:
        _create_walk(outputs, _seed_tensors(outputs, grad_outputs, "grad()"), bool(retain_graph), capture)
    else:
        _run(outputs, _seed_grads(outputs, grad_outputs, "grad()"), bool(retain_graph), capture)
    result = []
    for i, t in enumerate(inputs):
        g = capture.get(id(t))
        if g is not None and t.grad_fn is None and _leaf_hooks and t.__dict__.get("_grad_hooks"):
            # a leaf's hooks see its whole gradient, as in backward()
            g = run_hooks(t._grad_hooks, g)
        if g is None:
            if materialize_grads:
                g = _xp(t._data).zeros_like(t._data)
            elif not allow_unused:
                raise RuntimeError(
                    f"One of the differentiated Tensors (input {i}) appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
        result.append(g if isinstance(g, Tensor) else _wrap(g) if g is not None else None)
    return tuple(result)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    if grad_outputs is None:
        raise RuntimeError("grad requires grad_outputs to be given when is_grads_batched=True")
    batch = (grad_outputs,) if isinstance(grad_outputs, Tensor) else tuple(grad_outputs)
    sizes = {g.shape[0] for g in batch if g is not None}
    if len(sizes) != 1:
        raise RuntimeError("If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the "
                           "batch dimension. The sizes of the batch dimensions must all agree.")
    n = sizes.pop()
    last_retain = create_graph if retain_graph is None else retain_graph
    runs = [grad(outputs, inputs, tuple(g[k] if g is not None else None for g in batch),
                 retain_graph=True if k < n - 1 else last_retain, create_graph=create_graph,
                 allow_unused=allow_unused, materialize_grads=materialize_grads) for k in range(n)]
    from ..functions.shape import Stack

    return tuple(None if parts[0] is None else Stack.apply(*parts, dim=0) for parts in zip(*runs))


def register_hook(tensor, hook):
    """``tensor.register_hook(hook)``: ``hook(grad)`` is called with the gradient of ``tensor`` each time backward
    computes it, before it goes on (to the node that made the tensor, or into a leaf's ``.grad``); a tensor it
    returns takes the gradient's place. Returns the handle that removes it."""
    from collections import OrderedDict

    from ..utils.hooks import RemovableHandle

    global _retaining, _leaf_hooks
    node = tensor.grad_fn
    if node is None:
        table = tensor.__dict__.get("_grad_hooks")
        if table is None:
            table = tensor._grad_hooks = OrderedDict()
        _leaf_hooks = True
        if _compiled.set_leaf_hooks is not None:
            _compiled.set_leaf_hooks(True)
    else:
        _retaining = True
        if node._retained is None:
            node._retained = {}
        if node._hooks is None:
            node._hooks = {}
        table = node._hooks.setdefault(tensor._out_index, OrderedDict())
    handle = RemovableHandle(table)
    table[handle.id] = hook
    return handle


def _register_retained(tensor):
    global _retaining
    _retaining = True
    node = tensor.grad_fn
    if node._retained is None:
        node._retained = {}
    node._retained[tensor._out_index] = weakref.ref(tensor)


from ..tensor import Tensor, _data_get, _data_set, _LazyZeros, _wrap  # noqa: E402  (Tensor's module imports this one first)

# The walk compiled (_cgraph.c), where it is built: Tensor.backward() on one root goes there (_run's first lines)
_cwalk = _compiled.walk
if _cwalk is not None:
    _compiled.setup_walk(unbroadcast, _accumulate_leaf, _add_pending, _backward_of, FREED_GRAPH, Tensor, _LazyZeros,
                         np.ndarray, _data_get, _data_set, cast_gradient)

from . import function as _function  # noqa: E402  (after Tensor: the nodes' hooks are registered here)

_function.add_node_hook = _add_node_hook
