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
#include <pthread.h>

/* Intra-op threads, as PyTorch's parallel_for: a pass over n elements (or rows) is cut into at most `threads`
 * contiguous ranges of at least `grain` each; the caller runs the first and a thread of its own each other one
 * (created per pass: ~20 us, so only passes of a few hundred microseconds are cut). Every element's result is
 * the one a single thread computes (each range runs the same loop), so the number of threads changes no bit.
 * set_threads(k) (engine.threads.set_num_threads) sets the count; where a thread cannot be created its range
 * runs on the caller. */
#define MAX_THREADS 64
static int threads = 1;

typedef void (*range_fn)(void *ctx, Py_ssize_t lo, Py_ssize_t hi);

struct range_job {
    range_fn fn;
    void *ctx;
    Py_ssize_t lo, hi;
};

static void *run_range(void *arg)
{
    struct range_job *job = arg;
    job->fn(job->ctx, job->lo, job->hi);
    return NULL;
}

static void parallel_for(Py_ssize_t n, Py_ssize_t grain, range_fn fn, void *ctx)
{
    Py_ssize_t k = grain > 0 ? n / grain : 1;
    if (k > threads)
        k = threads;
    if (k <= 1) {
        fn(ctx, 0, n);
        return;
    }
    pthread_t ids[MAX_THREADS];
    struct range_job jobs[MAX_THREADS];
    int started[MAX_THREADS];
    for (Py_ssize_t i = 1; i < k; i++) {
        jobs[i] = (struct range_job){fn, ctx, n * i / k, n * (i + 1) / k};
        started[i] = pthread_create(&ids[i], NULL, run_range, &jobs[i]) == 0;
    }
    fn(ctx, 0, n / k);
    for (Py_ssize_t i = 1; i < k; i++) {
        if (started[i])
            pthread_join(ids[i], NULL);
        else
            run_range(&jobs[i]);
    }
}

static PyObject *set_threads(PyObject *module, PyObject *arg)
{
    long k = PyLong_AsLong(arg);
    if (k == -1 && PyErr_Occurred())
        return NULL;
    if (k < 1) {
        PyErr_SetString(PyExc_ValueError, "set_threads: a positive number of threads");
        return NULL;
    }
    threads = k > MAX_THREADS ? MAX_THREADS : (int)k;
    Py_RETURN_NONE;
}

static PyObject *get_threads(PyObject *module, PyObject *unused)
{
    return PyLong_FromLong(threads);
}

/* 4 for a native float32 buffer, 8 for float64, 0 for anything else */
static int float_size(const Py_buffer *b)
{
    if (b->format == NULL || b->format[1] != '\0')
        return 0;
    return b->format[0] == 'f' ? 4 : b->format[0] == 'd' ? 8 : 0;
}

/* Buffers of args[0..n-1] (the first `writable` writable, to write to), each C-contiguous: native float32 or
 * float64 arrays of one length and dtype. Their float size, or -1 with an exception set and no buffer held. */
static int float_buffers_w(PyObject *const *args, int n, int writable, Py_buffer *bufs, const char *what)
{
    const int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT;
    for (int i = 0; i < n; i++) {
        if (PyObject_GetBuffer(args[i], &bufs[i], i < writable ? flags | PyBUF_WRITABLE : flags) < 0) {
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

#define float_buffers(args, n, bufs, what) float_buffers_w(args, n, 1, bufs, what)

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

/* on x86-64, an AVX-512 (x86-64-v4: 8 doubles a vector, and FMA) and an AVX2 copy of the loops beside the baseline
 * one, chosen when the module loads (the extension is built where it runs, but the binary may not be: no -march).
 * GCC names x86-64-v4 from version 11; elsewhere the AVX2 copy alone. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#define WIDE_LOOP __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define WIDE_LOOP __attribute__((target_clones("avx2", "default")))
#endif
#endif
#endif
#ifndef WIDE_LOOP
#define WIDE_LOOP
#endif

/* One pass's arrays (out, gy, x; gy unused forward) and kind, for the ranges of parallel_for */
struct gelu_pass {
    void *o;
    const void *g, *x;
    long kind;
};

WIDE_LOOP static void gelu_forward_f32(void *ctx, Py_ssize_t lo, Py_ssize_t hi)
{
    const struct gelu_pass *p = ctx;
    float *po = p->o;
    const float *px = p->x;
    if (p->kind == 0)
        for (Py_ssize_t i = lo; i < hi; i++)
            po[i] = (float)erf_rational((double)px[i]);
    else
        for (Py_ssize_t i = lo; i < hi; i++) {
            double v = px[i];
            po[i] = (float)(v * 0.5 * (1.0 + erf_rational(v * M_SQRT1_2)));
        }
}

WIDE_LOOP static void gelu_backward_f32(void *ctx, Py_ssize_t lo, Py_ssize_t hi)
{
    const struct gelu_pass *p = ctx;
    float *po = p->o;
    const float *pg = p->g, *px = p->x;
    for (Py_ssize_t i = lo; i < hi; i++) {
        double v = px[i];
        double cdf = 0.5 * (1.0 + erf_rational(v * M_SQRT1_2));
        double pdf = GELU_PDF_BETA * exp_nonpositive(v * v * -0.5);
        po[i] = (float)((double)pg[i] * (cdf + v * pdf));
    }
}

#define GELU_KAPPA 0.044715
#define GELU_TANH_BETA (M_SQRT2 * M_2_SQRTPI * 0.5)

/* the other passes, in the dtype's own libm functions: NAME_T(ctx, lo, hi) */
#define FORWARD_RANGE(NAME, T, ERF, TANH)                                                                       \
    static void NAME(void *ctx, Py_ssize_t lo, Py_ssize_t hi)                                                 \
    {                                                                                                         \
        const struct gelu_pass *p = ctx;                                                                      \
        T *po = p->o;                                                                                         \
        const T *px = p->x;                                                                                   \
        if (p->kind == 0)                                                                                     \
            for (Py_ssize_t i = lo; i < hi; i++)                                                              \
                po[i] = ERF(px[i]);                                                                           \
        else if (p->kind == 1)                                                                                \
            for (Py_ssize_t i = lo; i < hi; i++)                                                              \
                po[i] = px[i] * (T)0.5 * ((T)1 + ERF(px[i] * (T)M_SQRT1_2));                                 \
        else                                                                                                  \
            for (Py_ssize_t i = lo; i < hi; i++) {                                                            \
                T v = px[i];                                                                                  \
                T inner = (T)GELU_TANH_BETA * (v + (T)GELU_KAPPA * (v * v * v));                              \
                po[i] = (T)0.5 * v * ((T)1 + TANH(inner));                                                    \
            }                                                                                                 \
    }

#define BACKWARD_RANGE(NAME, T, ERF, EXP, TANH)                                                                 \
    static void NAME(void *ctx, Py_ssize_t lo, Py_ssize_t hi)                                                 \
    {                                                                                                         \
        const struct gelu_pass *p = ctx;                                                                      \
        T *po = p->o;                                                                                         \
        const T *pg = p->g, *px = p->x;                                                                       \
        if (p->kind == 1)                                                                                     \
            for (Py_ssize_t i = lo; i < hi; i++) {                                                            \
                T v = px[i];                                                                                  \
                T cdf = (T)0.5 * ((T)1 + ERF(v * (T)M_SQRT1_2));                                              \
                T pdf = (T)GELU_PDF_BETA * EXP(v * v * (T)-0.5);                                              \
                po[i] = pg[i] * (cdf + v * pdf);                                                              \
            }                                                                                                 \
        else                                                                                                  \
            for (Py_ssize_t i = lo; i < hi; i++) {                                                            \
                T v = px[i];                                                                                  \
                T x_sq = v * v;                                                                               \
                T inner = (T)GELU_TANH_BETA * (v + (T)GELU_KAPPA * (x_sq * v));                               \
                T t = TANH(inner);                                                                            \
                T left_derivative = (T)0.5 * ((T)1 + t);                                                      \
                T right_derivative = (T)0.5 * v * ((T)1 - t * t) * ((T)GELU_TANH_BETA * ((T)1 + (T)3 * (T)GELU_KAPPA * x_sq)); \
                po[i] = pg[i] * (left_derivative + right_derivative);                                         \
            }                                                                                                 \
    }

FORWARD_RANGE(gelu_forward_libm_f32, float, erff, tanhf)
FORWARD_RANGE(gelu_forward_f64, double, erf, tanh)
BACKWARD_RANGE(gelu_backward_libm_f32, float, erff, expf, tanhf)
BACKWARD_RANGE(gelu_backward_f64, double, erf, exp, tanh)

/* elements per thread for the GELU passes: a thread costs ~50 us to start on the 2-core machine, a GELU element
 * ~1 ns (PyTorch cuts from 32768, with threads that wait in a pool) */
#define GELU_GRAIN 65536

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
    Py_ssize_t n = bufs[0].len / size;
    struct gelu_pass pass = {bufs[0].buf, NULL, bufs[1].buf, kind};
    range_fn fn = size == 8 ? gelu_forward_f64 : kind == 2 ? gelu_forward_libm_f32 : gelu_forward_f32;
    Py_BEGIN_ALLOW_THREADS
    parallel_for(n, GELU_GRAIN, fn, &pass);
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
    Py_ssize_t n = bufs[0].len / size;
    struct gelu_pass pass = {bufs[0].buf, bufs[1].buf, bufs[2].buf, kind};
    range_fn fn = size == 8 ? gelu_backward_f64 : kind == 2 ? gelu_backward_libm_f32 : gelu_backward_f32;
    Py_BEGIN_ALLOW_THREADS
    parallel_for(n, GELU_GRAIN, fn, &pass);
    Py_END_ALLOW_THREADS
    for (int i = 0; i < 3; i++)
        PyBuffer_Release(&bufs[i]);
    Py_RETURN_NONE;
}

/* Layer norm over the last `cols` elements of each row of C-contiguous float32/float64 arrays, forward and the
 * input's gradient, as engine/functions/reduction.py's NativeLayerNorm computes them in NumPy (which runs where
 * this was not built): a row's mean and biased variance (two passes, summed in double), rstd = 1 / sqrt(var +
 * eps), xhat = (x - mean) * rstd, out = xhat * weight + bias (either absent: NULL); backward, with g = gy *
 * weight, gx = rstd * (g - mean(g) - xhat * mean(g * xhat)) (the means in double). Rows are cut across threads
 * (each row's arithmetic is the same on any thread). */
struct norm_pass {
    void *out, *xhat, *rstd;
    const void *x, *gy, *weight, *bias;
    Py_ssize_t cols;
    double eps;
};

/* Sums in 8 lanes (element j into lane j % 8, the lanes added pairwise at the end): a loop the compiler vectorises
 * without reassociating, in the same order on any machine and thread. */
#define LANES 8
#define LANE_SUM(acc) (((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7])))

#define LAYER_NORM_RANGES(SUFFIX, T)                                                                            \
    WIDE_LOOP static void layer_norm_##SUFFIX(void *ctx, Py_ssize_t lo, Py_ssize_t hi)                        \
    {                                                                                                         \
        const struct norm_pass *p = ctx;                                                                      \
        const Py_ssize_t c = p->cols, body = c - c % LANES;                                                   \
        const T *w = p->weight, *b = p->bias;                                                                 \
        for (Py_ssize_t r = lo; r < hi; r++) {                                                                \
            const T *x = (const T *)p->x + r * c;                                                             \
            T *xh = (T *)p->xhat + r * c, *o = (T *)p->out + r * c;                                           \
            double acc[LANES] = {0}, sq[LANES] = {0};                                                         \
            for (Py_ssize_t j = 0; j < body; j += LANES)                                                      \
                for (int k = 0; k < LANES; k++)                                                               \
                    acc[k] += x[j + k];                                                                       \
            for (Py_ssize_t j = body; j < c; j++)                                                             \
                acc[j - body] += x[j];                                                                        \
            const double mean = LANE_SUM(acc) / (double)c;                                                    \
            for (Py_ssize_t j = 0; j < body; j += LANES)                                                      \
                for (int k = 0; k < LANES; k++) {                                                             \
                    double d = x[j + k] - mean;                                                               \
                    sq[k] += d * d;                                                                           \
                }                                                                                             \
            for (Py_ssize_t j = body; j < c; j++) {                                                           \
                double d = x[j] - mean;                                                                       \
                sq[j - body] += d * d;                                                                        \
            }                                                                                                 \
            const double rstd = 1.0 / sqrt(LANE_SUM(sq) / (double)c + p->eps);                                \
            ((T *)p->rstd)[r] = (T)rstd;                                                                      \
            for (Py_ssize_t j = 0; j < c; j++)                                                                \
                xh[j] = (T)((x[j] - mean) * rstd);                                                            \
            if (w && b)                                                                                       \
                for (Py_ssize_t j = 0; j < c; j++)                                                            \
                    o[j] = xh[j] * w[j] + b[j];                                                               \
            else if (w)                                                                                       \
                for (Py_ssize_t j = 0; j < c; j++)                                                            \
                    o[j] = xh[j] * w[j];                                                                      \
            else if (b)                                                                                       \
                for (Py_ssize_t j = 0; j < c; j++)                                                            \
                    o[j] = xh[j] + b[j];                                                                      \
            else                                                                                              \
                memcpy(o, xh, (size_t)c * sizeof(T));                                                         \
        }                                                                                                     \
    }                                                                                                         \
                                                                                                              \
    WIDE_LOOP static void layer_norm_backward_##SUFFIX(void *ctx, Py_ssize_t lo, Py_ssize_t hi)               \
    {                                                                                                         \
        const struct norm_pass *p = ctx;                                                                      \
        const Py_ssize_t c = p->cols, body = c - c % LANES;                                                   \
        const T *w = p->weight;                                                                               \
        for (Py_ssize_t r = lo; r < hi; r++) {                                                                \
            const T *gy = (const T *)p->gy + r * c, *xh = (const T *)p->xhat + r * c;                         \
            T *gx = (T *)p->out + r * c;                                                                      \
            double sg[LANES] = {0}, sgh[LANES] = {0};                                                         \
            if (w) {                                                                                          \
                for (Py_ssize_t j = 0; j < body; j += LANES)                                                  \
                    for (int k = 0; k < LANES; k++) {                                                         \
                        double g = (double)(gy[j + k] * w[j + k]);                                            \
                        sg[k] += g;                                                                           \
                        sgh[k] += g * xh[j + k];                                                              \
                    }                                                                                         \
                for (Py_ssize_t j = body; j < c; j++) {                                                       \
                    double g = (double)(gy[j] * w[j]);                                                        \
                    sg[j - body] += g;                                                                        \
                    sgh[j - body] += g * xh[j];                                                               \
                }                                                                                             \
            } else {                                                                                          \
                for (Py_ssize_t j = 0; j < body; j += LANES)                                                  \
                    for (int k = 0; k < LANES; k++) {                                                         \
                        sg[k] += gy[j + k];                                                                   \
                        sgh[k] += (double)gy[j + k] * xh[j + k];                                              \
                    }                                                                                         \
                for (Py_ssize_t j = body; j < c; j++) {                                                       \
                    sg[j - body] += gy[j];                                                                    \
                    sgh[j - body] += (double)gy[j] * xh[j];                                                   \
                }                                                                                             \
            }                                                                                                 \
            const double mg = LANE_SUM(sg) / (double)c, mgh = LANE_SUM(sgh) / (double)c;                      \
            const double rstd = ((const T *)p->rstd)[r];                                                      \
            if (w)                                                                                            \
                for (Py_ssize_t j = 0; j < c; j++)                                                            \
                    gx[j] = (T)(rstd * ((double)(gy[j] * w[j]) - mg - xh[j] * mgh));                          \
            else                                                                                              \
                for (Py_ssize_t j = 0; j < c; j++)                                                            \
                    gx[j] = (T)(rstd * ((double)gy[j] - mg - xh[j] * mgh));                                   \
        }                                                                                                     \
    }

LAYER_NORM_RANGES(f32, float)
LAYER_NORM_RANGES(f64, double)

/* rows of a pass over `cols` elements each, at least this many elements per thread (a layer norm element costs
 * ~0.7 ns: two threads win from ~200,000 elements on the 2-core machine) */
#define NORM_GRAIN 131072

/* A buffer of args[i]: C-contiguous, of the float size `size` and `len` bytes (None: no buffer, *held 0), or -1
 * with an exception set. */
static int optional_buffer(PyObject *arg, Py_buffer *buf, int *held, int size, Py_ssize_t len, int writable,
                           const char *what)
{
    *held = 0;
    if (arg == Py_None)
        return 0;
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(arg, buf, flags) < 0)
        return -1;
    *held = 1;
    if (float_size(buf) != size || buf->len != len) {
        PyErr_Format(PyExc_ValueError, "%s: an array's dtype or length does not match", what);
        return -1;
    }
    return 0;
}

/* The weight's and bias's gradients of layer norm, sum over rows of gy * xhat and of gy, each column summed in
 * double in row order (one thread: the same bits for any thread count). gw or gb NULL: not wanted. */
#define PARAM_GRADS(T)                                                                                          \
    {                                                                                                         \
        const T *pg = gy.buf, *ph = xhat.buf;                                                                 \
        for (Py_ssize_t r = 0; r < rows; r++)                                                                 \
            for (Py_ssize_t j = 0; j < cols; j++) {                                                           \
                acc_w[j] += (double)pg[r * cols + j] * ph[r * cols + j];                                      \
                acc_b[j] += pg[r * cols + j];                                                                 \
            }                                                                                                 \
        for (Py_ssize_t j = 0; j < cols; j++) {                                                               \
            if (held_gw)                                                                                      \
                ((T *)gw.buf)[j] = (T)acc_w[j];                                                               \
            if (held_gb)                                                                                      \
                ((T *)gb.buf)[j] = (T)acc_b[j];                                                               \
        }                                                                                                     \
    }

/* layer_norm(out, xhat, rstd, x, weight, bias, cols, eps): out, xhat, x of rows * cols elements, rstd of rows,
 * weight and bias of cols or None */
static PyObject *layer_norm(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *what = "layer_norm";
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "layer_norm(out, xhat, rstd, x, weight, bias, cols, eps)");
        return NULL;
    }
    Py_ssize_t cols = PyLong_AsSsize_t(args[6]);
    if (cols == -1 && PyErr_Occurred())
        return NULL;
    double eps = PyFloat_AsDouble(args[7]);
    if (eps == -1.0 && PyErr_Occurred())
        return NULL;
    Py_buffer main[3], rstd, weight, bias; /* out, xhat, x */
    PyObject *const main_args[3] = {args[0], args[1], args[3]};
    int size = float_buffers_w(main_args, 3, 2, main, what);
    if (size < 0)
        return NULL;
    PyObject *result = NULL;
    int held_r = 0, held_w = 0, held_b = 0;
    Py_ssize_t n = main[0].len / size;
    if (cols <= 0 || n % cols != 0) {
        PyErr_Format(PyExc_ValueError, "%s: %zd elements are not rows of %zd", what, n, cols);
        goto done;
    }
    Py_ssize_t rows = n / cols;
    if (optional_buffer(args[2], &rstd, &held_r, size, rows * size, 1, what) < 0 ||
        optional_buffer(args[4], &weight, &held_w, size, cols * size, 0, what) < 0 ||
        optional_buffer(args[5], &bias, &held_b, size, cols * size, 0, what) < 0)
        goto done;
    if (!held_r) {
        PyErr_Format(PyExc_ValueError, "%s: rstd is an array", what);
        goto done;
    }
    struct norm_pass pass = {main[0].buf, main[1].buf, rstd.buf, main[2].buf, NULL,
                             held_w ? weight.buf : NULL, held_b ? bias.buf : NULL, cols, eps};
    Py_BEGIN_ALLOW_THREADS
    parallel_for(rows, (NORM_GRAIN + cols - 1) / cols, size == 4 ? layer_norm_f32 : layer_norm_f64, &pass);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    for (int i = 0; i < 3; i++)
        PyBuffer_Release(&main[i]);
    if (held_r)
        PyBuffer_Release(&rstd);
    if (held_w)
        PyBuffer_Release(&weight);
    if (held_b)
        PyBuffer_Release(&bias);
    return result;
}

/* layer_norm_backward(gx, gw, gb, gy, xhat, rstd, weight, cols): gx (rows * cols; None: not wanted), gw and gb
 * (cols, or None) from gy and xhat (rows * cols), rstd (rows) and weight (cols, or None) */
static PyObject *layer_norm_backward(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *what = "layer_norm_backward";
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "layer_norm_backward(gx, gw, gb, gy, xhat, rstd, weight, cols)");
        return NULL;
    }
    Py_ssize_t cols = PyLong_AsSsize_t(args[7]);
    if (cols == -1 && PyErr_Occurred())
        return NULL;
    Py_buffer pair[2]; /* gy, xhat */
    int size = float_buffers_w(args + 3, 2, 0, pair, what);
    if (size < 0)
        return NULL;
    Py_buffer gy = pair[0], xhat = pair[1], gx, gw, gb, rstd, weight;
    PyObject *result = NULL;
    double *acc_w = NULL, *acc_b = NULL;
    int held_gx = 0, held_gw = 0, held_gb = 0, held_r = 0, held_w = 0;
    Py_ssize_t n = gy.len / size;
    if (cols <= 0 || n % cols != 0) {
        PyErr_Format(PyExc_ValueError, "%s: %zd elements are not rows of %zd", what, n, cols);
        goto done;
    }
    Py_ssize_t rows = n / cols;
    if (optional_buffer(args[0], &gx, &held_gx, size, n * size, 1, what) < 0 ||
        optional_buffer(args[1], &gw, &held_gw, size, cols * size, 1, what) < 0 ||
        optional_buffer(args[2], &gb, &held_gb, size, cols * size, 1, what) < 0 ||
        optional_buffer(args[5], &rstd, &held_r, size, rows * size, 0, what) < 0 ||
        optional_buffer(args[6], &weight, &held_w, size, cols * size, 0, what) < 0)
        goto done;
    if (held_gx && !held_r) {
        PyErr_Format(PyExc_ValueError, "%s: rstd is an array", what);
        goto done;
    }
    if (held_gw || held_gb) {
        acc_w = PyMem_RawCalloc((size_t)cols, sizeof(double));
        acc_b = PyMem_RawCalloc((size_t)cols, sizeof(double));
        if (acc_w == NULL || acc_b == NULL) {
            PyErr_NoMemory();
            goto done;
        }
    }
    struct norm_pass pass = {held_gx ? gx.buf : NULL, xhat.buf, held_r ? rstd.buf : NULL, NULL, gy.buf,
                             held_w ? weight.buf : NULL, NULL, cols, 0.0};
    Py_BEGIN_ALLOW_THREADS
    if (held_gx)
        parallel_for(rows, (NORM_GRAIN + cols - 1) / cols,
                     size == 4 ? layer_norm_backward_f32 : layer_norm_backward_f64, &pass);
    if (acc_w != NULL) {
        if (size == 4)
            PARAM_GRADS(float)
        else
            PARAM_GRADS(double)
    }
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    PyMem_RawFree(acc_w);
    PyMem_RawFree(acc_b);
    PyBuffer_Release(&gy);
    PyBuffer_Release(&xhat);
    if (held_gx)
        PyBuffer_Release(&gx);
    if (held_gw)
        PyBuffer_Release(&gw);
    if (held_gb)
        PyBuffer_Release(&gb);
    if (held_r)
        PyBuffer_Release(&rstd);
    if (held_w)
        PyBuffer_Release(&weight);
    return result;
}

/* Attention's softmax over each row of scores (C-contiguous float32/float64, rows of `cols`), in place: the scores
 * times `scale`, the keys after a causal query's position hidden (`causal` >= 0: the row's query is its index modulo
 * `causal`, the number of queries; top left aligned, as PyTorch's), then exp(x - max) / sum, a row that sees no key
 * (all -inf) giving zeros. float32's exp is exp_nonpositive in double (5e-9 relative: below float32's rounding),
 * float64's libm's. The backward, in place on dP = dO V^T: scale * P (dP - rowsum(dP P)), summed in double. */
struct softmax_pass {
    void *s;
    const void *p;
    Py_ssize_t cols, causal;
    double scale;
};

#define ATTENTION_SOFTMAX_RANGES(SUFFIX, T, EXP)                                                                \
    WIDE_LOOP static void attention_softmax_##SUFFIX(void *ctx, Py_ssize_t lo, Py_ssize_t hi)                 \
    {                                                                                                         \
        const struct softmax_pass *p = ctx;                                                                   \
        const Py_ssize_t c = p->cols;                                                                         \
        const T scale = (T)p->scale;                                                                          \
        for (Py_ssize_t r = lo; r < hi; r++) {                                                                \
            T *x = (T *)p->s + r * c;                                                                         \
            Py_ssize_t seen = p->causal >= 0 ? r % p->causal + 1 : c;                                         \
            if (seen > c)                                                                                     \
                seen = c;                                                                                     \
            T top = -INFINITY;                                                                                \
            for (Py_ssize_t j = 0; j < seen; j++) {                                                           \
                x[j] *= scale;                                                                                \
                top = x[j] > top ? x[j] : top;                                                                \
            }                                                                                                 \
            if (top == -INFINITY)                                                                             \
                top = 0;                                                                                      \
            double acc[LANES] = {0};                                                                          \
            Py_ssize_t body = seen - seen % LANES;                                                            \
            for (Py_ssize_t j = 0; j < body; j += LANES)                                                      \
                for (int k = 0; k < LANES; k++) {                                                             \
                    double e = EXP((double)x[j + k] - (double)top);                                           \
                    x[j + k] = (T)e;                                                                          \
                    acc[k] += e;                                                                              \
                }                                                                                             \
            for (Py_ssize_t j = body; j < seen; j++) {                                                        \
                double e = EXP((double)x[j] - (double)top);                                                   \
                x[j] = (T)e;                                                                                  \
                acc[j - body] += e;                                                                           \
            }                                                                                                 \
            double total = LANE_SUM(acc);                                                                     \
            double inv = total > 0 ? 1.0 / total : 0.0;                                                       \
            for (Py_ssize_t j = 0; j < seen; j++)                                                             \
                x[j] = (T)((double)x[j] * inv);                                                               \
            for (Py_ssize_t j = seen; j < c; j++)                                                             \
                x[j] = 0;                                                                                     \
        }                                                                                                     \
    }                                                                                                         \
                                                                                                              \
    WIDE_LOOP static void attention_softmax_backward_##SUFFIX(void *ctx, Py_ssize_t lo, Py_ssize_t hi)        \
    {                                                                                                         \
        const struct softmax_pass *p = ctx;                                                                   \
        const Py_ssize_t c = p->cols, body = c - c % LANES;                                                   \
        for (Py_ssize_t r = lo; r < hi; r++) {                                                                \
            T *d = (T *)p->s + r * c;                                                                         \
            const T *w = (const T *)p->p + r * c;                                                             \
            double acc[LANES] = {0};                                                                          \
            for (Py_ssize_t j = 0; j < body; j += LANES)                                                      \
                for (int k = 0; k < LANES; k++)                                                               \
                    acc[k] += (double)d[j + k] * w[j + k];                                                    \
            for (Py_ssize_t j = body; j < c; j++)                                                             \
                acc[j - body] += (double)d[j] * w[j];                                                         \
            const double dot = LANE_SUM(acc);                                                                 \
            for (Py_ssize_t j = 0; j < c; j++)                                                                \
                d[j] = (T)(p->scale * ((double)w[j] * ((double)d[j] - dot)));                                 \
        }                                                                                                     \
    }

static inline double exp_f32_safe(double y) /* exp of y <= 0 (or -inf: 0) for a float32 result */
{
    return y == -INFINITY ? 0.0 : exp_nonpositive(y);
}

ATTENTION_SOFTMAX_RANGES(f32, float, exp_f32_safe)
ATTENTION_SOFTMAX_RANGES(f64, double, exp)

/* attention_softmax(s, cols, scale, causal) and attention_softmax_backward(d, p, cols, scale) */
static PyObject *attention_softmax_pass(PyObject *const *args, Py_ssize_t nargs, int backward)
{
    const char *what = backward ? "attention_softmax_backward" : "attention_softmax";
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, backward ? "attention_softmax_backward(d, p, cols, scale)"
                                                  : "attention_softmax(s, cols, scale, causal)");
        return NULL;
    }
    Py_ssize_t cols = PyLong_AsSsize_t(args[backward ? 2 : 1]);
    if (cols == -1 && PyErr_Occurred())
        return NULL;
    double scale = PyFloat_AsDouble(args[backward ? 3 : 2]);
    if (scale == -1.0 && PyErr_Occurred())
        return NULL;
    Py_ssize_t causal = -1;
    if (!backward) {
        causal = PyLong_AsSsize_t(args[3]);
        if (causal == -1 && PyErr_Occurred())
            return NULL;
    }
    Py_buffer bufs[2];
    int size = float_buffers(args, backward ? 2 : 1, bufs, what);
    if (size < 0)
        return NULL;
    Py_ssize_t n = bufs[0].len / size;
    PyObject *result = NULL;
    if (cols <= 0 || n % cols != 0 || causal == 0 || causal < -1) {
        PyErr_Format(PyExc_ValueError, "%s: %zd elements are not rows of %zd (causal %zd)", what, n, cols, causal);
    } else {
        struct softmax_pass pass = {bufs[0].buf, backward ? bufs[1].buf : NULL, cols, causal, scale};
        range_fn fn = backward ? (size == 4 ? attention_softmax_backward_f32 : attention_softmax_backward_f64)
                               : (size == 4 ? attention_softmax_f32 : attention_softmax_f64);
        Py_BEGIN_ALLOW_THREADS
        parallel_for(n / cols, (NORM_GRAIN + cols - 1) / cols, fn, &pass);
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
    for (int i = 0; i < (backward ? 2 : 1); i++)
        PyBuffer_Release(&bufs[i]);
    return result;
}

static PyObject *attention_softmax(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return attention_softmax_pass(args, nargs, 0);
}

static PyObject *attention_softmax_backward(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return attention_softmax_pass(args, nargs, 1);
}

/* Batch norm's backward over C-contiguous (N, C, inner) float32/float64 arrays, as engine/functions/reduction.py's
 * NativeBatchNorm writes it in NumPy: per channel sum(gy) and dotp = sum(gy (x - mean)) (in double, 8 lanes),
 * then, where gx is wanted, in training gx = (gy - sum(gy) / n - (x - mean) dotp invstd^2 / n) * scale, else
 * gx = gy * scale (scale = invstd * weight); sum_gy and dotp written out (float64) for the parameters. */
struct batch_norm_pass {
    void *gx;
    const void *gy, *x;
    const double *mean, *invstd, *scale;
    double *sum_gy, *dotp;
    Py_ssize_t batch, channels, inner;
    int training;
};

#define BATCH_NORM_BACKWARD_RANGE(SUFFIX, T)                                                                    \
    WIDE_LOOP static void batch_norm_backward_##SUFFIX(void *ctx, Py_ssize_t lo, Py_ssize_t hi)               \
    {                                                                                                         \
        const struct batch_norm_pass *p = ctx;                                                                \
        const Py_ssize_t m = p->inner, body = m - m % LANES, chans = p->channels;                             \
        const double n = (double)(p->batch * m);                                                              \
        for (Py_ssize_t c = lo; c < hi; c++) {                                                                \
            const double mean = p->mean[c];                                                                   \
            double sg[LANES] = {0}, dp[LANES] = {0};                                                          \
            for (Py_ssize_t b = 0; b < p->batch; b++) {                                                       \
                const T *gy = (const T *)p->gy + (b * chans + c) * m, *x = (const T *)p->x + (b * chans + c) * m; \
                for (Py_ssize_t j = 0; j < body; j += LANES)                                                  \
                    for (int k = 0; k < LANES; k++) {                                                         \
                        sg[k] += gy[j + k];                                                                   \
                        dp[k] += (double)gy[j + k] * ((double)x[j + k] - mean);                               \
                    }                                                                                         \
                for (Py_ssize_t j = body; j < m; j++) {                                                       \
                    sg[j - body] += gy[j];                                                                    \
                    dp[j - body] += (double)gy[j] * ((double)x[j] - mean);                                    \
                }                                                                                             \
            }                                                                                                 \
            const double sum_gy = LANE_SUM(sg), dotp = LANE_SUM(dp);                                          \
            p->sum_gy[c] = sum_gy;                                                                            \
            p->dotp[c] = dotp;                                                                                \
            if (p->gx == NULL)                                                                                \
                continue;                                                                                     \
            const double scale = p->scale[c], invstd = p->invstd[c];                                          \
            const double mg = n > 0 ? sum_gy / n : 0.0, k = n > 0 ? dotp * invstd * invstd / n : 0.0;        \
            for (Py_ssize_t b = 0; b < p->batch; b++) {                                                       \
                const T *gy = (const T *)p->gy + (b * chans + c) * m, *x = (const T *)p->x + (b * chans + c) * m; \
                T *gx = (T *)p->gx + (b * chans + c) * m;                                                     \
                if (p->training)                                                                              \
                    for (Py_ssize_t j = 0; j < m; j++)                                                        \
                        gx[j] = (T)(((double)gy[j] - mg - ((double)x[j] - mean) * k) * scale);                \
                else                                                                                          \
                    for (Py_ssize_t j = 0; j < m; j++)                                                        \
                        gx[j] = (T)((double)gy[j] * scale);                                                   \
            }                                                                                                 \
        }                                                                                                     \
    }

BATCH_NORM_BACKWARD_RANGE(f32, float)
BATCH_NORM_BACKWARD_RANGE(f64, double)

/* batch_norm_backward(gx, sum_gy, dotp, gy, x, mean, invstd, scale, batch, channels, training): gx, gy, x of batch *
 * channels * inner elements (gx None: not wanted); sum_gy, dotp (written), mean, invstd, scale: float64 of
 * channels. Channels are cut across threads (each channel's sums in one thread, in one order). */
static PyObject *batch_norm_backward(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *what = "batch_norm_backward";
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError,
                        "batch_norm_backward(gx, sum_gy, dotp, gy, x, mean, invstd, scale, batch, channels, training)");
        return NULL;
    }
    Py_ssize_t batch = PyLong_AsSsize_t(args[8]);
    if (batch == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t channels = PyLong_AsSsize_t(args[9]);
    if (channels == -1 && PyErr_Occurred())
        return NULL;
    int training = PyObject_IsTrue(args[10]);
    if (training < 0)
        return NULL;
    Py_buffer pair[2]; /* gy, x */
    int size = float_buffers_w(args + 3, 2, 0, pair, what);
    if (size < 0)
        return NULL;
    Py_buffer stats[5], gx; /* sum_gy, dotp, mean, invstd, scale */
    int held[5] = {0}, held_gx = 0;
    PyObject *result = NULL;
    Py_ssize_t n = pair[0].len / size;
    PyObject *const stat_args[5] = {args[1], args[2], args[5], args[6], args[7]};
    if (channels <= 0 || batch <= 0 || n % (channels * batch) != 0) {
        PyErr_Format(PyExc_ValueError, "%s: %zd elements are not %zd samples of %zd channels", what, n, batch,
                     channels);
        goto done;
    }
    for (int i = 0; i < 5; i++) {
        int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (i < 2 ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(stat_args[i], &stats[i], flags) < 0)
            goto done;
        held[i] = 1;
        if (float_size(&stats[i]) != 8 || stats[i].len != channels * 8) {
            PyErr_Format(PyExc_ValueError, "%s: the channels' statistics are float64 arrays of %zd", what, channels);
            goto done;
        }
    }
    if (optional_buffer(args[0], &gx, &held_gx, size, n * size, 1, what) < 0)
        goto done;
    struct batch_norm_pass pass = {held_gx ? gx.buf : NULL, pair[0].buf, pair[1].buf, stats[2].buf, stats[3].buf,
                                   stats[4].buf, stats[0].buf, stats[1].buf, batch, channels, n / (batch * channels),
                                   training};
    Py_BEGIN_ALLOW_THREADS
    parallel_for(channels, (NORM_GRAIN + n / channels - 1) / (n / channels > 0 ? n / channels : 1),
                 size == 4 ? batch_norm_backward_f32 : batch_norm_backward_f64, &pass);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&pair[0]);
    PyBuffer_Release(&pair[1]);
    for (int i = 0; i < 5; i++)
        if (held[i])
            PyBuffer_Release(&stats[i]);
    if (held_gx)
        PyBuffer_Release(&gx);
    return result;
}

/* add_rows(out, index, src): out[index[i]] += src[i] for i in order, each a row of `cols` (C-contiguous float32 or
 * float64 out (rows, cols) and src (n, cols), int64 index of n; a negative index counts from the end): NumPy's
 * np.add.at(out, index, src) bit for bit (the same additions in the same order, as PyTorch's index_add_ and
 * embedding backward on the CPU), without add.at's per-element dispatch (0.85 ms -> ~0.02 for a GPT's 768 x 128
 * token gradient). An index out of range raises IndexError before anything is written. */
#define ADD_ROWS_LOOP(T)                                                                                        \
    {                                                                                                         \
        T *po = out.buf;                                                                                      \
        const T *ps = src.buf;                                                                                \
        for (Py_ssize_t i = 0; i < n; i++) {                                                                  \
            int64_t r = pi[i] < 0 ? pi[i] + rows : pi[i];                                                     \
            T *dst = po + r * cols;                                                                           \
            const T *from = ps + i * cols;                                                                    \
            for (Py_ssize_t j = 0; j < cols; j++)                                                             \
                dst[j] += from[j];                                                                            \
        }                                                                                                     \
    }

static PyObject *add_rows(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "add_rows(out, index, src)");
        return NULL;
    }
    Py_buffer out, index, src;
    const int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_ND;
    if (PyObject_GetBuffer(args[0], &out, flags | PyBUF_WRITABLE) < 0)
        return NULL;
    if (PyObject_GetBuffer(args[1], &index, flags) < 0) {
        PyBuffer_Release(&out);
        return NULL;
    }
    if (PyObject_GetBuffer(args[2], &src, flags) < 0) {
        PyBuffer_Release(&out);
        PyBuffer_Release(&index);
        return NULL;
    }
    PyObject *result = NULL;
    int size = float_size(&out);
    if (size == 0 || float_size(&src) != size || out.ndim != 2 || src.ndim != 2 || out.shape[1] != src.shape[1] ||
        index.ndim != 1 || index.itemsize != 8 || index.format == NULL || strchr("qlL", index.format[0]) == NULL ||
        index.format[1] != '\0' || index.shape[0] != src.shape[0]) {
        PyErr_SetString(PyExc_ValueError, "add_rows: float32/float64 out (rows, cols) and src (n, cols) of one dtype, "
                                          "and an int64 index of n");
        goto done;
    }
    Py_ssize_t rows = out.shape[0], cols = out.shape[1], n = src.shape[0];
    const int64_t *pi = index.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        if (pi[i] >= rows || pi[i] < -rows) {
            PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension 0 with size %zd",
                         (long long)pi[i], rows);
            goto done;
        }
    Py_BEGIN_ALLOW_THREADS
    if (size == 4)
        ADD_ROWS_LOOP(float)
    else
        ADD_ROWS_LOOP(double)
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&out);
    PyBuffer_Release(&index);
    PyBuffer_Release(&src);
    return result;
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

/* adaptive_max_pool2d(best, where, x, H, W, OH, OW) and adaptive_max_pool3d(best, where, x, D, H, W, OD, OH, OW):
 * each of the OD x OH x OW windows of every D x H x W volume (a plane: D = OD = 1; PyTorch's bounds: depths
 * floor(i D / OD) to ceil((i + 1) D / OD), rows and columns likewise), its first maximum (a NaN taken where the
 * best so far is not NaN: the first NaN, as PyTorch's CPU kernel) and that place's flat index in the volume
 * (int64). engine/functions/conv.py's NumPy spelling (a slice, argmax and take per window) runs where this was not
 * built. */
#define ADAPTIVE_MAX_LOOP(T)                                                                                    \
    {                                                                                                         \
        const T *px = x.buf;                                                                                  \
        T *pb = best.buf;                                                                                     \
        int64_t *pw = where.buf;                                                                              \
        for (Py_ssize_t p = 0; p < planes; p++) {                                                             \
            const T *vol = px + p * volume;                                                                   \
            for (long k = 0; k < OD; k++) {                                                                   \
                long d0 = bounds[2 * k], d1 = bounds[2 * k + 1];                                              \
                for (long i = 0; i < OH; i++) {                                                               \
                    long r0 = bounds[2 * (OD + i)], r1 = bounds[2 * (OD + i) + 1];                            \
                    for (long j = 0; j < OW; j++) {                                                           \
                        long c0 = bounds[2 * (OD + OH + j)], c1 = bounds[2 * (OD + OH + j) + 1];              \
                        int64_t at = (d0 * H + r0) * W + c0;                                                  \
                        T top = vol[at];                                                                      \
                        for (long d = d0; d < d1; d++)                                                        \
                            for (long r = r0; r < r1; r++)                                                    \
                                for (long c = c0; c < c1; c++) {                                              \
                                    int64_t here = (d * H + r) * W + c;                                       \
                                    T v = vol[here];                                                          \
                                    int take = (v > top) | ((v != v) & (top == top));                         \
                                    top = take ? v : top;                                                     \
                                    at = take ? here : at;                                                    \
                                }                                                                             \
                        Py_ssize_t o = ((p * OD + k) * OH + i) * OW + j;                                      \
                        pb[o] = top;                                                                          \
                        pw[o] = at;                                                                           \
                    }                                                                                         \
                }                                                                                             \
            }                                                                                                 \
        }                                                                                                     \
    }

/* PyTorch's adaptive windows of n inputs into o outputs, [floor(i n / o), ceil((i + 1) n / o)) for each i, into
 * bounds[2 i], bounds[2 i + 1]: computed once per call, not per plane (a division per window was most of the
 * time of a pooling with small windows) */
static void window_bounds(long *bounds, long n, long o)
{
    for (long i = 0; i < o; i++) {
        bounds[2 * i] = i * n / o;
        bounds[2 * i + 1] = ((i + 1) * n + o - 1) / o;
    }
}

/* the two entry points' common part: args[0..2] the arrays, dims[0..5] D, H, W, OD, OH, OW */
static PyObject *adaptive_max_pool(PyObject *const *args, const long *dims, const char *name, const char *layout)
{
    for (int i = 0; i < 6; i++)
        if (dims[i] <= 0) {
            PyErr_Format(PyExc_ValueError, "%s: positive sizes", name);
            return NULL;
        }
    long D = dims[0], H = dims[1], W = dims[2], OD = dims[3], OH = dims[4], OW = dims[5];
    Py_buffer best, where, x;
    const int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT;
    if (PyObject_GetBuffer(args[0], &best, flags | PyBUF_WRITABLE) < 0)
        return NULL;
    if (PyObject_GetBuffer(args[1], &where, flags | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&best);
        return NULL;
    }
    if (PyObject_GetBuffer(args[2], &x, flags) < 0) {
        PyBuffer_Release(&best);
        PyBuffer_Release(&where);
        return NULL;
    }
    PyObject *result = NULL;
    int size = float_size(&x);
    Py_ssize_t volume = (Py_ssize_t)D * H * W, cells = (Py_ssize_t)OD * OH * OW;
    Py_ssize_t planes = size ? x.len / size / volume : 0;
    if (!size || float_size(&best) != size || planes * volume * size != x.len || planes * cells * size != best.len ||
        where.itemsize != 8 || where.format == NULL || strchr("qlL", where.format[0]) == NULL ||
        where.len != planes * cells * 8) {
        PyErr_Format(PyExc_ValueError, "%s: contiguous float32/float64 %s of their dtype and int64 where", name,
                     layout);
        goto done;
    }
    long *bounds = PyMem_Malloc(sizeof(long) * 2 * (OD + OH + OW));
    if (bounds == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    window_bounds(bounds, D, OD);
    window_bounds(bounds + 2 * OD, H, OH);
    window_bounds(bounds + 2 * (OD + OH), W, OW);
    Py_BEGIN_ALLOW_THREADS
    if (size == 4)
        ADAPTIVE_MAX_LOOP(float)
    else
        ADAPTIVE_MAX_LOOP(double)
    Py_END_ALLOW_THREADS
    PyMem_Free(bounds);
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&best);
    PyBuffer_Release(&where);
    PyBuffer_Release(&x);
    return result;
}

/* the entry points' sizes into D, H, W, OD, OH, OW: six from args[3] for a volume; four (H, W, OH, OW) for a
 * plane, its depths 1 */
static int pool_sizes(PyObject *const *args, int n, long *dims)
{
    static const int volume_slots[6] = {0, 1, 2, 3, 4, 5}, plane_slots[4] = {1, 2, 4, 5};
    const int *slots = n == 6 ? volume_slots : plane_slots;
    dims[0] = dims[3] = 1;
    for (int i = 0; i < n; i++) {
        long v = PyLong_AsLong(args[3 + i]);
        if (v == -1 && PyErr_Occurred())
            return -1;
        dims[slots[i]] = v;
    }
    return 0;
}

static PyObject *adaptive_max_pool2d(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "adaptive_max_pool2d(best, where, x, H, W, OH, OW)");
        return NULL;
    }
    long dims[6];
    if (pool_sizes(args, 4, dims) < 0)
        return NULL;
    return adaptive_max_pool(args, dims, "adaptive_max_pool2d", "planes of H x W, best of OH x OW");
}

static PyObject *adaptive_max_pool3d(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "adaptive_max_pool3d(best, where, x, D, H, W, OD, OH, OW)");
        return NULL;
    }
    long dims[6];
    if (pool_sizes(args, 6, dims) < 0)
        return NULL;
    return adaptive_max_pool(args, dims, "adaptive_max_pool3d", "volumes of D x H x W, best of OD x OH x OW");
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

/* im2col and col2im of a 2-D convolution (1-D: H = OH = kh = 1), the padding read as zeros rather than copied in.
 * cols is (C, kh, kw, N, OH, OW), one block of OH x OW per (channel, kernel offset, image), as
 * engine/functions/conv.py's NumPy spelling lays it out (a strided slice of the padded input per kernel offset),
 * which runs where this was not built:
 * - im2col2d(cols, x, N, C, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw): each block the input's values its
 *   offset meets, 0 where that falls in the padding; the blocks cut across threads.
 * - col2im2d(gx, cols, ...): gx (N, C, H, W) the sum of what each block took from it, each element summed from
 *   0 in kernel-offset order (ky, then kx), as NumPy's slice-by-slice += sums it: the same bits; the (image,
 *   channel) planes cut across threads, each written by one. */
struct conv_geometry {
    void *out;
    const void *in;
    long N, C, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw;
};

#define CONV_GRAIN 32768 /* elements a thread's range reads or writes at least */

/* the output columns [*lo, *hi] whose input column ox * sw + off lies in [0, W) (none: *hi < *lo) */
static void conv_span(long off, long sw, long W, long OW, long *lo, long *hi)
{
    *lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
    *hi = W - 1 - off < 0 ? -1 : (W - 1 - off) / sw;
    if (*hi > OW - 1)
        *hi = OW - 1;
}

#define IM2COL_RANGE(T, NAME)                                                                                      \
    static void NAME(void *ctx, Py_ssize_t first, Py_ssize_t last)                                                 \
    {                                                                                                              \
        const struct conv_geometry *g = ctx;                                                                       \
        const long N = g->N, C = g->C, H = g->H, W = g->W, OH = g->OH, OW = g->OW, kh = g->kh, kw = g->kw;         \
        for (Py_ssize_t q = first; q < last; q++) { /* q = ((c kh + ky) kw + kx) N + n */                          \
            long n = q % N, r = q / N, kx = r % kw, ky = (r / kw) % kh, c = r / (kw * kh);                         \
            const T *plane = (const T *)g->in + ((Py_ssize_t)n * C + c) * H * W;                                   \
            T *block = (T *)g->out + q * OH * OW;                                                                  \
            long off = kx * g->dw - g->pw, lo, hi; /* input column ox * sw + off */                                \
            conv_span(off, g->sw, W, OW, &lo, &hi);                                                                \
            long shift = ky * g->dh - g->ph; /* input row oy * sh + shift */                                       \
            if (g->sw == 1 && g->sh == 1 && OW == W && hi >= lo) {                                                 \
                /* ("same" padding, stride 1: the rows inside lie as in the input, shifted by off, and are copied  \
                 * as one run, the few elements of the run that wrapped into the next row then zeroed: per-row     \
                 * copies of short rows cost most of the time) */                                                  \
                long y0 = shift < 0 ? -shift : 0, y1 = H - 1 - shift < OH - 1 ? H - 1 - shift : OH - 1;            \
                if (y1 < y0) {                                                                                     \
                    memset(block, 0, OH * OW * sizeof(T));                                                         \
                    continue;                                                                                      \
                }                                                                                                  \
                memset(block, 0, y0 * OW * sizeof(T));                                                             \
                memcpy(block + y0 * OW + lo, plane + (y0 + shift) * W + lo + off,                                  \
                       ((y1 - y0) * OW + hi - lo + 1) * sizeof(T));                                                \
                for (long oy = y0; oy <= y1; oy++) {                                                               \
                    T *dst = block + oy * OW;                                                                      \
                    for (long ox = 0; ox < lo; ox++)                                                               \
                        dst[ox] = 0;                                                                               \
                    for (long ox = hi + 1; ox < OW; ox++)                                                          \
                        dst[ox] = 0;                                                                               \
                }                                                                                                  \
                memset(block + (y1 + 1) * OW, 0, (OH - 1 - y1) * OW * sizeof(T));                                  \
                continue;                                                                                          \
            }                                                                                                      \
            for (long oy = 0; oy < OH; oy++) {                                                                     \
                T *dst = block + oy * OW;                                                                          \
                long iy = oy * g->sh + shift;                                                                      \
                if (iy < 0 || iy >= H || hi < lo) {                                                                \
                    memset(dst, 0, OW * sizeof(T));                                                                \
                    continue;                                                                                      \
                }                                                                                                  \
                const T *src = plane + iy * W;                                                                     \
                for (long ox = 0; ox < lo; ox++)                                                                   \
                    dst[ox] = 0;                                                                                   \
                if (g->sw == 1)                                                                                    \
                    memcpy(dst + lo, src + lo + off, (hi - lo + 1) * sizeof(T));                                   \
                else                                                                                               \
                    for (long ox = lo; ox <= hi; ox++)                                                             \
                        dst[ox] = src[ox * g->sw + off];                                                           \
                for (long ox = hi + 1; ox < OW; ox++)                                                              \
                    dst[ox] = 0;                                                                                   \
            }                                                                                                      \
        }                                                                                                          \
    }

#define COL2IM_RANGE(T, NAME)                                                                                  \
    static void NAME(void *ctx, Py_ssize_t first, Py_ssize_t last)                                           \
    {                                                                                                        \
        const struct conv_geometry *g = ctx;                                                                 \
        const long N = g->N, C = g->C, H = g->H, W = g->W, OH = g->OH, OW = g->OW, kh = g->kh, kw = g->kw;    \
        for (Py_ssize_t p = first; p < last; p++) { /* p = n C + c */                                        \
            long n = p / C, c = p % C;                                                                       \
            T *plane = (T *)g->out + p * H * W;                                                              \
            memset(plane, 0, (size_t)H * W * sizeof(T));                                                     \
            for (long ky = 0; ky < kh; ky++)                                                                 \
                for (long kx = 0; kx < kw; kx++) {                                                           \
                    Py_ssize_t q = (((Py_ssize_t)c * kh + ky) * kw + kx) * N + n;                            \
                    const T *block = (const T *)g->in + q * OH * OW;                                         \
                    long off = kx * g->dw - g->pw, lo, hi;                                                   \
                    conv_span(off, g->sw, W, OW, &lo, &hi);                                                  \
                    for (long oy = 0; oy < OH; oy++) {                                                       \
                        long iy = oy * g->sh + ky * g->dh - g->ph;                                           \
                        if (iy < 0 || iy >= H)                                                               \
                            continue;                                                                        \
                        T *dst = plane + iy * W;                                                             \
                        const T *src = block + oy * OW;                                                      \
                        for (long ox = lo; ox <= hi; ox++)                                                   \
                            dst[ox * g->sw + off] += src[ox];                                                \
                    }                                                                                        \
                }                                                                                            \
        }                                                                                                    \
    }

IM2COL_RANGE(float, im2col_f32)
IM2COL_RANGE(double, im2col_f64)
COL2IM_RANGE(float, col2im_f32)
COL2IM_RANGE(double, col2im_f64)

/* the two entry points' common part: args[0] the array written, args[1] the one read, args[2..15] the geometry */
static PyObject *conv_columns(PyObject *const *args, Py_ssize_t nargs, int backward)
{
    const char *what = backward ? "col2im2d" : "im2col2d";
    if (nargs != 16) {
        PyErr_Format(PyExc_TypeError, "%s(out, in, N, C, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw)", what);
        return NULL;
    }
    long v[14];
    for (int i = 0; i < 14; i++) {
        v[i] = PyLong_AsLong(args[2 + i]);
        if (v[i] == -1 && PyErr_Occurred())
            return NULL;
        /* N, C, H, W, OH, OW >= 0; kh, kw, sh, sw >= 1; ph, pw >= 0; dh, dw >= 1 */
        if (v[i] < (i < 6 ? 0 : i < 10 ? 1 : i < 12 ? 0 : 1)) {
            PyErr_Format(PyExc_ValueError, "%s: a size, stride, padding or dilation out of range", what);
            return NULL;
        }
    }
    struct conv_geometry g = {NULL, NULL, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10],
                              v[11], v[12], v[13]};
    const int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT;
    Py_buffer out, in;
    if (PyObject_GetBuffer(args[0], &out, flags | PyBUF_WRITABLE) < 0)
        return NULL;
    if (PyObject_GetBuffer(args[1], &in, flags) < 0) {
        PyBuffer_Release(&out);
        return NULL;
    }
    int size = float_size(&out);
    Py_ssize_t image = (Py_ssize_t)g.N * g.C * g.H * g.W, cols = (Py_ssize_t)g.N * g.C * g.kh * g.kw * g.OH * g.OW;
    if (!size || float_size(&in) != size || out.len != (backward ? image : cols) * size
        || in.len != (backward ? cols : image) * size) {
        PyErr_Format(PyExc_ValueError, "%s: contiguous float32 or float64 arrays of one dtype and the geometry's sizes",
                     what);
        PyBuffer_Release(&out);
        PyBuffer_Release(&in);
        return NULL;
    }
    g.out = out.buf;
    g.in = in.buf;
    Py_BEGIN_ALLOW_THREADS
    if (backward) {
        Py_ssize_t per = g.H * g.W + g.kh * g.kw * g.OH * g.OW; /* the elements one plane writes and reads */
        if (g.H > 0 && g.W > 0)
            parallel_for(g.N * g.C, (CONV_GRAIN + per - 1) / per, size == 4 ? col2im_f32 : col2im_f64, &g);
    }
    else {
        Py_ssize_t per = g.OH * g.OW; /* the elements one block writes */
        if (per)
            parallel_for(cols / per, (CONV_GRAIN + per - 1) / per, size == 4 ? im2col_f32 : im2col_f64, &g);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&out);
    PyBuffer_Release(&in);
    Py_RETURN_NONE;
}

static PyObject *im2col2d(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return conv_columns(args, nargs, 0);
}

static PyObject *col2im2d(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return conv_columns(args, nargs, 1);
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
    {"layer_norm", (PyCFunction)(void (*)(void))layer_norm, METH_FASTCALL,
     "layer_norm(out, xhat, rstd, x, weight, bias, cols, eps): each row of cols normalised, scaled and shifted"},
    {"layer_norm_backward", (PyCFunction)(void (*)(void))layer_norm_backward, METH_FASTCALL,
     "layer_norm_backward(gx, gy, xhat, rstd, weight, cols): the input's gradient of layer_norm"},
    {"attention_softmax", (PyCFunction)(void (*)(void))attention_softmax, METH_FASTCALL,
     "attention_softmax(s, cols, scale, causal): each row's softmax of scale * s, in place (causal >= 0: queries)"},
    {"attention_softmax_backward", (PyCFunction)(void (*)(void))attention_softmax_backward, METH_FASTCALL,
     "attention_softmax_backward(d, p, cols, scale): d = scale * p * (d - rowsum(d * p)), in place"},
    {"batch_norm_backward", (PyCFunction)(void (*)(void))batch_norm_backward, METH_FASTCALL,
     "batch_norm_backward(gx, sum_gy, dotp, gy, x, mean, invstd, scale, batch, channels, training): per channel"},
    {"add_rows", (PyCFunction)(void (*)(void))add_rows, METH_FASTCALL,
     "add_rows(out, index, src): out[index[i]] += src[i] in order (np.add.at on rows)"},
    {"adaptive_max_pool2d", (PyCFunction)(void (*)(void))adaptive_max_pool2d, METH_FASTCALL,
     "adaptive_max_pool2d(best, where, x, H, W, OH, OW): each adaptive window's first maximum and its place"},
    {"adaptive_max_pool3d", (PyCFunction)(void (*)(void))adaptive_max_pool3d, METH_FASTCALL,
     "adaptive_max_pool3d(best, where, x, D, H, W, OD, OH, OW): each adaptive window's first maximum and its place"},
    {"im2col2d", (PyCFunction)(void (*)(void))im2col2d, METH_FASTCALL,
     "im2col2d(cols, x, N, C, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw): a 2-D convolution's columns"},
    {"col2im2d", (PyCFunction)(void (*)(void))col2im2d, METH_FASTCALL,
     "col2im2d(gx, cols, N, C, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw): the columns added back"},
    {"set_threads", (PyCFunction)set_threads, METH_O,
     "set_threads(k): the threads a long pass (GELU, layer norm) is cut across"},
    {"get_threads", (PyCFunction)get_threads, METH_NOARGS, "get_threads(): set_threads's count"},
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
