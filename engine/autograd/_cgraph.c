/* The graph's two hot paths in C, each the Python code it stands for step for step:
 *
 * - apply(cls, *args, **kwargs): Function.apply for a built-in (raw) Function of one to three inputs, which records
 *   the node (engine/autograd/function.py's _apply, its one-, two- and three-input paths);
 * - walk(node, grad, retain_graph, observer, retained): Tensor.backward()'s walk from one root, with no
 *   autograd.grad capture (engine/autograd/graph.py's _run); ``observer`` is the profiler's recorder, told of each
 *   node's backward and undoing each broadcast as the Python walk tells it, or None; ``retained`` is
 *   graph._deliver_retained once some tensor has had retain_grad() or register_hook(), called for each node that
 *   has a _retained (what it returns, when not None, is that node's gradient from there on: a hook's), or None.
 *
 * Why C: at the tiny size recording a node cost ~9,000 instructions more than the same op unrecorded (callgrind),
 * and the walk's Python bookkeeping (a heap, a dict of pending gradients, a shape and dtype check per edge) cost
 * ~50 us of the ~700 us tutorial-size autograd step on the 2-core machine, measured against a walk that does
 * none of it: together most of the autograd step's distance from hand-written NumPy. Here the same steps run
 * without the interpreter. Everything that is not bookkeeping stays in Python and is called from here: each
 * Function's forward and backward, undoing broadcasting (graph.unbroadcast), accumulating into a leaf's .grad
 * (graph._accumulate_leaf, but for the tutorial's zero_()'d case), user Functions and multi-output nodes, the
 * profiler's hook. The Python code is the reference, and runs where this is not built: the engine's autograd
 * tests run through both (tests/engine/conftest.py).
 *
 * Nodes run newest first (their _seq, numbered at recording), from a max-heap here as from heapq there.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* attribute names, interned once */
static PyObject *s_array_data, *s_mem;
static PyObject *s_rg, *s_grad, *s_class, *s_base, *s_strides, *s_flags, *s_writeable, *s_raw, *s_n_out, *s_freed,
    *s_backward, *s_inputs, *s_data, *s_shape, *s_dtype, *s_grad_fn, *s_seq, *s_saved, *s_saved_user,
    *s_out_index, *s_hook, *s_depth, *s_thread, *s_forward, *s_needs_input_grad, *s_node_begin, *s_node_end,
    *s_unbroadcast, *s_retained, *s_rebound_at;
/* the walk's: graph.py's helpers, the freed-graph message, the types it tells apart, the _data slot's get and set */
static PyObject *py_unbroadcast, *py_accumulate_leaf, *py_add_pending, *py_backward_of, *freed_message,
    *py_cast_gradient;
static int leaf_hooks = 0; /* some leaf has had register_hook(): every leaf's gradient goes to _accumulate_leaf */
static int node_hooks = 0; /* some node has had register_hook()/register_prehook(): a node with them goes to
                            * graph._backward_of, which calls them */
static PyObject *s_pre_hooks, *s_post_hooks;
static PyObject *empty_tuple;
static PyObject *tensor_type, *lazy_type, *ndarray_type, *py_data_get, *py_data_set;
/* apply's: function.py's module dict (its _hook), the Python _apply, the sequence counter,
 * grad_mode._off, _check_same_device, the NumPy scalar types, np.asarray */
static PyObject *function_globals, *py_apply, *py_next_seq, *grad_off, *py_check_devices, *scalar_types,
    *py_asarray;
/* the complex NumPy dtypes (complex64, complex128), function.check_complex (which raises a built-in's refusal of a
 * complex operand, by name), and the attribute that says a built-in takes them */
static PyObject *complex64_dtype, *complex128_dtype, *py_check_complex, *s_complex_ok;

/* 1 when getattr(obj, name) is true, 0 when false, -1 on an error */
static int attr_true(PyObject *obj, PyObject *name)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL)
        return -1;
    int r = (v == Py_True) ? 1 : (v == Py_False || v == Py_None) ? 0 : PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

/* 1 when node._n_out == 1, 0 when not, -1 on an error */
static int single_output(PyObject *node)
{
    PyObject *v = PyObject_GetAttr(node, s_n_out);
    if (v == NULL)
        return -1;
    long n = PyLong_AsLong(v);
    Py_DECREF(v);
    if (n == -1 && PyErr_Occurred())
        return -1;
    return n == 1;
}

static PyObject *call2(PyObject *fn, PyObject *a, PyObject *b)
{
    PyObject *args[2] = {a, b};
    return PyObject_Vectorcall(fn, args, 2, NULL);
}

/* ------------------------------------------------------------------------------------------------ apply */

/* 1 when this thread records (grad mode on: its ident not in grad_mode._off), 0 when not, -1 on an error */
static int grad_enabled(void)
{
    if (PySet_GET_SIZE(grad_off) == 0)
        return 1;
    PyObject *ident = PyLong_FromUnsignedLong(PyThread_get_thread_ident());
    if (ident == NULL)
        return -1;
    int off = PySet_Contains(grad_off, ident);
    Py_DECREF(ident);
    return off < 0 ? -1 : !off;
}

/* forward(ctx, *raw, **kwargs); on a TypeError or ValueError, _check_same_device(*tensors) first names the devices
 * when they differ (NumPy and CuPy arrays do not mix), else the error comes out as it was */
static PyObject *call_forward(PyObject *cls, PyObject *ctx, PyObject *const *raw, PyObject *const *tensors,
                              Py_ssize_t n, PyObject *kwargs, int name_devices)
{
    PyObject *forward = PyObject_GetAttr(cls, s_forward);
    if (forward == NULL)
        return NULL;
    PyObject *argv[4] = {ctx, raw[0], n > 1 ? raw[1] : NULL, n > 2 ? raw[2] : NULL};
    PyObject *out;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) > 0) {
        PyObject *args = PyTuple_New(n + 1);
        if (args == NULL) {
            Py_DECREF(forward);
            return NULL;
        }
        for (Py_ssize_t i = 0; i <= n; i++)
            PyTuple_SET_ITEM(args, i, Py_NewRef(argv[i]));
        out = PyObject_Call(forward, args, kwargs);
        Py_DECREF(args);
    } else {
        out = PyObject_Vectorcall(forward, argv, n + 1, NULL);
    }
    Py_DECREF(forward);
    if (out == NULL && name_devices &&
        (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_ValueError))) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyObject *r = PyObject_Vectorcall(py_check_devices, tensors, n, NULL);
        if (r == NULL) { /* the devices differ: that error, raised while handling the first (as Python's would be) */
            PyErr_NormalizeException(&type, &value, &tb);
            PyObject *t2, *v2, *tb2;
            PyErr_Fetch(&t2, &v2, &tb2);
            PyErr_NormalizeException(&t2, &v2, &tb2);
            if (tb != NULL)
                PyException_SetTraceback(value, tb);
            PyException_SetContext(v2, value); /* steals value */
            Py_XDECREF(type);
            Py_XDECREF(tb);
            PyErr_Restore(t2, v2, tb2);
            return NULL;
        }
        Py_DECREF(r);
        PyErr_Restore(type, value, tb);
    }
    return out;
}

/* a forward's output as the array a Tensor holds: a NumPy scalar (from a reduction) becomes a 0-d array, as in
 * _wrap; a new reference */
static PyObject *as_array(PyObject *out)
{
    if (Py_TYPE(out) != (PyTypeObject *)ndarray_type) {
        int scalar = PySet_Contains(scalar_types, (PyObject *)Py_TYPE(out));
        if (scalar < 0)
            return NULL;
        if (scalar)
            return PyObject_CallOneArg(py_asarray, out);
    }
    return Py_NewRef(out);
}

/* object.__new__(type), without the call through its wrapper */
static PyObject *new_object(PyObject *type)
{
    return PyBaseObject_Type.tp_new((PyTypeObject *)type, empty_tuple, NULL);
}

/* 1 when ``v`` (an operand as the forward gets it) is complex, or a list or tuple (which check_complex looks
 * into), 0 when not, -1 on an error */
static int maybe_complex(PyObject *v)
{
    if (PyComplex_Check(v) || PyList_Check(v) || PyTuple_Check(v))
        return 1;
    if (v == Py_None || PyFloat_CheckExact(v) || PyLong_Check(v))
        return 0;
    PyObject *dt = PyObject_GetAttr(v, s_dtype);
    if (dt == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    int r = dt == complex64_dtype || dt == complex128_dtype;
    Py_DECREF(dt);
    return r;
}

static PyObject *apply(PyObject *module, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (py_apply == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "engine.autograd._cgraph: setup_apply() was not called");
        return NULL;
    }
    /* what the Python _apply does itself: the profiler's hook, a user's Function, the other arities, a
     * non-Tensor single input (keywords become a dict below) */
    int fast = nargs >= 2 && nargs <= 4;
    if (fast) {
        PyObject *hook = PyDict_GetItemWithError(function_globals, s_hook); /* borrowed */
        if (hook == NULL && PyErr_Occurred())
            return NULL;
        if (hook != NULL && hook != Py_None) {
            /* _apply hands the profiler this thread's outermost apply (not hook.depth, hook.thread == ident);
             * the one it times, and any other, comes back here and runs as it does unprofiled */
            int deep = attr_true(hook, s_depth);
            if (deep < 0)
                return NULL;
            if (!deep) {
                PyObject *thread = PyObject_GetAttr(hook, s_thread);
                PyObject *ident = thread ? PyLong_FromUnsignedLong(PyThread_get_thread_ident()) : NULL;
                int same = ident ? PyObject_RichCompareBool(thread, ident, Py_EQ) : -1;
                Py_XDECREF(thread);
                Py_XDECREF(ident);
                if (same < 0)
                    return NULL;
                fast = !same;
            }
        }
    }
    if (fast && nargs == 2 && !PyObject_TypeCheck(args[1], (PyTypeObject *)tensor_type))
        fast = 0;
    int raw = 0;
    if (fast) {
        raw = attr_true(args[0], s_raw);
        if (raw < 0)
            return NULL;
    }
    if (!fast || !raw)
        return PyObject_Vectorcall(py_apply, args, nargsf, kwnames);

    PyObject *cls = args[0];
    Py_ssize_t n = nargs - 1;
    PyObject *const *inputs = args + 1;
    PyObject *kwargs = NULL, *ctx = NULL, *out = NULL, *t = NULL, *result = NULL;
    PyObject *rawv[3] = {NULL, NULL, NULL};
    int need[3] = {0, 0, 0};
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        kwargs = PyDict_New();
        if (kwargs == NULL)
            return NULL;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++)
            if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0)
                goto done;
    }
    int any = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyObject_TypeCheck(inputs[i], (PyTypeObject *)tensor_type)) {
            if ((rawv[i] = PyObject_GetAttr(inputs[i], s_data)) == NULL)
                goto done;
            need[i] = attr_true(inputs[i], s_rg);
            if (need[i] < 0)
                goto done;
            any |= need[i];
        } else {
            rawv[i] = Py_NewRef(inputs[i]);
        }
    }
    int complex_ok = attr_true(cls, s_complex_ok);
    if (complex_ok < 0)
        goto done;
    if (!complex_ok) { /* function._apply's check_complex: a built-in without a complex form refuses one */
        int suspect = kwargs != NULL;
        for (Py_ssize_t i = 0; i < n && !suspect; i++) {
            suspect = maybe_complex(rawv[i]);
            if (suspect < 0)
                goto done;
        }
        if (suspect) {
            PyObject *argv[5] = {cls, rawv[0], n > 1 ? rawv[1] : Py_None, n > 2 ? rawv[2] : Py_None,
                                 kwargs != NULL ? kwargs : Py_None};
            PyObject *r = PyObject_Vectorcall(py_check_complex, argv, 5, NULL);
            if (r == NULL)
                goto done;
            Py_DECREF(r);
        }
    }
    int track = 0;
    if (any) {
        track = grad_enabled();
        if (track < 0)
            goto done;
    }
    /* a fresh ctx per call, recorded or not (a forward may read back what it wrote) */
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "apply: the first argument must be the Function class");
        goto done;
    }
    if ((ctx = new_object(cls)) == NULL)
        goto done;
    if ((out = call_forward(cls, ctx, rawv, inputs, n, kwargs, n >= 2)) == NULL)
        goto done;
    PyObject *data = as_array(out);
    if (data == NULL)
        goto done;
    Py_SETREF(out, data);
    if ((t = new_object(tensor_type)) == NULL || PyObject_SetAttr(t, s_data, out) < 0 ||
        PyObject_SetAttr(t, s_rg, track ? Py_True : Py_False) < 0)
        goto done;
    if (track) {
        PyObject *seq = PyObject_CallNoArgs(py_next_seq);
        if (seq == NULL)
            goto done;
        int err = PyObject_SetAttr(ctx, s_seq, seq);
        Py_DECREF(seq);
        if (err < 0)
            goto done;
        PyObject *ins = PyTuple_New(n), *needs = PyTuple_New(n);
        if (ins == NULL || needs == NULL) {
            Py_XDECREF(ins);
            Py_XDECREF(needs);
            goto done;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            /* each input that requires grad, None for the others; needs_input_grad None for a number (no edge) */
            PyTuple_SET_ITEM(ins, i, Py_NewRef(need[i] ? inputs[i] : Py_None));
            PyTuple_SET_ITEM(needs, i, Py_NewRef(need[i] ? Py_True : rawv[i] == inputs[i] ? Py_None : Py_False));
        }
        err = PyObject_SetAttr(ctx, s_inputs, ins) < 0 || PyObject_SetAttr(ctx, s_needs_input_grad, needs) < 0 ||
              PyObject_SetAttr(t, s_grad_fn, ctx) < 0;
        Py_DECREF(ins);
        Py_DECREF(needs);
        if (err)
            goto done;
    }
    result = Py_NewRef(t);
done:
    Py_XDECREF(kwargs);
    Py_XDECREF(rawv[0]);
    Py_XDECREF(rawv[1]);
    Py_XDECREF(rawv[2]);
    Py_XDECREF(ctx);
    Py_XDECREF(out);
    Py_XDECREF(t);
    return result;
}

/* setup_apply(function_globals, _apply, _next_seq, grad_mode._off, _check_same_device, _SCALAR_TYPES, np.asarray,
 *             (complex64 dtype, complex128 dtype), check_complex) */
static PyObject *setup_apply(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9 || !PyTuple_Check(args[7]) || PyTuple_GET_SIZE(args[7]) != 2) {
        PyErr_SetString(PyExc_TypeError, "setup_apply(function_globals, _apply, next_seq, off, check_same_device, "
                                         "scalar_types, asarray, (complex64, complex128), check_complex)");
        return NULL;
    }
    if (!PyDict_Check(args[0]) || !PyAnySet_Check(args[3]) || !PyAnySet_Check(args[5])) {
        PyErr_SetString(PyExc_TypeError, "setup_apply: a dict, then sets for off and scalar_types");
        return NULL;
    }
    Py_XSETREF(function_globals, Py_NewRef(args[0]));
    Py_XSETREF(py_apply, Py_NewRef(args[1]));
    Py_XSETREF(py_next_seq, Py_NewRef(args[2]));
    Py_XSETREF(grad_off, Py_NewRef(args[3]));
    Py_XSETREF(py_check_devices, Py_NewRef(args[4]));
    Py_XSETREF(scalar_types, Py_NewRef(args[5]));
    Py_XSETREF(py_asarray, Py_NewRef(args[6]));
    Py_XSETREF(complex64_dtype, Py_NewRef(PyTuple_GET_ITEM(args[7], 0)));
    Py_XSETREF(complex128_dtype, Py_NewRef(PyTuple_GET_ITEM(args[7], 1)));
    Py_XSETREF(py_check_complex, Py_NewRef(args[8]));
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------------------------------ the walk */

typedef struct {
    long long seq;
    PyObject *node; /* a strong reference */
} Entry;

typedef struct {
    Entry *items;
    Py_ssize_t n, cap;
    Entry small[16];
} Heap;

static int heap_push(Heap *h, PyObject *node)
{
    PyObject *seq_obj = PyObject_GetAttr(node, s_seq);
    if (seq_obj == NULL)
        return -1;
    long long seq = PyLong_AsLongLong(seq_obj);
    Py_DECREF(seq_obj);
    if (seq == -1 && PyErr_Occurred())
        return -1;
    if (h->n == h->cap) {
        Py_ssize_t cap = h->cap * 2;
        Entry *items;
        if (h->items == h->small) {
            items = PyMem_Malloc(cap * sizeof(Entry));
            if (items != NULL)
                memcpy(items, h->small, h->n * sizeof(Entry));
        } else {
            items = PyMem_Realloc(h->items, cap * sizeof(Entry));
        }
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        h->items = items;
        h->cap = cap;
    }
    Py_ssize_t i = h->n++;
    while (i > 0) { /* sift up: the largest seq on top */
        Py_ssize_t parent = (i - 1) / 2;
        if (h->items[parent].seq >= seq)
            break;
        h->items[i] = h->items[parent];
        i = parent;
    }
    Py_INCREF(node);
    h->items[i].seq = seq;
    h->items[i].node = node;
    return 0;
}

static PyObject *heap_pop(Heap *h, long long *seq) /* a new reference; the heap is not empty */
{
    PyObject *top = h->items[0].node;
    *seq = h->items[0].seq;
    Entry last = h->items[--h->n];
    Py_ssize_t i = 0;
    for (;;) {
        Py_ssize_t child = 2 * i + 1;
        if (child >= h->n)
            break;
        if (child + 1 < h->n && h->items[child + 1].seq > h->items[child].seq)
            child++;
        if (h->items[child].seq <= last.seq)
            break;
        h->items[i] = h->items[child];
        i = child;
    }
    if (h->n > 0)
        h->items[i] = last;
    return top;
}

static void heap_clear(Heap *h)
{
    for (Py_ssize_t i = 0; i < h->n; i++)
        Py_DECREF(h->items[i].node);
    if (h->items != h->small)
        PyMem_Free(h->items);
}

/* graph._accumulate_leaf's common case, the tutorial's: a leaf whose .grad was zero_()'d and not yet written
 * (engine.tensor._LazyZeros) takes the gradient's array as it is, when that array is NumPy's, laid out as the old
 * one, and free to be given away (graph._givable). 1: done; 0: not this case (graph._accumulate_leaf does it);
 * -1: an error. */
static int accumulate_lazy(PyObject *leaf, PyObject *g, PyObject *assigned)
{
    if (Py_TYPE(g) != (PyTypeObject *)ndarray_type)
        return 0;
    int rg = attr_true(leaf, s_rg);
    if (rg <= 0)
        return rg < 0 ? -1 : 1; /* a leaf that needs no gradient gets none */
    PyObject *existing = PyObject_GetAttr(leaf, s_grad);
    if (existing == NULL)
        return -1;
    int rc = 0;
    PyObject *old = NULL, *a = NULL, *b = NULL, *id = NULL;
    if (Py_TYPE(existing) != (PyTypeObject *)lazy_type)
        goto done;
    rc = -1;
    old = PyObject_CallOneArg(py_data_get, existing);
    if (old == NULL)
        goto done;
    rc = 0;
    if (Py_TYPE(old) != (PyTypeObject *)ndarray_type)
        goto done;
    /* the same dtype object, shape and strides; g owns its memory, went to no other .grad, can be written */
    static PyObject **const same[] = {&s_dtype, &s_shape, &s_strides};
    for (int i = 0; i < 3; i++) {
        rc = -1;
        if ((a = PyObject_GetAttr(g, *same[i])) == NULL || (b = PyObject_GetAttr(old, *same[i])) == NULL)
            goto done;
        int eq = i == 0 ? a == b : PyObject_RichCompareBool(a, b, Py_EQ);
        Py_CLEAR(a);
        Py_CLEAR(b);
        if (eq < 0)
            goto done;
        rc = 0;
        if (!eq)
            goto done;
    }
    rc = -1;
    if ((a = PyObject_GetAttr(g, s_base)) == NULL)
        goto done;
    rc = 0;
    if (a != Py_None)
        goto done;
    rc = -1;
    if ((id = PyLong_FromVoidPtr(g)) == NULL)
        goto done;
    int taken = PySet_Contains(assigned, id);
    if (taken < 0)
        goto done;
    rc = 0;
    if (taken)
        goto done;
    rc = -1;
    if ((b = PyObject_GetAttr(g, s_flags)) == NULL)
        goto done;
    int writeable = attr_true(b, s_writeable);
    if (writeable < 0)
        goto done;
    rc = 0;
    if (!writeable)
        goto done;
    rc = -1;
    if (PySet_Add(assigned, id) < 0 || PyObject_SetAttr(existing, s_class, tensor_type) < 0)
        goto done;
    PyObject *r = call2(py_data_set, existing, g);
    if (r == NULL)
        goto done;
    Py_DECREF(r);
    rc = 1;
done:
    Py_DECREF(existing);
    Py_XDECREF(old);
    Py_XDECREF(a);
    Py_XDECREF(b);
    Py_XDECREF(id);
    return rc;
}

/* The gradient ``g`` of input ``inp`` (a Tensor), made to its shape and dtype and handed on: to the leaf's
 * .grad, or to the pending gradient of the node that made it. Steals ``g``. 0, or -1 on an error. */
static int deliver(PyObject *inp, PyObject *g, PyObject *pending, Heap *heap, PyObject *assigned,
                   PyObject *observer)
{
    int rc = -1;
    PyObject *data = NULL, *gshape = NULL, *dshape = NULL, *gdtype = NULL, *ddtype = NULL, *fn = NULL;

    data = PyObject_GetAttr(inp, s_data);
    if (data == NULL)
        goto done;
    gshape = PyObject_GetAttr(g, s_shape);
    dshape = gshape ? PyObject_GetAttr(data, s_shape) : NULL;
    if (dshape == NULL)
        goto done;
    int same = PyObject_RichCompareBool(gshape, dshape, Py_EQ);
    if (same < 0)
        goto done;
    if (!same) {
        PyObject *g2 = observer == NULL ? call2(py_unbroadcast, g, dshape) /* the profiler times this sum itself */
                                        : PyObject_CallMethodObjArgs(observer, s_unbroadcast, g, dshape, NULL);
        if (g2 == NULL)
            goto done;
        Py_SETREF(g, g2);
    }
    gdtype = PyObject_GetAttr(g, s_dtype);
    ddtype = gdtype ? PyObject_GetAttr(data, s_dtype) : NULL;
    if (ddtype == NULL)
        goto done;
    if (gdtype != ddtype) {
        same = PyObject_RichCompareBool(gdtype, ddtype, Py_EQ);
        if (same < 0)
            goto done;
        if (!same) { /* a mixed-dtype op: each input gets its gradient in its own dtype (graph.cast_gradient) */
            PyObject *g2 = call2(py_cast_gradient, g, ddtype);
            if (g2 == NULL)
                goto done;
            Py_SETREF(g, g2);
        }
    }
    fn = PyObject_GetAttr(inp, s_grad_fn);
    if (fn == NULL)
        goto done;
    if (fn == Py_None) {
        int done = leaf_hooks ? 0 : accumulate_lazy(inp, g, assigned); /* hooks: graph._accumulate_leaf runs them */
        if (done != 0) {
            rc = done < 0 ? -1 : 0;
            goto done;
        }
        PyObject *args[3] = {inp, g, assigned};
        PyObject *r = PyObject_Vectorcall(py_accumulate_leaf, args, 3, NULL);
        if (r == NULL)
            goto done;
        Py_DECREF(r);
        rc = 0;
        goto done;
    }
    int single = single_output(fn);
    if (single < 0)
        goto done;
    if (single) {
        PyObject *prev = PyDict_GetItemWithError(pending, fn); /* borrowed */
        if (prev == NULL) {
            if (PyErr_Occurred() || PyDict_SetItem(pending, fn, g) < 0 || heap_push(heap, fn) < 0)
                goto done;
        } else {
            PyObject *sum = PyNumber_Add(prev, g);
            if (sum == NULL)
                goto done;
            int err = PyDict_SetItem(pending, fn, sum);
            Py_DECREF(sum);
            if (err < 0)
                goto done;
        }
    } else {
        int known = PyDict_Contains(pending, fn);
        if (known < 0 || (!known && heap_push(heap, fn) < 0))
            goto done;
        PyObject *index = PyObject_GetAttr(inp, s_out_index);
        if (index == NULL)
            goto done;
        PyObject *args[4] = {pending, fn, index, g};
        PyObject *r = PyObject_Vectorcall(py_add_pending, args, 4, NULL);
        Py_DECREF(index);
        if (r == NULL)
            goto done;
        Py_DECREF(r);
    }
    rc = 0;
done:
    Py_DECREF(g);
    Py_XDECREF(data);
    Py_XDECREF(gshape);
    Py_XDECREF(dshape);
    Py_XDECREF(gdtype);
    Py_XDECREF(ddtype);
    Py_XDECREF(fn);
    return rc;
}

/* After a node ran: drop what it saved, unless the graph is to be kept. 0, or -1 on an error. */
static int free_saved(PyObject *node, int raw)
{
    PyObject *saved = PyObject_GetAttr(node, s_saved);
    if (saved == NULL)
        return -1;
    int has = saved != Py_None;
    Py_DECREF(saved);
    if (has && (PyObject_SetAttr(node, s_freed, Py_True) < 0 || PyObject_SetAttr(node, s_saved, Py_None) < 0))
        return -1;
    if (!raw) { /* a user's Function: what it gave save_for_backward */
        int r = attr_true(node, s_saved_user);
        if (r < 0)
            return -1;
        if (r && (PyObject_SetAttr(node, s_freed, Py_True) < 0 || PyObject_SetAttr(node, s_saved_user, empty_tuple) < 0))
            return -1;
    }
    return 0;
}

/* One node: its backward on ``gouts``, and each input's gradient delivered. 0, or -1 on an error. */
static int run_node(PyObject *node, PyObject *gouts, int retain_graph, PyObject *pending, Heap *heap,
                    PyObject *assigned, PyObject *observer, PyObject *retained, PyObject *as_it_was, long long seq)
{
    PyObject *hooked = NULL; /* the gradient(s) a tensor hook gave back in place of gouts */
    if (retained != NULL) { /* a non-leaf whose .grad is kept or that has hooks: retained(node, gouts) when
                             * node._retained; what it returns, when not None, is the node's gradient from here on */
        PyObject *r = PyObject_GetAttr(node, s_retained);
        if (r == NULL)
            return -1;
        int has = r != Py_None;
        Py_DECREF(r);
        if (has) {
            if ((r = call2(retained, node, gouts)) == NULL)
                return -1;
            if (r == Py_None)
                Py_DECREF(r);
            else
                gouts = hooked = r;
        }
    }
    PyObject *token = NULL;
    if (observer != NULL) { /* the profiler: token = observer.node_begin(node) ... observer.node_end(node, token) */
        token = PyObject_CallMethodOneArg(observer, s_node_begin, node);
        if (token == NULL)
            return -1;
    }
    int rc = -1;
    PyObject *gins = NULL, *inputs = NULL;
    int raw = attr_true(node, s_raw);
    if (raw < 0)
        goto done;
    int single = raw ? single_output(node) : 0;
    if (single < 0)
        goto done;
    int own_hooks = 0;
    if (node_hooks) {
        own_hooks = attr_true(node, s_pre_hooks);
        if (own_hooks == 0)
            own_hooks = attr_true(node, s_post_hooks);
        if (own_hooks < 0)
            goto done;
    }
    if (raw && single && !own_hooks) { /* the built-ins: straight to their backward */
        int freed = attr_true(node, s_freed);
        if (freed < 0)
            goto done;
        if (freed) {
            PyErr_SetObject(PyExc_RuntimeError, freed_message);
            goto done;
        }
        PyObject *backward = PyObject_GetAttr(node, s_backward);
        if (backward == NULL)
            goto done;
        gins = call2(backward, node, gouts);
        Py_DECREF(backward);
        if (gins == NULL)
            goto done;
        if (!PyTuple_CheckExact(gins)) {
            PyObject *t = PyTuple_Pack(1, gins);
            Py_SETREF(gins, t);
            if (gins == NULL)
                goto done;
        }
    } else {
        gins = call2(py_backward_of, node, gouts); /* a tuple */
        if (gins == NULL)
            goto done;
        if (!PyTuple_Check(gins)) {
            PyErr_SetString(PyExc_TypeError, "_backward_of must return a tuple");
            goto done;
        }
    }
    if (token != NULL) { /* (as in the Python walk, a backward that raised is not reported to the observer) */
        PyObject *r = PyObject_CallMethodObjArgs(observer, s_node_end, node, token, NULL);
        if (r == NULL)
            goto done;
        Py_DECREF(r);
    }
    inputs = PyObject_GetAttr(node, s_inputs);
    if (inputs == NULL)
        goto done;
    if (!PyTuple_Check(inputs)) {
        PyErr_SetString(PyExc_TypeError, "a graph node's _inputs must be a tuple");
        goto done;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(inputs);
    if (PyTuple_GET_SIZE(gins) < n) /* as zip(): the option slots after the tensor inputs are dropped */
        n = PyTuple_GET_SIZE(gins);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *inp = PyTuple_GET_ITEM(inputs, i);
        PyObject *g = PyTuple_GET_ITEM(gins, i);
        if (inp == Py_None || g == Py_None)
            continue;
        PyObject *then = NULL; /* inp as this node took it, where an in-place op has rebound it since */
        if (as_it_was != NULL) {
            PyObject *at = PyObject_GetAttr(inp, s_rebound_at);
            if (at == NULL)
                goto done;
            long long rebound = PyLong_AsLongLong(at);
            Py_DECREF(at);
            if (rebound == -1 && PyErr_Occurred())
                goto done;
            if (rebound > seq) {
                PyObject *seq_obj = PyLong_FromLongLong(seq);
                if (seq_obj == NULL)
                    goto done;
                then = call2(as_it_was, inp, seq_obj);
                Py_DECREF(seq_obj);
                if (then == NULL)
                    goto done;
                inp = then;
            }
        }
        Py_INCREF(g);
        int delivered = deliver(inp, g, pending, heap, assigned, observer);
        Py_XDECREF(then);
        if (delivered < 0)
            goto done;
    }
    if (!retain_graph && free_saved(node, raw) < 0)
        goto done;
    rc = 0;
done:
    Py_XDECREF(inputs);
    Py_XDECREF(gins);
    Py_XDECREF(token);
    Py_XDECREF(hooked);
    return rc;
}

/* Whether the table of writes (id(owner) -> tick) has ``owner`` written after tick ``seq``: 1 or 0, -1 on an
 * error. */
static int written_since(PyObject *written, PyObject *owner, long long seq)
{
    PyObject *key = PyLong_FromVoidPtr(owner);
    if (key == NULL)
        return -1;
    PyObject *when = PyDict_GetItemWithError(written, key); /* borrowed */
    Py_DECREF(key);
    if (when == NULL)
        return PyErr_Occurred() ? -1 : 0;
    long long w = PyLong_AsLongLong(when);
    if (w == -1 && PyErr_Occurred())
        return -1;
    return w > seq;
}

/* Whether an array ``node`` saved may have been written in place after tick ``seq``: 0 when the table of writes
 * (_writes._written: id(owning array) -> tick) says none was, 1 when one was or this cannot tell (a user's
 * Function), -1 on an error. The common case (a built-in's arrays, none written since) costs no Python call; where
 * it returns 1, check_writes decides, on which gradients read what. */
static int maybe_written(PyObject *node, long long seq, PyObject *written)
{
    int raw = attr_true(node, s_raw);
    if (raw <= 0)
        return raw < 0 ? -1 : 1;
    PyObject *saved = PyObject_GetAttr(node, s_saved);
    if (saved == NULL)
        return -1;
    PyObject *one[1] = {saved};
    PyObject **items = one;
    Py_ssize_t n = 1;
    if (PyTuple_Check(saved)) {
        items = &PyTuple_GET_ITEM(saved, 0);
        n = PyTuple_GET_SIZE(saved);
    }
    int rc = 0;
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
        PyObject *item = items[i];
        if (item == Py_None || PyLong_CheckExact(item) || PyFloat_CheckExact(item) || PyBool_Check(item))
            continue;
        if (strcmp(Py_TYPE(item)->tp_name, "numpy.ndarray") != 0) {
            /* a CuPy array: its allocation (data.mem), which its views and as_strided headers share (_writes._owner) */
            PyObject *data = PyObject_GetAttr(item, s_array_data);
            PyObject *mem = data == NULL ? NULL : PyObject_GetAttr(data, s_mem);
            Py_XDECREF(data);
            if (mem == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
                    rc = -1;
                    break;
                }
                PyErr_Clear(); /* a NumPy scalar (its data a memoryview), or not an array: as below */
            } else if (mem != Py_None) {
                rc = written_since(written, mem, seq);
                Py_DECREF(mem);
                continue;
            } else {
                Py_DECREF(mem);
            }
        }
        PyObject *base = PyObject_GetAttr(item, s_base); /* a NumPy or CuPy array's owner, or None */
        if (base == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
                rc = -1;
                break;
            }
            PyErr_Clear(); /* not an array (what a Function keeps besides): nothing written */
            continue;
        }
        rc = written_since(written, base == Py_None ? item : base, seq);
        Py_DECREF(base);
    }
    Py_DECREF(saved);
    return rc;
}

/* walk(node, grad, retain_graph, observer, retained, last_write, check_writes, written): propagate ``grad`` (the gradient of
 * node's single output) through the graph into the leaves' .grad, telling ``observer`` (when it is not None) of each
 * node's backward and giving the retained non-leaf tensors theirs through ``retained`` (when it is not None). A
 * node recorded before ``last_write`` (the tick of the newest in-place write: _writes.py) whose saved arrays
 * ``written`` (that module's table) may say were written since is first handed to ``check_writes``, which raises
 * when a value its backward reads was; and its inputs that an in-place op has rebound since go to
 * ``as_it_was(input, seq)`` (Tensor._as_it_was) for where they stood in the graph when it took them. */
static PyObject *walk(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9 || !PyDict_Check(args[7])) {
        PyErr_SetString(PyExc_TypeError, "walk(node, grad, retain_graph, observer, retained, last_write, "
                                         "check_writes, written: dict, as_it_was)");
        return NULL;
    }
    PyObject *written = args[7], *as_it_was = args[8];
    long long last_write = PyLong_AsLongLong(args[5]);
    if (last_write == -1 && PyErr_Occurred())
        return NULL;
    PyObject *check_writes = args[6];
    if (py_backward_of == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "engine.autograd._cgraph: setup_walk() was not called");
        return NULL;
    }
    int retain_graph = PyObject_IsTrue(args[2]);
    if (retain_graph < 0)
        return NULL;
    PyObject *observer = args[3] == Py_None ? NULL : args[3];
    PyObject *retained = args[4] == Py_None ? NULL : args[4];
    Heap heap = {NULL, 0, 16};
    heap.items = heap.small;
    PyObject *result = NULL;
    PyObject *pending = PyDict_New();
    PyObject *assigned = PySet_New(NULL);
    if (pending == NULL || assigned == NULL)
        goto done;
    if (PyDict_SetItem(pending, args[0], args[1]) < 0 || heap_push(&heap, args[0]) < 0)
        goto done;
    while (heap.n > 0) {
        long long seq;
        PyObject *node = heap_pop(&heap, &seq);
        PyObject *gouts = PyDict_GetItemWithError(pending, node); /* borrowed */
        if (gouts == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_RuntimeError, "the backward walk lost a node's gradient");
            Py_DECREF(node);
            goto done;
        }
        Py_INCREF(gouts);
        int err = PyDict_DelItem(pending, node);
        if (!err && seq < last_write) { /* a value it saved may have been written in place since */
            int maybe = maybe_written(node, seq, written);
            if (maybe < 0) {
                err = -1;
            } else if (maybe) {
                PyObject *r = PyObject_CallOneArg(check_writes, node);
                if (r == NULL)
                    err = -1;
                else
                    Py_DECREF(r);
            }
        }
        if (!err)
            err = run_node(node, gouts, retain_graph, pending, &heap, assigned, observer, retained,
                           seq < last_write ? as_it_was : NULL, seq);
        Py_DECREF(gouts);
        Py_DECREF(node);
        if (err < 0)
            goto done;
    }
    result = Py_NewRef(Py_None);
done:
    heap_clear(&heap);
    Py_XDECREF(pending);
    Py_XDECREF(assigned);
    return result;
}

/* setup_walk(unbroadcast, accumulate_leaf, add_pending, backward_of, freed_message, Tensor, _LazyZeros, ndarray,
 * _data_get, _data_set, cast_gradient): graph.py's helpers and the types the walk tells apart */
static PyObject *setup(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "setup_walk(unbroadcast, accumulate_leaf, add_pending, backward_of, message, "
                                         "Tensor, _LazyZeros, ndarray, _data_get, _data_set, cast_gradient)");
        return NULL;
    }
    Py_XSETREF(py_unbroadcast, Py_NewRef(args[0]));
    Py_XSETREF(py_accumulate_leaf, Py_NewRef(args[1]));
    Py_XSETREF(py_add_pending, Py_NewRef(args[2]));
    Py_XSETREF(py_backward_of, Py_NewRef(args[3]));
    Py_XSETREF(freed_message, Py_NewRef(args[4]));
    Py_XSETREF(tensor_type, Py_NewRef(args[5]));
    Py_XSETREF(lazy_type, Py_NewRef(args[6]));
    Py_XSETREF(ndarray_type, Py_NewRef(args[7]));
    Py_XSETREF(py_data_get, Py_NewRef(args[8]));
    Py_XSETREF(py_data_set, Py_NewRef(args[9]));
    Py_XSETREF(py_cast_gradient, Py_NewRef(args[10]));
    Py_RETURN_NONE;
}

/* set_leaf_hooks(flag): whether some leaf has hooks (then the tutorial's fast path for a zero_()'d .grad is left
 * to graph._accumulate_leaf, which runs them first) */
static PyObject *set_flag(int *target, PyObject *flag)
{
    int on = PyObject_IsTrue(flag);
    if (on < 0)
        return NULL;
    *target = on;
    Py_RETURN_NONE;
}

static PyObject *set_leaf_hooks(PyObject *module, PyObject *flag)
{
    return set_flag(&leaf_hooks, flag);
}

/* set_node_hooks(flag): whether some node has hooks of its own (then each node is asked) */
static PyObject *set_node_hooks(PyObject *module, PyObject *flag)
{
    return set_flag(&node_hooks, flag);
}

static PyMethodDef methods[] = {
    {"set_node_hooks", (PyCFunction)set_node_hooks, METH_O, "set_node_hooks(flag): nodes' own hooks go to Python"},
    {"set_leaf_hooks", (PyCFunction)set_leaf_hooks, METH_O, "set_leaf_hooks(flag): leaves' gradients go to Python"},
    {"apply", (PyCFunction)(void (*)(void))apply, METH_FASTCALL | METH_KEYWORDS,
     "apply(cls, *args, **kwargs): Function.apply (a built-in of one or two inputs records here)"},
    {"setup_apply", (PyCFunction)(void (*)(void))setup_apply, METH_FASTCALL, "setup_apply(...): what apply calls"},
    {"walk", (PyCFunction)(void (*)(void))walk, METH_FASTCALL,
     "walk(node, grad, retain_graph, observer, retained): Tensor.backward's walk"},
    {"setup_walk", (PyCFunction)(void (*)(void))setup, METH_FASTCALL, "setup_walk(...): what the walk calls"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_cgraph",
                                        "Recording a built-in's node, and Tensor.backward()'s walk, in C.", -1, methods};

PyMODINIT_FUNC PyInit__cgraph(void)
{
#define INTERN(var, text)                                                                                              \
    if ((var = PyUnicode_InternFromString(text)) == NULL)                                                            \
        return NULL;
    INTERN(s_hook, "_hook");
    INTERN(s_depth, "depth");
    INTERN(s_thread, "thread");
    INTERN(s_forward, "forward");
    INTERN(s_needs_input_grad, "needs_input_grad");
    INTERN(s_rg, "_rg");
    INTERN(s_grad, "_grad");
    INTERN(s_class, "__class__");
    INTERN(s_base, "base");
    INTERN(s_array_data, "data");
    INTERN(s_mem, "mem");
    INTERN(s_strides, "strides");
    INTERN(s_flags, "flags");
    INTERN(s_writeable, "writeable");
    INTERN(s_raw, "raw");
    INTERN(s_n_out, "_n_out");
    INTERN(s_freed, "_freed");
    INTERN(s_pre_hooks, "_pre_hooks");
    INTERN(s_post_hooks, "_post_hooks");
    INTERN(s_backward, "backward");
    INTERN(s_inputs, "_inputs");
    INTERN(s_data, "_data");
    INTERN(s_shape, "shape");
    INTERN(s_dtype, "dtype");
    INTERN(s_complex_ok, "complex_ok");
    INTERN(s_grad_fn, "grad_fn");
    INTERN(s_seq, "_seq");
    INTERN(s_rebound_at, "_rebound_at");
    INTERN(s_saved, "saved");
    INTERN(s_saved_user, "_saved");
    INTERN(s_out_index, "_out_index");
    INTERN(s_node_begin, "node_begin");
    INTERN(s_node_end, "node_end");
    INTERN(s_unbroadcast, "unbroadcast");
    INTERN(s_retained, "_retained");
#undef INTERN
    if ((empty_tuple = PyTuple_New(0)) == NULL)
        return NULL;
    return PyModule_Create(&module_def);
}
