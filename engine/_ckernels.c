/* Two masked writes of the CPU's backward pass in C, each without a branch per element: the ReLU's mask is true
 * at random for about half the elements, and a branch mispredicts half of them (a plain C loop with ?: took the
 * tutorial's 64 x 100 float32 gradient 21 us, as NumPy's masked assignment takes 34 us; these take ~2.5 us).
 *
 * - pass_where(out, gy, x, lo, strict): out = gy where x >= lo, +0.0 elsewhere (NaN in x: +0.0), the backward of
 *   clamp(min=lo); with strict, +0.0 where x <= lo, gy elsewhere (NaN in x: gy), the backward of relu on its
 *   output. Both as PyTorch has them (where(self >= min, grad, 0); threshold_backward: result <= 0 ? 0 : grad): an
 *   infinite or NaN gradient where the mask is false gives 0, not the NaN of grad * mask.
 * - zero_where(arr, mask): arr[mask] = +0.0 in place, every other element untouched: the tutorial's
 *   grad_h[h < 0] = 0.
 *
 * Both work on the bits: an element is ANDed with all ones (kept, NaN payloads and the sign of zero included) or
 * with 0 (+0.0), so the result is the same bit for bit as engine/kernels.py's NumPy spelling, which runs where
 * this file was not built. The arrays are C-contiguous, native float32 or float64 of one length (bool for the
 * mask); engine/kernels.py checks that before it calls, and anything else raises ValueError here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

/* 4 for a native float32 buffer, 8 for float64, 0 for anything else */
static int float_size(const Py_buffer *b)
{
    if (b->format == NULL || b->format[1] != '\0')
        return 0;
    return b->format[0] == 'f' ? 4 : b->format[0] == 'd' ? 8 : 0;
}

/* Buffers of args[0..n-1] (the first writable, to write to), each C-contiguous: native float32 or float64 arrays of
 * one length and dtype. Their float size, or -1 with an exception set and no buffer held. */
static int float_buffers(PyObject *const *args, int n, Py_buffer *bufs, const char *what)
{
    const int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT;
    for (int i = 0; i < n; i++) {
        if (PyObject_GetBuffer(args[i], &bufs[i], i == 0 ? flags | PyBUF_WRITABLE : flags) < 0) {
            while (--i >= 0)
                PyBuffer_Release(&bufs[i]);
            return -1;
        }
    }
    int size = float_size(&bufs[0]);
    for (int i = 1; i < n && size; i++)
        if (float_size(&bufs[i]) != size || bufs[i].len != bufs[0].len)
            size = 0;
    if (size == 0) {
        PyErr_Format(PyExc_ValueError, "%s: contiguous float32 or float64 arrays of one length and dtype", what);
        for (int i = 0; i < n; i++)
            PyBuffer_Release(&bufs[i]);
        return -1;
    }
    return size;
}

static PyObject *pass_where(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "pass_where(out, gy, x, lo, strict)");
        return NULL;
    }
    double lo = PyFloat_AsDouble(args[3]);
    if (lo == -1.0 && PyErr_Occurred())
        return NULL;
    int strict = PyObject_IsTrue(args[4]);
    if (strict < 0)
        return NULL;
    Py_buffer bufs[3];
    int size = float_buffers(args, 3, bufs, "pass_where");
    if (size < 0)
        return NULL;
    Py_buffer o = bufs[0], g = bufs[1], x = bufs[2];
    Py_ssize_t n = o.len / size;
    if (size == 4) {
        uint32_t *po = o.buf;
        const uint32_t *pg = g.buf;
        const float *px = x.buf;
        const float l = (float)lo;
        if (strict)
            for (Py_ssize_t i = 0; i < n; i++)
                po[i] = pg[i] & ((uint32_t)(px[i] <= l) - 1u);
        else
            for (Py_ssize_t i = 0; i < n; i++)
                po[i] = pg[i] & (0u - (uint32_t)(px[i] >= l));
    } else {
        uint64_t *po = o.buf;
        const uint64_t *pg = g.buf;
        const double *px = x.buf;
        if (strict)
            for (Py_ssize_t i = 0; i < n; i++)
                po[i] = pg[i] & ((uint64_t)(px[i] <= lo) - 1ull);
        else
            for (Py_ssize_t i = 0; i < n; i++)
                po[i] = pg[i] & (0ull - (uint64_t)(px[i] >= lo));
    }
    for (int i = 0; i < 3; i++)
        PyBuffer_Release(&bufs[i]);
    Py_RETURN_NONE;
}

static PyObject *zero_where(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "zero_where(arr, mask)");
        return NULL;
    }
    Py_buffer a, m;
    if (PyObject_GetBuffer(args[0], &a, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0)
        return NULL;
    if (PyObject_GetBuffer(args[1], &m, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&a);
        return NULL;
    }
    PyObject *result = NULL;
    int size = float_size(&a);
    if (size == 0 || m.format == NULL || strcmp(m.format, "?") != 0 || m.len * size != a.len) {
        PyErr_SetString(PyExc_ValueError, "zero_where: a contiguous float32 or float64 array and a bool mask of its "
                                          "length");
        goto done;
    }
    Py_ssize_t n = m.len;
    const unsigned char *pm = m.buf; /* NumPy's bools are the bytes 0 and 1 */
    if (size == 4) {
        uint32_t *pa = a.buf;
        for (Py_ssize_t i = 0; i < n; i++)
            pa[i] &= (uint32_t)(pm[i] != 0) - 1u; /* true -> 0, false -> all ones */
    } else {
        uint64_t *pa = a.buf;
        for (Py_ssize_t i = 0; i < n; i++)
            pa[i] &= (uint64_t)(pm[i] != 0) - 1ull;
    }
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&a);
    PyBuffer_Release(&m);
    return result;
}

/* erf and GELU, forward and backward, elementwise over contiguous float32 (in float: erff, expf, tanhf, as
 * PyTorch's float32 kernels compute) or float64 arrays, with PyTorch's formulas in PyTorch's order of operations.
 * kind: 0 erf(x), 1 GELU, 2 GELU's tanh approximation. engine/functions/elementwise.py has the NumPy spelling
 * (Cephes' erf), which runs where this was not built: within a few units in the last place of these. */
/* float32: erf and exp in double precision, in straight-line code that the compiler vectorises (libm's erff is a
 * call per element: a GPT's MLP spent a third of its CPU step there). erf is x P(x^2) / Q(x^2) on |x| <= 4 (past
 * that erf rounds to +-1 in float32), P of degree 5 and Q of degree 5 with Q(0) = 1, fitted for this project to
 * math.erf's erf(x) / x at 20,000 points of (0, 4] by linearised least squares on the relative error, reweighted
 * (Loeb's iteration, then Lawson's weights towards the largest errors): relative error 2.5e-8 in double, so the
 * float32 results are within an ulp of the correctly rounded ones (tests/engine/test_gpt2_parts.py). exp is
 * Cody and Waite's: 2^n times a degree-7 Taylor polynomial of the remainder (|r| <= ln2/2: error 5e-9). NaN
 * passes through both (the clamps are comparisons, which NaN fails). */
#define GELU_PDF_BETA (M_2_SQRTPI * M_SQRT1_2 * 0.5)

static inline double erf_rational(double x)
{
    double a = x < -4.0 ? -4.0 : (x > 4.0 ? 4.0 : x);
    double z = a * a;
    double p = 1.9872652899932675e-06;
    p = p * z + 2.8455830259395756e-04;
    p = p * z + 3.882138817077039e-03;
    p = p * z + 5.3098050195395693e-02;
    p = p * z + 1.9351431000794866e-01;
    p = p * z + 1.1283791394848355e+00;
    double q = 3.742480403204351e-05;
    q = q * z + 1.1853162826446911e-03;
    q = q * z + 1.5204806597870105e-02;
    q = q * z + 1.1533762911907244e-01;
    q = q * z + 5.048301504462477e-01;
    q = q * z + 1.0;
    double r = a * p / q;
    return r > 1.0 ? 1.0 : (r < -1.0 ? -1.0 : r);
}

static inline double exp_nonpositive(double y) /* exp(y) for y <= 0 (or NaN) */
{
    const double magic = 6755399441055744.0; /* 1.5 * 2^52: adding it rounds to an integer, kept in the low bits */
    y = y < -700.0 ? -700.0 : y;
    double t = y * 1.4426950408889634 + magic;
    double n = t - magic;
    double r = (y - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
    double p = 1.0 + r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (1.0 / 720 +
               r * (1.0 / 5040)))))));
    int64_t bits, magic_bits;
    memcpy(&bits, &t, 8);
    memcpy(&magic_bits, &magic, 8);
    uint64_t scale_bits = (uint64_t)(bits - magic_bits + 1023) << 52;
    double scale;
    memcpy(&scale, &scale_bits, 8);
    return p * scale;
}

/* on x86-64, an AVX2 copy of the two loops beside the baseline one, chosen when the module loads (the extension is
 * built where it runs, but the binary may not be: no -march) */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define WIDE_LOOP __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef WIDE_LOOP
#define WIDE_LOOP
#endif

WIDE_LOOP static void gelu_forward_f32(float *po, const float *px, Py_ssize_t n, long kind)
{
    if (kind == 0)
        for (Py_ssize_t i = 0; i < n; i++)
            po[i] = (float)erf_rational((double)px[i]);
    else
        for (Py_ssize_t i = 0; i < n; i++) {
            double v = px[i];
            po[i] = (float)(v * 0.5 * (1.0 + erf_rational(v * M_SQRT1_2)));
        }
}

WIDE_LOOP static void gelu_backward_f32(float *po, const float *pg, const float *px, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        double v = px[i];
        double cdf = 0.5 * (1.0 + erf_rational(v * M_SQRT1_2));
        double pdf = GELU_PDF_BETA * exp_nonpositive(v * v * -0.5);
        po[i] = (float)((double)pg[i] * (cdf + v * pdf));
    }
}

#define GELU_KAPPA 0.044715
#define GELU_TANH_BETA (M_SQRT2 * M_2_SQRTPI * 0.5)

#define FORWARD_LOOP(T, ERF, TANH)                                                                              \
    {                                                                                                         \
        T *po = o.buf;                                                                                        \
        const T *px = x.buf;                                                                                  \
        if (kind == 0)                                                                                        \
            for (Py_ssize_t i = 0; i < n; i++)                                                                \
                po[i] = ERF(px[i]);                                                                           \
        else if (kind == 1)                                                                                   \
            for (Py_ssize_t i = 0; i < n; i++)                                                                \
                po[i] = px[i] * (T)0.5 * ((T)1 + ERF(px[i] * (T)M_SQRT1_2));                                 \
        else                                                                                                  \
            for (Py_ssize_t i = 0; i < n; i++) {                                                              \
                T v = px[i];                                                                                  \
                T inner = (T)GELU_TANH_BETA * (v + (T)GELU_KAPPA * (v * v * v));                              \
                po[i] = (T)0.5 * v * ((T)1 + TANH(inner));                                                    \
            }                                                                                                 \
    }

#define BACKWARD_LOOP(T, ERF, EXP, TANH)                                                                        \
    {                                                                                                         \
        T *po = o.buf;                                                                                        \
        const T *pg = g.buf;                                                                                  \
        const T *px = x.buf;                                                                                  \
        if (kind == 1)                                                                                        \
            for (Py_ssize_t i = 0; i < n; i++) {                                                              \
                T v = px[i];                                                                                  \
                T cdf = (T)0.5 * ((T)1 + ERF(v * (T)M_SQRT1_2));                                              \
                T pdf = (T)GELU_PDF_BETA * EXP(v * v * (T)-0.5);                                              \
                po[i] = pg[i] * (cdf + v * pdf);                                                              \
            }                                                                                                 \
        else                                                                                                  \
            for (Py_ssize_t i = 0; i < n; i++) {                                                              \
                T v = px[i];                                                                                  \
                T x_sq = v * v;                                                                               \
                T inner = (T)GELU_TANH_BETA * (v + (T)GELU_KAPPA * (x_sq * v));                               \
                T t = TANH(inner);                                                                            \
                T left_derivative = (T)0.5 * ((T)1 + t);                                                      \
                T right_derivative = (T)0.5 * v * ((T)1 - t * t) * ((T)GELU_TANH_BETA * ((T)1 + (T)3 * (T)GELU_KAPPA * x_sq)); \
                po[i] = pg[i] * (left_derivative + right_derivative);                                         \
            }                                                                                                 \
    }

/* gelu(out, x, kind): kind 0 erf, 1 GELU, 2 GELU (tanh) */
static PyObject *gelu(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "gelu(out, x, kind)");
        return NULL;
    }
    long kind = PyLong_AsLong(args[2]);
    if (kind == -1 && PyErr_Occurred())
        return NULL;
    if (kind < 0 || kind > 2) {
        PyErr_SetString(PyExc_ValueError, "gelu: kind 0, 1 or 2");
        return NULL;
    }
    Py_buffer bufs[2];
    int size = float_buffers(args, 2, bufs, "gelu");
    if (size < 0)
        return NULL;
    Py_buffer o = bufs[0], x = bufs[1];
    Py_ssize_t n = o.len / size;
    Py_BEGIN_ALLOW_THREADS
    if (size == 4 && kind != 2)
        gelu_forward_f32(o.buf, x.buf, n, kind);
    else if (size == 4)
        FORWARD_LOOP(float, erff, tanhf)
    else
        FORWARD_LOOP(double, erf, tanh)
    Py_END_ALLOW_THREADS
    for (int i = 0; i < 2; i++)
        PyBuffer_Release(&bufs[i]);
    Py_RETURN_NONE;
}

/* gelu_backward(out, gy, x, kind): kind 1 GELU, 2 GELU (tanh) */
static PyObject *gelu_backward(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "gelu_backward(out, gy, x, kind)");
        return NULL;
    }
    long kind = PyLong_AsLong(args[3]);
    if (kind == -1 && PyErr_Occurred())
        return NULL;
    if (kind < 1 || kind > 2) {
        PyErr_SetString(PyExc_ValueError, "gelu_backward: kind 1 or 2");
        return NULL;
    }
    Py_buffer bufs[3];
    int size = float_buffers(args, 3, bufs, "gelu_backward");
    if (size < 0)
        return NULL;
    Py_buffer o = bufs[0], g = bufs[1], x = bufs[2];
    Py_ssize_t n = o.len / size;
    Py_BEGIN_ALLOW_THREADS
    if (size == 4 && kind == 1)
        gelu_backward_f32(o.buf, g.buf, x.buf, n);
    else if (size == 4)
        BACKWARD_LOOP(float, erff, expf, tanhf)
    else
        BACKWARD_LOOP(double, erf, exp, tanh)
    Py_END_ALLOW_THREADS
    for (int i = 0; i < 3; i++)
        PyBuffer_Release(&bufs[i]);
    Py_RETURN_NONE;
}

/* 2-D max pooling over the last two dimensions of C-contiguous float32/float64 planes, the same picks as
 * engine/functions/conv.py's NumPy spelling (which pads with -inf): the kernel's offsets in row-major order, an
 * offset that falls in the padding reading -inf; an offset's value taken where it is greater than the best so far
 * or NaN (the first maximum; the last NaN), as PyTorch's CPU kernel compares. */
/* A row of outputs at a time, one kernel offset at a time: the outputs whose input at that offset lies inside the
 * plane ([lo, hi]) are compared without a bounds check per element (the others read -inf: no change but at the
 * first offset, which every output takes), and the comparison is a select, not a branch (which offset holds the
 * maximum is data, and unpredictable). */
#define MAX_POOL_LOOP(T, NEG_INF)                                                                                  \
    {                                                                                                              \
        const T *px = x.buf;                                                                                       \
        T *pb = best.buf;                                                                                          \
        int32_t *pa = arg.buf;                                                                                     \
        for (Py_ssize_t p = 0; p < planes; p++) {                                                                  \
            const T *plane = px + p * H * W;                                                                       \
            for (long oy = 0; oy < OH; oy++) {                                                                     \
                T *brow = pb + (p * OH + oy) * OW;                                                                 \
                int32_t *arow = pa + (p * OH + oy) * OW;                                                           \
                int32_t i = 0;                                                                                     \
                for (long ky = 0; ky < kh; ky++) {                                                                 \
                    long iy = oy * sh + ky * dh - ph;                                                              \
                    int row = iy >= 0 && iy < H;                                                                   \
                    const T *xrow = plane + (row ? iy * W : 0);                                                    \
                    for (long kx = 0; kx < kw; kx++, i++) {                                                        \
                        long off = kx * dw - pw; /* ix = ox * sw + off */                                          \
                        long lo = off >= 0 ? 0 : (-off + sw - 1) / sw;                                             \
                        long hi = W - 1 - off < 0 ? -1 : (W - 1 - off) / sw;                                       \
                        if (hi > OW - 1)                                                                           \
                            hi = OW - 1;                                                                           \
                        if (!row)                                                                                  \
                            hi = -1;                                                                               \
                        if (i == 0) {                                                                              \
                            for (long ox = 0; ox < OW; ox++) {                                                     \
                                brow[ox] = NEG_INF;                                                                \
                                arow[ox] = 0;                                                                      \
                            }                                                                                      \
                            for (long ox = lo; ox <= hi; ox++)                                                     \
                                brow[ox] = xrow[ox * sw + off];                                                    \
                            continue;                                                                              \
                        }                                                                                          \
                        for (long ox = lo; ox <= hi; ox++) {                                                       \
                            T v = xrow[ox * sw + off];                                                             \
                            T b = brow[ox];                                                                        \
                            int take = (v > b) | (v != v);                                                         \
                            brow[ox] = take ? v : b;                                                               \
                            arow[ox] = take ? i : arow[ox];                                                        \
                        }                                                                                          \
                    }                                                                                              \
                }                                                                                                  \
            }                                                                                                      \
        }                                                                                                          \
    }

#define MAX_POOL_BACKWARD_LOOP(T)                                                                                  \
    {                                                                                                              \
        T *pgx = gx.buf;                                                                                           \
        const T *pgy = gy.buf;                                                                                     \
        const int32_t *pa = arg.buf;                                                                               \
        for (Py_ssize_t p = 0; p < planes; p++)                                                                    \
            for (long oy = 0; oy < OH; oy++)                                                                       \
                for (long ox = 0; ox < OW; ox++) {                                                                 \
                    Py_ssize_t o = (p * OH + oy) * OW + ox;                                                        \
                    long ky = pa[o] / kw, kx = pa[o] % kw;                                                         \
                    long iy = oy * sh + ky * dh - ph, ix = ox * sw + kx * dw - pw;                                 \
                    if (iy >= 0 && iy < H && ix >= 0 && ix < W) /* (else the padding's: dropped) */              \
                        pgx[p * H * W + iy * W + ix] += pgy[o];                                                    \
                }                                                                                                  \
    }

/* the geometry arguments args[first..first+11]: H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw */
static int pool_geometry(PyObject *const *args, long *g)
{
    for (int i = 0; i < 12; i++) {
        g[i] = PyLong_AsLong(args[i]);
        if (g[i] == -1 && PyErr_Occurred())
            return -1;
        if (g[i] < (i < 4 ? 0 : i < 8 ? 1 : i < 10 ? 0 : 1)) {
            PyErr_SetString(PyExc_ValueError, "max_pool2d: a size, stride or dilation out of range");
            return -1;
        }
    }
    return 0;
}

/* buffers of a float array (args[0] writable where ``writable``) and an int32 one; the float size, or -1 */
static int float_and_index(PyObject *floats, PyObject *index, int writable_float, int writable_index, Py_buffer *f,
                           Py_buffer *a)
{
    const int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT;
    if (PyObject_GetBuffer(floats, f, writable_float ? flags | PyBUF_WRITABLE : flags) < 0)
        return -1;
    if (PyObject_GetBuffer(index, a, writable_index ? flags | PyBUF_WRITABLE : flags) < 0) {
        PyBuffer_Release(f);
        return -1;
    }
    int size = float_size(f);
    if (!size || a->itemsize != 4 || a->format == NULL || (a->format[0] != 'i' && a->format[0] != 'l')
        || a->len / 4 != f->len / size) {
        PyErr_SetString(PyExc_ValueError, "max_pool2d: contiguous float32/float64 and int32 arrays of one shape");
        PyBuffer_Release(f);
        PyBuffer_Release(a);
        return -1;
    }
    return size;
}

/* max_pool2d(best, arg, x, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw) */
static PyObject *max_pool2d(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 15) {
        PyErr_SetString(PyExc_TypeError, "max_pool2d(best, arg, x, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw)");
        return NULL;
    }
    long g[12];
    if (pool_geometry(args + 3, g) < 0)
        return NULL;
    long H = g[0], W = g[1], OH = g[2], OW = g[3], kh = g[4], kw = g[5], sh = g[6], sw = g[7], ph = g[8],
         pw = g[9], dh = g[10], dw = g[11];
    Py_buffer best, arg, x;
    int size = float_and_index(args[0], args[1], 1, 1, &best, &arg);
    if (size < 0)
        return NULL;
    if (PyObject_GetBuffer(args[2], &x, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&best);
        PyBuffer_Release(&arg);
        return NULL;
    }
    Py_ssize_t planes = (H > 0 && W > 0) ? x.len / size / (H * W) : 0;
    if (float_size(&x) != size || planes * OH * OW * size != best.len || planes * H * W * size != x.len) {
        PyErr_SetString(PyExc_ValueError, "max_pool2d: x's dtype or size does not match");
        PyBuffer_Release(&best);
        PyBuffer_Release(&arg);
        PyBuffer_Release(&x);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    if (size == 4)
        MAX_POOL_LOOP(float, -INFINITY)
    else
        MAX_POOL_LOOP(double, -INFINITY)
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&best);
    PyBuffer_Release(&arg);
    PyBuffer_Release(&x);
    Py_RETURN_NONE;
}

/* max_pool2d_backward(gx, gy, arg, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw): gx (zeros) += gy at each pick */
static PyObject *max_pool2d_backward(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 15) {
        PyErr_SetString(PyExc_TypeError,
                        "max_pool2d_backward(gx, gy, arg, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw)");
        return NULL;
    }
    long g[12];
    if (pool_geometry(args + 3, g) < 0)
        return NULL;
    long H = g[0], W = g[1], OH = g[2], OW = g[3], kw = g[5], sh = g[6], sw = g[7], ph = g[8], pw = g[9],
         dh = g[10], dw = g[11];
    Py_buffer gy, arg, gx;
    int size = float_and_index(args[1], args[2], 0, 0, &gy, &arg);
    if (size < 0)
        return NULL;
    if (PyObject_GetBuffer(args[0], &gx, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&gy);
        PyBuffer_Release(&arg);
        return NULL;
    }
    Py_ssize_t planes = (OH > 0 && OW > 0) ? gy.len / size / (OH * OW) : 0;
    if (float_size(&gx) != size || planes * H * W * size != gx.len || planes * OH * OW * size != gy.len) {
        PyErr_SetString(PyExc_ValueError, "max_pool2d_backward: gx's dtype or size does not match");
        PyBuffer_Release(&gy);
        PyBuffer_Release(&arg);
        PyBuffer_Release(&gx);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    if (size == 4)
        MAX_POOL_BACKWARD_LOOP(float)
    else
        MAX_POOL_BACKWARD_LOOP(double)
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&gy);
    PyBuffer_Release(&arg);
    PyBuffer_Release(&gx);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"max_pool2d", (PyCFunction)(void (*)(void))max_pool2d, METH_FASTCALL,
     "max_pool2d(best, arg, x, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw): each window's maximum and offset"},
    {"max_pool2d_backward", (PyCFunction)(void (*)(void))max_pool2d_backward, METH_FASTCALL,
     "max_pool2d_backward(gx, gy, arg, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw): gx += gy at each pick"},
    {"gelu", (PyCFunction)(void (*)(void))gelu, METH_FASTCALL,
     "gelu(out, x, kind): out = erf(x) (kind 0), GELU(x) (1) or its tanh approximation (2)"},
    {"gelu_backward", (PyCFunction)(void (*)(void))gelu_backward, METH_FASTCALL,
     "gelu_backward(out, gy, x, kind): out = gy * GELU'(x) (kind 1) or of its tanh approximation (2)"},
    {"pass_where", (PyCFunction)(void (*)(void))pass_where, METH_FASTCALL,
     "pass_where(out, gy, x, lo, strict): out = gy where x >= lo (strict: where not x <= lo), +0.0 elsewhere"},
    {"zero_where", (PyCFunction)(void (*)(void))zero_where, METH_FASTCALL,
     "zero_where(arr, mask): arr[mask] = +0.0, in place"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "engine._ckernels",
                                        "The CPU backward's masked writes, branch-free, GELU and 2-D max pooling, in C.", -1, methods};

PyMODINIT_FUNC PyInit__ckernels(void)
{
    return PyModule_Create(&module_def);
}
