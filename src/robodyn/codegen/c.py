"""C99: a header and a source file per robot, printed with sympy's ``C99CodePrinter``.

For a robot ``NAME`` (sanitised), every routine of the spec becomes::

    void NAME_constants(const double *params, double *k);
    void NAME_inverse_dynamics(const double *k, const double *q, const double *qd, const double *qdd,
                               double *tau);
    void NAME_mass_matrix(const double *k, const double *q, double *M);           /* n*n, row-major */
    void NAME_coriolis(const double *k, const double *q, const double *qd, double *h);
    void NAME_bias_forces(const double *k, const double *q, const double *qd, double *bias);
    void NAME_gravity(const double *k, const double *q, double *G);
    void NAME_forward_dynamics(const double *k, const double *q, const double *qd, const double *tau,
                               double *qdd);

and each run-time routine has a ``NAME_<routine>_batch`` twin with the same arguments and a final
``size_t n_states``: the arrays then hold ``n_states`` states one after the other (row-major (N, n)
and (N, n, n)), and the loop runs in C. Strict C99 (``-std=c99 -Wall -Wextra -Werror -pedantic``
compiles it), only standard headers (``<math.h>``, ``<stddef.h>``; ``<float.h>``, ``<stdint.h>`` and
``<string.h>`` for the sines' and cosines' quadrant bits in ``NAME_sincos``), and on x86-64 ``<emmintrin.h>`` for
the non-temporal stores of large batches with GCC or Clang (``STREAM_BYTES``) and, with AVX2, ``<immintrin.h>`` for
the transposes that hand a chunk's results to the output (``SCATTER``).

The batch routine holds the straight-line code, in a loop over the states of a chunk of ``CHUNK``
states (fewer where a routine's rows would take more than ``STACK_BYTES`` of stack; the one-state
routine is the batch routine on one state, so both give the same numbers).
Sines and cosines, which cost more than all the rest at libm's 10-20 ns a call, are computed for the
whole chunk first, by ``NAME_sincos``: a loop without calls or branches, which compilers vectorise
(``-O3``, or ``-O2 -ftree-vectorize``), of fdlibm's sin and cos kernels after a three-part
Cody-Waite reduction by pi/2 (within 1 ulp of the correctly rounded result; arguments beyond 1e5
in magnitude, and non-finite ones, go to libm's ``sin`` and ``cos``). A sum angle (``q2 + q3``,
``q1 - q2``) is never rounded and then reduced: at 1e15 rad the rounded sum is off by up to 0.06 rad.
Its terms go to ``NAME_sincos`` and the straight-line loop composes its sine and cosine by angle
addition (``split_angles``, ``CEmitter.compose``), which is also cheaper than a sincos of its own.
The pointers of the batch routines are ``restrict`` (inputs and outputs must not overlap).

A routine of more than ``SPLIT_STATEMENTS`` statements (the derivatives of a 9-joint arm, the mass matrix of a
20-joint one) is split into static, never inlined functions ``NAME_<routine>_part<i>`` of about
``PART_STATEMENTS`` each, which the batch routine calls in turn on the chunk's states: the values that cross a
cut go through rows of a stack array ``live`` (exactly those: :func:`split_program`), so that the C compiler's
time and memory stay linear in the size of the C. The exported functions are the same.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import sympy as sp
from sympy.printing.c import C99CodePrinter

from robodyn.codegen.base import PRINTER_SETTINGS, Emitter, join
from robodyn.codegen.spec import Load, ModuleSpec, Routine

#: States per chunk of a batch routine: their angles, sines and cosines stay in L1 (3 * CHUNK * angles
#: doubles on the stack).
CHUNK = 64
#: A batch routine's rows (inputs, outputs, angles, sines, cosines of a chunk) stay within this many bytes
#: of stack, the L1 data cache of current x86-64 cores: routines with many rows (derivatives, the mass
#: matrix of a long arm) get chunks smaller than CHUNK (the Panda's derivatives 7% faster than with 128 KB).
STACK_BYTES = 48 * 1024


#: A batch routine of more than this many statements (assignments and output entries) is split into parts of
#: about PART_STATEMENTS, each a function of its own (``NAME_<routine>_part<i>``, never inlined) run on the whole
#: chunk in turn, the values that later parts read passed in rows of a stack array ``live`` (:func:`split_program`):
#: a C compiler's time and memory grow faster than linearly in the size of a function (gcc 12 -O3 on the Panda's
#: tau, M, forward and derivatives, 524 KB of C whose derivatives have 2,283 and 3,043 statements: 26 s and
#: 1.2 GB as one function each, 12 s and 0.33 GB split, each routine within 3% of its speed per state; the -O2
#: that also fits is 4-7x slower per state, as it leaves the loops unvectorised: benchmarks/compile_cost.py).
#: Every program of the checksums listing (at most the PUMA's forward-dynamics derivatives, 1,006 statements)
#: stays one function.
SPLIT_STATEMENTS = 1024
#: The statements of one part of a split routine, give or take a quarter (:func:`split_program`).
PART_STATEMENTS = 384
#: The memory references (values in from and out to ``live``, stores) of one part at most, which is cut again
#: where it has more (:func:`split_program`): GCC does not vectorise a loop of more than 1,000 (its
#: ``loop-max-datarefs-for-datadeps``), which left such a part one state at a time (the analytic floating-base
#: derivatives of Talos read up to 1,635 values in a part: 8 of 20 parts scalar, 5.0 -> 8.6 us a state against
#: forward mode's 39 vectorised parts; cut again, 34 parts all vectorised, 3.0 us); the inputs and constants a
#: part loads count too. Every split program of forward mode (Talos' dtau) keeps its parts.
PART_REFERENCES = 900


@dataclass(frozen=True)
class Part:
    """One function of a split routine: statements ``start`` to ``stop`` (exclusive) of its order, the values
    defined by earlier parts that it reads (``live_in``) and those it defines that later parts read
    (``live_out``), each in the order of their definitions."""

    start: int
    stop: int
    live_in: tuple[str, ...]
    live_out: tuple[str, ...]


def crossing(statements: Sequence[tuple[str | None, frozenset[str]]]) -> list[int]:
    """For each cut x (0 to len(statements)): how many values defined before statement x are read at or after it."""
    where = {name: i for i, (name, _) in enumerate(statements) if name is not None}
    last = {name: i for i, (_, reads) in enumerate(statements) for name in reads if name in where}
    steps = [0] * (len(statements) + 2)
    for name, i in last.items():
        if i > where[name]:
            steps[where[name] + 1] += 1
            steps[i + 1] -= 1
    return list(accumulate(steps))[:len(statements) + 1]


def split_program(statements: Sequence[tuple[str | None, frozenset[str]]], size: int,
                  max_references: int | None = None, loads: Sequence[frozenset[str]] | None = None) -> list[Part]:
    """A straight-line program cut into ceil(len / ``size``) parts, each with exactly the values that cross its
    boundaries: ``statements`` are (name defined or None, names read). Each cut is the one that fewest values
    cross within a quarter of ``size`` of the cut into equal parts (the nearest of those), so a part has at
    most 1.5 ``size`` statements. A part with more than ``max_references`` memory references (values in from and
    out to ``live``, stores, and the distinct inputs and constants its statements read, ``loads``, one set per
    statement: :data:`PART_REFERENCES`) is cut again where fewest values cross in its middle half, until none has
    (or the part is too short to cut)."""
    count = len(statements)
    pieces = max(1, -(-count // size))
    values = crossing(statements)
    window = size // 4
    bounds = [0]
    for i in range(1, pieces):
        target = round(i * count / pieces)
        low, high = max(bounds[-1] + 1, target - window), min(count - 1, target + window)
        bounds.append(min(range(low, max(low, high) + 1), key=lambda x: (values[x], abs(x - target))))
    bounds.append(count)
    while True:
        parts = _parts(statements, bounds)
        heavy = [p for p, part in enumerate(parts) if max_references is not None and part.stop - part.start >= 8
                 and _references(statements, part, loads) > max_references]
        if not heavy:
            return parts
        for p in reversed(heavy):  # each cut where fewest values cross in the part's middle half
            start, stop = bounds[p], bounds[p + 1]
            quarter = (stop - start) // 4
            middle = (start + stop) // 2
            bounds.insert(p + 1, min(range(start + quarter, stop - quarter + 1),
                                     key=lambda x: (values[x], abs(x - middle))))


def _references(statements: Sequence[tuple[str | None, frozenset[str]]], part: Part,
                loads: Sequence[frozenset[str]] | None) -> int:
    """A part's memory references in its loop: the values in from and out to ``live``, its stores, and the
    distinct inputs and constants it reads."""
    stores = sum(1 for i in range(part.start, part.stop) if statements[i][0] is None)
    read = set().union(*loads[part.start:part.stop]) if loads is not None else set()
    return len(part.live_in) + len(part.live_out) + stores + len(read)


def _parts(statements: Sequence[tuple[str | None, frozenset[str]]], bounds: Sequence[int]) -> list[Part]:
    """The parts between consecutive ``bounds``, with the values that cross them."""
    pieces = len(bounds) - 1
    defined: dict[str, tuple[int, int]] = {}  # name -> (part, statement)
    live_in: list[set[str]] = [set() for _ in range(pieces)]
    for p in range(pieces):
        for i in range(bounds[p], bounds[p + 1]):
            name, reads = statements[i]
            live_in[p].update(r for r in reads if r in defined and defined[r][0] < p)
            if name is not None:
                defined[name] = (p, i)
    read_later = set().union(*live_in)
    order = defined.__getitem__
    return [Part(bounds[p], bounds[p + 1], tuple(sorted(live_in[p], key=order)),
                 tuple(sorted((n for n in read_later if defined[n][0] == p), key=order))) for p in range(pieces)]


def slots(parts: Sequence[Part]) -> dict[str, int]:
    """A row of ``live`` for every value that crosses a boundary of ``parts``: a row is taken by the part that
    defines the value and free again after the last part that reads it (the smallest free row first)."""
    last = {name: p for p, part in enumerate(parts) for name in part.live_in}
    taken: dict[str, int] = {}
    free: list[int] = []
    rows = 0
    for p, part in enumerate(parts):
        for name in part.live_out:
            if free:
                taken[name] = heapq.heappop(free)
            else:
                taken[name], rows = rows, rows + 1
        for name in part.live_in:
            if last[name] == p:
                heapq.heappush(free, taken[name])
    return taken


def chunk_size(rows: int) -> int:
    """States per chunk for a routine with ``rows`` rows of doubles: CHUNK, halved (down to 8) while
    the rows would take more than STACK_BYTES."""
    chunk = CHUNK
    while chunk > 8 and 8 * chunk * rows > STACK_BYTES:
        chunk //= 2
    return chunk


#: A batch routine whose results take at least this many bytes writes them by non-temporal stores (with
#: GCC or Clang on x86-64; ``-DNAME_STREAM_BYTES=...`` overrides it): results this large outgrow the caches
#: a core can count on and go to memory anyway, and a plain store first reads each cache line it writes
#: (the Panda's derivatives at 10^5 states, 130 and 190 MB: 0.50 -> 0.34 and 0.76 -> 0.52 us per state).
#: Below it, plain stores leave the results in cache for a caller that reads them next. On a 2-core share of a
#: 32 MiB L3 (the Panda's M, 648 bytes a state, one output array reused) plain stores keep 42-56 ns a state up to
#: 7.8 MB (one run in three 131) and rise to 51-87 ns at 8.4 MB and 83-110 at 9.1 MB, where non-temporal ones take
#: 46-64 (below 8 MB they are 5-50% slower than plain ones; at 13 MB, with the caller reading the results next,
#: 120-149 ns against 164-173).
STREAM_BYTES = 8 << 20

#: How a batch routine stores its results: ``NAME_put`` (non-temporal when asked, on x86-64) and
#: ``NAME_fence`` (orders the non-temporal stores before the routine returns).
STORES = r"""#ifndef NAME_STREAM_BYTES
#define NAME_STREAM_BYTES THRESHOLDu
#endif
#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#include <string.h>
#define NAME_STREAMS 1
#else
#define NAME_STREAMS 0
#endif

/* *p = v; by a non-temporal store (movnti: no read of the cache line first) when stream is set. */
static inline void NAME_put(double *p, double v, int stream)
{
#if NAME_STREAMS
    if (stream) {
        long long bits;
        memcpy(&bits, &v, sizeof bits);
        _mm_stream_si64((long long *)p, bits);
        return;
    }
#endif
    (void)stream;
    *p = v;
}

static inline void NAME_fence(int stream)
{
#if NAME_STREAMS
    if (stream) {
        _mm_sfence();
    }
#endif
    (void)stream;
}
"""

#: The most output entries a routine may have for the file's tables of rows of ``y`` to be ``unsigned short`` (else
#: ``unsigned long``, for every routine of the file: a tree's dqdd or frames' Jacobians can pass it).
NARROW_ROWS = 65535

#: How a batch routine hands a chunk's results from the rows of ``y`` (one column per state) to the output (one
#: row per state): a transpose. Output entry e of state j is row ``row[e]`` of y (equal entries, such as M's two
#: triangles, share a row). With AVX2 and plain stores, four states by four entries at a time through registers
#: (4 x 4 transposes: 8 shuffles for 16 values, where one by one takes 16 loads and 16 stores: the Panda's M
#: 58 -> 43 ns a state with the shared rows). Non-temporal stores (``stream``: large batches) take the same
#: transposes and 32-byte non-temporal stores where a state's results are a whole number of 32 bytes (size divisible
#: by 4): storing them one double at a time (movnti) made solo12's dqdd at 10^4 states 1.9 us a state, plain stores
#: 1.4, these 1.2 (the routine's work in cache: 1.1). Other sizes (a buffer of four states copied out by 32-byte
#: stores measured no faster on the Panda's 162 and 243 entries, and took 4 x size doubles of stack), streams without
#: AVX2, and chunks of fewer than 4 states (one state) go one by one through NAME_put, in a loop the batch routine
#: spells out (constant offsets: a table's lookups made them 5-10% slower, and one call of solo12's M 0.3 us slower).
SCATTER = r"""#if defined(__AVX2__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#include <stdint.h>
#define NAME_AVX2 1
#else
#define NAME_AVX2 0
#endif

/* The type of the routines' tables of rows of y: unsigned short while no routine has more than NARROW entries. */
typedef ROW_TYPE NAME_row;

/* out[size * j + e] = y[chunk * row[e] + j] for the m states j of a chunk and the size entries e of each; with
   stream, by 32-byte non-temporal stores straight into out, where the rows of the four states of a block start
   alike (size divisible by 4), from the first entry on a 32-byte boundary (the entries before it and after the
   last whole block one at a time); otherwise streamed entries go one at a time (NAME_put). */
static void NAME_scatter(const double *restrict y, size_t chunk, const NAME_row *restrict row, size_t size,
                         double *restrict out, size_t m, int stream)
{
    size_t j = 0, e;
#if NAME_AVX2
    const int direct = NAME_STREAMS && stream && size % 4 == 0 && ((uintptr_t)out & 7u) == 0;
    if (direct || !stream) {
        const size_t first = direct ? (4 - (((uintptr_t)out >> 3) & 3u)) & 3u : 0;  /* (the first aligned entry) */
        const size_t whole = size - (size - first) % 4;  /* (the entries from first in blocks of 4) */
        for (; j + 4 <= m; j += 4) {
            double *o = out + size * j;
            for (e = 0; e < first; ++e) {
                const double *r = y + chunk * row[e] + j;
                NAME_put(o + e, r[0], 1);
                NAME_put(o + size + e, r[1], 1);
                NAME_put(o + 2 * size + e, r[2], 1);
                NAME_put(o + 3 * size + e, r[3], 1);
            }
            for (e = first; e < whole; e += 4) {
                const __m256d r0 = _mm256_loadu_pd(y + chunk * row[e] + j);
                const __m256d r1 = _mm256_loadu_pd(y + chunk * row[e + 1] + j);
                const __m256d r2 = _mm256_loadu_pd(y + chunk * row[e + 2] + j);
                const __m256d r3 = _mm256_loadu_pd(y + chunk * row[e + 3] + j);
                const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
                const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
                if (direct) {
                    _mm256_stream_pd(o + e, _mm256_permute2f128_pd(t0, t2, 0x20));
                    _mm256_stream_pd(o + size + e, _mm256_permute2f128_pd(t1, t3, 0x20));
                    _mm256_stream_pd(o + 2 * size + e, _mm256_permute2f128_pd(t0, t2, 0x31));
                    _mm256_stream_pd(o + 3 * size + e, _mm256_permute2f128_pd(t1, t3, 0x31));
                } else {
                    _mm256_storeu_pd(o + e, _mm256_permute2f128_pd(t0, t2, 0x20));
                    _mm256_storeu_pd(o + size + e, _mm256_permute2f128_pd(t1, t3, 0x20));
                    _mm256_storeu_pd(o + 2 * size + e, _mm256_permute2f128_pd(t0, t2, 0x31));
                    _mm256_storeu_pd(o + 3 * size + e, _mm256_permute2f128_pd(t1, t3, 0x31));
                }
            }
            for (e = whole; e < size; ++e) {
                const double *r = y + chunk * row[e] + j;
                NAME_put(o + e, r[0], direct);
                NAME_put(o + size + e, r[1], direct);
                NAME_put(o + 2 * size + e, r[2], direct);
                NAME_put(o + 3 * size + e, r[3], direct);
            }
        }
    }
#endif
    for (; j < m; ++j) {
        for (e = 0; e < size; ++e) {
            NAME_put(&out[size * j + e], y[chunk * row[e] + j], stream);
        }
    }
}
"""

#: The parts of a split routine are never inlined into it (GCC and Clang: the point is that the compiler sees
#: them one at a time).
NOINLINE = r"""#if defined(__GNUC__)
#define NAME_NOINLINE __attribute__((noinline))
#else
#define NAME_NOINLINE
#endif
"""

#: Beyond this magnitude (or for inf and NaN) an angle's sine and cosine come from libm.
REDUCTION_LIMIT = "1e5"

SINCOS = r"""#if defined(__FAST_MATH__)
#error "compile without -ffast-math or -Ofast: NAME_sincos rounds by adding 1.5 * 2^52, which fast-math folds away"
#endif
#include <float.h>
#include <stdint.h>
#include <string.h>

/*
 * sin and cos of x[0..count-1], into s and c: fdlibm's kernels __kernel_sin and __kernel_cos after a
 * three-part Cody-Waite reduction by pi/2 (x = n pi/2 + y0 + y1, n from rint(x 2/pi) by the 1.5 * 2^52
 * trick), within 1 ulp. The rounded sum's bits are those of 1.5 * 2^52 plus n, so that their two low bits are
 * n mod 4: odd n swaps the kernels' results, and sign bits are flipped where the quadrant's sine or cosine is
 * negative (bit operations: 13-14% faster than selecting by arithmetic with -march=native, 5% at plain -O3; and
 * sin(-0) is -0). The first loop has no calls and no branches, so that it is vectorised; the second (as
 * branch-free) finds whether any |x| > LIMIT, inf or NaN is there, and only then the third gives those to libm.
 * Where doubles are evaluated in a wider format (x87: FLT_EVAL_METHOD 2, or unknown), the rounding by 1.5 * 2^52
 * does not hold: libm's sin and cos then.
 */
static void NAME_sincos(const double *restrict x, size_t count, double *restrict s, double *restrict c)
{
    size_t i;
#if !defined(FLT_EVAL_METHOD) || (FLT_EVAL_METHOD != 0 && FLT_EVAL_METHOD != 1)
    for (i = 0; i < count; ++i) {
        s[i] = sin(x[i]);
        c[i] = cos(x[i]);
    }
#else
    for (i = 0; i < count; ++i) {
        const double a = x[i];
        const double big = a * 6.36619772367581382433e-01 + 6755399441055744.0;  /* 1.5 * 2^52 + n */
        const double fn = big - 6755399441055744.0;
        uint64_t n, bs, bc, os, oc;
        memcpy(&n, &big, sizeof n);
        const double r0 = a - fn * 1.57079632673412561417e+00;
        const double w0 = fn * 6.07710050630396597660e-11;
        const double r1 = r0 - w0;
        const double w1 = fn * 2.02226624879595063154e-21 - ((r0 - r1) - w0);
        const double y0 = r1 - w1;
        const double y1 = (r1 - y0) - w1;
        const double z = y0 * y0;
        const double v = z * y0;
        const double rs = 8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04
            + z * (2.75573137070700676789e-06 + z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)));
        const double ks = y0 - ((z * (0.5 * y1 - v * rs) - y1) - v * -1.66666666666666324348e-01);
        const double rc = z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03
            + z * (2.48015872894767294178e-05 + z * (-2.75573143513906633035e-07
            + z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11)))));
        const double hz = 0.5 * z;
        const double w = 1.0 - hz;
        const double kc = w + (((1.0 - w) - hz) + (z * rc - y0 * y1));
        const uint64_t odd = (uint64_t)0 - (n & 1u);      /* all ones where n is odd: the kernels swap */
        const uint64_t sin_sign = (n & 2u) << 62;         /* n mod 4 in {2, 3}: the sine is negated */
        const uint64_t cos_sign = ((n + 1u) & 2u) << 62;  /* n mod 4 in {1, 2}: the cosine is negated */
        memcpy(&bs, &ks, sizeof bs);
        memcpy(&bc, &kc, sizeof bc);
        os = ((bs & ~odd) | (bc & odd)) ^ sin_sign;
        oc = ((bc & ~odd) | (bs & odd)) ^ cos_sign;
        memcpy(&s[i], &os, sizeof os);
        memcpy(&c[i], &oc, sizeof oc);
    }
    {
        int far = 0;
        for (i = 0; i < count; ++i) {
            far |= !(fabs(x[i]) <= LIMIT);
        }
        for (i = 0; far && i < count; ++i) {
            if (!(fabs(x[i]) <= LIMIT)) {
                s[i] = sin(x[i]);
                c[i] = cos(x[i]);
            }
        }
    }
#endif
}
"""


class _Printer(C99CodePrinter):
    """C99CodePrinter that prints the sine or cosine of a precomputed angle as its array entry."""

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__(settings)
        self.angles: dict[sp.Expr, str] = {}  # angle -> index expression into sn/cs
        self.sums: dict[sp.Expr, tuple[str, str]] = {}  # sum angle -> names of its composed sine, cosine

    def _print_Pi(self, expr: sp.Expr) -> str:
        """pi as a literal: C99 has no M_PI (a POSIX extension, absent under -std=c99), and an exact angle such
        as a joint offset theta = pi/6 reaches the code as q + pi/6."""
        return "3.14159265358979323846"

    def _print_sin(self, expr: sp.Expr) -> str:
        if expr.args[0] in self.sums:
            return self.sums[expr.args[0]][0]
        if expr.args[0] in self.angles:
            return f"sn[{self.angles[expr.args[0]]}]"
        return super()._print_Function(expr)

    def _print_cos(self, expr: sp.Expr) -> str:
        if expr.args[0] in self.sums:
            return self.sums[expr.args[0]][1]
        if expr.args[0] in self.angles:
            return f"cs[{self.angles[expr.args[0]]}]"
        return super()._print_Function(expr)


class CEmitter(Emitter):
    comment_mark = " *"
    #: The floating-point type of the locals (the CUDA emitter's fp32 kernels: ``float``).
    scalar = "double"

    def make_printer(self) -> C99CodePrinter:
        return _Printer(PRINTER_SETTINGS)

    # -- statements ---------------------------------------------------------------------------------
    def __init__(self) -> None:
        super().__init__()
        self._rows: dict[tuple[str, int], int] | None = None  # inside a batch loop: (array, index) -> row of x
        self._chunk = CHUNK  # states per chunk of the batch routine being printed
        self._y: list[int] = []  # inside a batch loop: output entry -> row of y (equal entries share one)
        self._first: set[int] = set()  # the entries that store their row (the first of each)

    def load(self, load: Load) -> str:
        if self._rows is not None and load.array != "k":
            return f"const {self.scalar} {load.local} = x[{self._chunk} * {self._rows[load.array, load.index]} + j];"
        return f"const {self.scalar} {load.local} = {load.array}[{load.index}];"

    def assign(self, name: str, expr: object) -> str:
        return f"const {self.scalar} {name} = {self.expr(expr)};"

    def store(self, routine: Routine, index: int, expr: object) -> str:
        """Output entry ``index``; inside a batch loop its row of ``y``, or nothing where an earlier entry
        already holds the same expression (that entry's row is scattered to both)."""
        if self._rows is not None:
            if index not in self._first:
                return ""
            return f"y[{self._chunk} * {self._y[index]} + j] = {self.expr(expr)};"
        return f"{routine.output.name}[{index}] = {self.expr(expr)};"

    # -- frame ------------------------------------------------------------------------------------------
    @staticmethod
    def signature(spec: ModuleSpec, routine: Routine, batch: bool = False, restrict: bool = False) -> str:
        pointer = "*restrict " if restrict else "*"
        args = [f"const double {pointer}{a.name}" for a in routine.inputs] + [f"double {pointer}{routine.output.name}"]
        if batch:
            args.append("size_t n_states")
        suffix = "_batch" if batch else ""
        return f"void {spec.name}_{routine.name}{suffix}({', '.join(args)})"

    def block_comment(self, lines: list[str]) -> list[str]:
        return ["/*", *self.comment(lines), " */"]

    def function(self, spec: ModuleSpec, routine: Routine) -> list[str]:
        """The constants routine: straight-line code."""
        unused = [f"(void){name};" for name in routine.unused_inputs()]
        if not routine.stores:
            unused.append(f"(void){routine.output.name};")
        return [
            *self.block_comment(self.routine_doc(routine)),
            self.signature(spec, routine),
            "{",
            *self.indented(unused + self.statements(routine)),
            "}",
        ]

    def single(self, spec: ModuleSpec, routine: Routine) -> list[str]:
        """A run-time routine on one state: its batch routine on one state."""
        args = ", ".join(a.name for a in routine.arrays)
        return [
            *self.block_comment(self.routine_doc(routine)),
            self.signature(spec, routine),
            "{",
            self.indent + f"{spec.name}_{routine.name}_batch({args}, 1);",
            "}",
        ]

    def batch(self, spec: ModuleSpec, routine: Routine) -> list[str]:
        """The batch routine. Per chunk of states: one loop gathers the inputs that the code reads into
        rows of ``x`` (one row per entry, one column per state) and the angles of its sines and cosines
        into rows of ``ang``; ``NAME_sincos`` fills ``sn`` and ``cs``; the straight-line code runs in a
        loop over the chunk's columns into the rows of ``y`` (one per distinct output entry), which a last
        step scatters to the output (``NAME_scatter``; per state by non-temporal stores for large batches).
        Every loop reads and writes unit-stride rows, so compilers vectorise them across states."""
        angles, sums = split_angles(trig_angles(routine))
        size = routine.output.size
        self._y = output_rows(routine)
        results = len(set(self._y))  # rows of y
        first: dict[int, int] = {}  # row -> its first entry, in one pass
        for entry, row in enumerate(self._y):
            first.setdefault(row, entry)
        self._first = set(first.values())
        inputs = sum(1 for load in routine.loads if load.array != "k")
        plan = split_plan(routine)
        carried = len(set(plan.slots.values())) if plan else 0  # rows of live
        chunk = self._chunk = chunk_size(inputs + results + 3 * len(angles) + carried)
        functions: list[str] = []
        try:
            self.printer.angles = {angle: f"{chunk} * {t} + j" for t, angle in enumerate(angles)}
            self.printer.sums = {angle: (f"sa{i}", f"ca{i}") for i, angle in enumerate(sums)}
            self._rows = {}
            if plan is None:
                body = [self.assign(name, expr) for name, expr in routine.assignments]
                body += [line for i, x in enumerate(routine.stores) if (line := self.store(routine, i, x))]
                body = self.compose(sums, body) + body
                reads = _used(routine.loads, body)
            else:
                texts = self.part_texts(routine, plan, sums)
                reads = _used(routine.loads, [line for text in texts for line in text])
            rows = [load for load in reads if load.array != "k"]
            self._rows = {(load.array, load.index): r for r, load in enumerate(rows)}
            if plan is None:
                body = [self.load(load) for load in reads] + body
            else:
                functions = self.part_functions(spec, routine, plan, texts, reads, bool(angles))
            self.printer.angles, self.printer.sums = {}, {}
            self._rows = None
            gather = [f"x[{chunk} * {r} + j] = {load.local};" for r, load in enumerate(rows)]
            gather += [f"ang[{chunk} * {t} + j] = {self.expr(angle)};" for t, angle in enumerate(angles)]
        finally:
            self.printer.angles, self.printer.sums = {}, {}
            self._rows = None
        strides = {a.name: f"{a.size} * s + " for a in routine.arrays if a.name != "k"}
        loads = [f"const double {load.local} = {load.array}[{strides.get(load.array, '')}{load.index}];"
                 for load in _used(routine.loads, gather)]
        out = routine.output.name
        table = f"{spec.name}_{routine.name}_rows"
        streamed = [f"{spec.name}_put(&{out}[{size} * s + {e}], y[{chunk} * {row} + j], stream);"
                    for e, row in enumerate(self._y)]
        state = self.indent + "const size_t s = i + j;"
        per_state = ["for (j = 0; j < m; ++j) {", state, *self.indented(streamed), "}"]
        # streamed results go through the scatter's 32-byte stores where a state's results are a whole number of
        # 32 bytes (with AVX2 and non-temporal stores); else one by one in the spelt-out loop
        by_loop = (f"m < 4 || (stream && !({spec.name}_AVX2 && {spec.name}_STREAMS))" if size % 4 == 0 else
                   "stream || m < 4")
        scatter = [f"if ({by_loop}) {{", *self.indented(per_state), "} else {",
                   self.indent + f"{spec.name}_scatter(y, {chunk}, {table}, {size}, {out} + {size} * i, m, "
                   "stream);", "}"] if size else []
        unused = [f"(void){name};" for name in routine.unused_inputs()]
        if not routine.stores:
            unused.append(f"(void){out};")
        declarations = [f"double x[{chunk * max(len(rows), 1)}], y[{chunk * max(results, 1)}];"]
        if plan is not None:
            declarations.append(f"double live[{chunk * max(carried, 1)}];")
        if angles:
            width = chunk * len(angles)
            declarations.append(f"double ang[{width}], sn[{width}], cs[{width}];")
        declarations.append("size_t i, j, m" + (", r;" if angles else ";"))
        if scatter:
            declarations.append(f"const int stream = n_states * {size} * sizeof(double) >= {spec.name}_STREAM_BYTES;")
        if not rows:
            declarations.append("(void)x;")
        loop = [f"m = n_states - i < {chunk} ? n_states - i : {chunk};"]
        if gather:
            loop += ["for (j = 0; j < m; ++j) {", state, *self.indented(loads + gather), "}"]
        if angles:
            loop += self.sincos_calls(spec, chunk, len(angles))
        if plan is None:
            loop += ["for (j = 0; j < m; ++j) {", *self.indented(body), "}"]
        else:
            names = _part_arguments(routine, bool(angles))
            loop += [f"{_part_name(spec, routine, p)}({', '.join(names)}, m);" for p in range(len(plan.parts))]
        loop += scatter
        what = " (the sines and cosines first)" if angles else ""
        entry_rows = ", ".join(map(str, self._y))
        rows_table = [f"static const {spec.name}_row {table}[{size}] = {{{entry_rows}}};"] if size else []
        return [
            *functions,
            *rows_table,
            *self.block_comment([f"{routine.name} for n_states states stored one after the other, in chunks of "
                                 f"{chunk} states{what}."]),
            self.signature(spec, routine, batch=True, restrict=True),
            "{",
            *self.indented([*unused, *declarations, "for (i = 0; i < n_states; i += m) {", *self.indented(loop), "}",
                            *([f"{spec.name}_fence(stream);"] if scatter else [])]),
            "}",
        ]

    def sincos_calls(self, spec: ModuleSpec, chunk: int, rows: int) -> list[str]:
        """The sines and cosines of a chunk's ``rows`` rows of angles in one call of ``NAME_sincos``, whose loop
        then runs long enough to be vectorised and pipelined: a whole chunk's rows lie end to end; those of a
        partial chunk (one state, the end of a batch) are packed end to end first and spread out again after (in
        place: each move's target is below its source while packing, above while spreading). One state of the
        Panda's 6 angles: 6 calls on 1 value -> 1 call on 6."""
        name, indent = spec.name, self.indent
        return [
            f"if (m == {chunk}) {{",
            indent + f"{name}_sincos(ang, {chunk * rows}, sn, cs);",
            "} else {",
            indent + f"for (r = 1; r < {rows}; ++r) {{",
            2 * indent + f"for (j = 0; j < m; ++j) ang[m * r + j] = ang[{chunk} * r + j];",
            indent + "}",
            indent + f"{name}_sincos(ang, m * {rows}, sn, cs);",
            indent + f"for (r = {rows}; r-- > 1;) {{",
            2 * indent + "for (j = m; j-- > 0;) {",
            3 * indent + f"sn[{chunk} * r + j] = sn[m * r + j];",
            3 * indent + f"cs[{chunk} * r + j] = cs[m * r + j];",
            2 * indent + "}",
            indent + "}",
            "}",
        ]

    def part_texts(self, routine: Routine, plan: SplitPlan, sums: dict[sp.Expr, list[tuple[int, sp.Expr]]]
                   ) -> list[list[str]]:
        """The statements of each part of a split routine, after the sines and cosines of the sum angles they
        read (without the loads: those depend on the rows of ``x``)."""
        lines = [self.assign(*routine.assignments[i]) if kind == "a" else self.store(routine, i, routine.stores[i])
                 for kind, i in plan.order]
        texts = []
        for part in plan.parts:
            text = [line for line in lines[part.start:part.stop] if line]
            texts.append(self.compose(sums, text) + text)
        return texts

    def part_functions(self, spec: ModuleSpec, routine: Routine, plan: SplitPlan, texts: list[list[str]],
                       reads: list[Load], angles: bool) -> list[str]:
        """The functions of a split routine's parts: each runs its statements on the chunk's ``m`` states,
        reading its inputs from the rows of ``x`` (and ``k``, ``sn``, ``cs``), the values of earlier parts from
        rows of ``live``, and leaving there the values that later parts read."""
        chunk = self._chunk
        names = _part_arguments(routine, angles)
        arguments = [f"{'const ' if name not in ('live', 'y') else ''}double *restrict {name}" for name in names]
        lines = []
        for p, (part, text) in enumerate(zip(plan.parts, texts, strict=True)):
            body = [self.load(load) for load in _used(tuple(reads), text)]
            body += [f"const double {name} = live[{chunk} * {plan.slots[name]} + j];" for name in part.live_in]
            body += text
            body += [f"live[{chunk} * {plan.slots[name]} + j] = {name};" for name in part.live_out]
            used = "\n".join(body)
            unused = [f"(void){name};" for name in names if not re.search(rf"\b{name}\[", used)]
            lines += [
                *self.block_comment([f"{routine.name}, part {p + 1} of {len(plan.parts)} (statements {part.start + 1} "
                                     f"to {part.stop}): {len(part.live_in)} values in from live, {len(part.live_out)} "
                                     "out to it."]),
                f"static {spec.name}_NOINLINE void {_part_name(spec, routine, p)}({', '.join(arguments)}, size_t m)",
                "{",
                *self.indented(["size_t j;", *unused, "for (j = 0; j < m; ++j) {", *self.indented(body), "}"]),
                "}",
                "",
            ]
        return lines

    def compose(self, sums: dict[sp.Expr, list[tuple[int, sp.Expr]]], body: list[str]) -> list[str]:
        """The sines and cosines of the sum angles that ``body`` reads (``sa<i>``, ``ca<i>``), from those
        of their terms by the angle-addition formulas: never from the rounded sum itself, which loses all
        accuracy at huge angles (q1 + q2 rounds to a multiple of 0.125 at 1e15)."""
        text = "\n".join(body)
        lines = []
        for i, terms in enumerate(sums.values()):
            wanted = [name for name in (f"sa{i}", f"ca{i}") if re.search(rf"\b{name}\b", text)]
            if not wanted:
                continue
            sign, first = terms[0]
            s, c = f"sn[{self.printer.angles[first]}]", f"cs[{self.printer.angles[first]}]"
            s = f"(-{s})" if sign < 0 else s
            for step, (sign, term) in enumerate(terms[1:], start=1):
                ts, tc = f"sn[{self.printer.angles[term]}]", f"cs[{self.printer.angles[term]}]"
                plus, minus = ("+", "-") if sign > 0 else ("-", "+")
                parts = {f"sa{i}": f"{s} * {tc} {plus} {c} * {ts}", f"ca{i}": f"{c} * {tc} {minus} {s} * {ts}"}
                if step == len(terms) - 1:
                    lines += [f"const double {name} = {parts[name]};" for name in wanted]
                else:
                    s, c = f"sa{i}_{step}", f"ca{i}_{step}"
                    lines += [f"const double {s} = {parts[f'sa{i}']};", f"const double {c} = {parts[f'ca{i}']};"]
        return lines

    # -- files ------------------------------------------------------------------------------------------
    def file_comment(self, spec: ModuleSpec, filename: str) -> list[str]:
        lines = self.banner(spec, "C99 dynamics routines")
        lines[0] = f"{filename}: {lines[0]}"
        lines.append("A batch routine takes n_states states one after the other: (N, n) row-major arrays. No routine's")
        lines.append("output may overlap its inputs (the one-state routines run the batch ones, whose pointers are")
        lines.append("restrict). Compile with -O3 (or -O2 -ftree-vectorize): the batch loops, sines and cosines")
        lines.append("included, are written for the compiler to vectorise across states; never with -ffast-math or")
        lines.append("-Ofast (the sines and cosines rely on IEEE rounding; the source refuses to compile).")
        return self.block_comment(lines)

    def header(self, spec: ModuleSpec) -> str:
        macro = spec.name.upper()
        lines = self.file_comment(spec, f"{spec.name}.h")
        lines += [f"#ifndef ROBODYN_{macro}_H", f"#define ROBODYN_{macro}_H", "", "#include <stddef.h>", ""]
        lines += [
            f"#define {macro}_NUM_JOINTS {spec.n}",
            f"#define {macro}_NUM_PARAMETERS {len(spec.parameters)}",
            f"#define {macro}_NUM_CONSTANTS {spec.n_constants}",
            "",
            "#ifdef __cplusplus",
            'extern "C" {',
            "#endif",
            "",
        ]
        for routine in spec.routines:
            lines += self.block_comment(self.routine_doc(routine))
            lines.append(self.signature(spec, routine) + ";")
            if routine.batched:
                lines.append(self.signature(spec, routine, batch=True) + ";")
            lines.append("")
        lines += ["#ifdef __cplusplus", "}", "#endif", "", f"#endif /* ROBODYN_{macro}_H */"]
        return join(lines)

    def source(self, spec: ModuleSpec) -> str:
        lines = self.file_comment(spec, f"{spec.name}.c")
        lines += [f'#include "{spec.name}.h"', "", "#include <math.h>", ""]
        if any(r.batched for r in spec.routines):
            lines += [*STORES.replace("NAME", spec.name).replace("THRESHOLD", str(STREAM_BYTES)).splitlines(), ""]
            wide = any(len(r.stores) > NARROW_ROWS for r in spec.routines if r.batched)  # (rows <= entries)
            scatter = SCATTER.replace("ROW_TYPE", "unsigned long" if wide else "unsigned short")
            scatter = scatter.replace("NARROW", str(NARROW_ROWS))
            lines += [*scatter.replace("NAME", spec.name).splitlines(), ""]
        if any(r.batched and _statements(r) > SPLIT_STATEMENTS > 0 for r in spec.routines):
            lines += [*NOINLINE.replace("NAME", spec.name).splitlines(), ""]
        if any(trig_angles(r) for r in spec.routines if r.batched):
            lines += [*SINCOS.replace("NAME", spec.name).replace("LIMIT", REDUCTION_LIMIT).splitlines(), ""]
        for routine in spec.routines:
            if routine.batched:
                lines += [*self.batch(spec, routine), "", *self.single(spec, routine), ""]
            else:
                lines += [*self.function(spec, routine), ""]
        return join(lines)

    def files(self, spec: ModuleSpec) -> dict[str, str]:
        return {f"{spec.name}.h": self.header(spec), f"{spec.name}.c": self.source(spec)}


@dataclass(frozen=True)
class SplitPlan:
    """How a batch routine is split: its statements in the order printed (``("a", i)``: assignment i, ``("s", i)``:
    output entry i, placed right after the last assignment it reads), the parts, the row of ``live`` of each value
    that crosses a part boundary."""

    order: tuple[tuple[str, int], ...]
    parts: tuple[Part, ...]
    slots: dict[str, int]


def output_rows(routine: Routine) -> list[int]:
    """The row of ``y`` of each output entry of a batch routine: entries with the same expression (M's two
    triangles, zeros) share the row of the first."""
    first: dict[Any, int] = {}
    return [first.setdefault(x, len(first)) for x in routine.stores]


def _statements(routine: Routine) -> int:
    return len(routine.assignments) + len(routine.stores)


def split_plan(routine: Routine) -> SplitPlan | None:
    """The parts of a batch routine of more than SPLIT_STATEMENTS statements (None for a smaller one, or when
    SPLIT_STATEMENTS is 0)."""
    if SPLIT_STATEMENTS <= 0 or _statements(routine) <= SPLIT_STATEMENTS:
        return None
    index = {name: i for i, (name, _) in enumerate(routine.assignments)}

    def reads(expr: Any) -> frozenset[str]:
        return frozenset(s.name for s in getattr(expr, "free_symbols", ()) if s.name in index)

    after: dict[int, list[int]] = {}
    for e, expr in enumerate(routine.stores):
        after.setdefault(max((index[name] for name in reads(expr)), default=-1), []).append(e)
    order = [("s", e) for e in after.get(-1, [])]
    for i in range(len(routine.assignments)):
        order += [("a", i), *(("s", e) for e in after.get(i, []))]
    statements = [(routine.assignments[i][0], reads(routine.assignments[i][1])) if kind == "a"
                  else (None, reads(routine.stores[i])) for kind, i in order]
    loads = [frozenset(s.name for s in getattr(routine.assignments[i][1] if kind == "a" else routine.stores[i],
                                               "free_symbols", ()) if s.name not in index) for kind, i in order]
    parts = split_program(statements, PART_STATEMENTS, PART_REFERENCES, loads)
    return SplitPlan(tuple(order), tuple(parts), slots(parts))


def _part_arguments(routine: Routine, angles: bool) -> list[str]:
    """The arrays a part of a split batch routine takes (then the chunk's state count)."""
    constants = ["k"] if any(a.name == "k" for a in routine.inputs) else []
    return [*constants, "x", *(["sn", "cs"] if angles else []), "live", "y"]


def _part_name(spec: ModuleSpec, routine: Routine, p: int) -> str:
    return f"{spec.name}_{routine.name}_part{p + 1}"


def trig_angles(routine: Routine) -> list[sp.Expr]:
    """The arguments of the routine's sines and cosines that depend on the joint angles and constants
    only (so that a chunk's can be computed first), in order of first appearance."""
    inputs = {sp.Symbol(load.local) for load in routine.loads}
    seen: dict[sp.Expr, None] = {}
    for expr in [e for _, e in routine.assignments] + list(routine.stores):
        for node in sp.preorder_traversal(expr):
            if isinstance(node, (sp.sin, sp.cos)) and node.args[0] not in seen and node.args[0].free_symbols <= inputs:
                seen[node.args[0]] = None
    return list(seen)


def split_angles(angles: list[sp.Expr]) -> tuple[list[sp.Expr], dict[sp.Expr, list[tuple[int, sp.Expr]]]]:
    """(terms, sums): the angles to compute sines and cosines of (every angle that is not a sum, and
    every term of a sum, signs taken out: the terms of q2 - q3 are +q2 and -q3, i.e. (1, q2), (-1, q3)),
    and each sum angle's signed terms, whose sines and cosines give the sum's by angle addition."""
    terms: dict[sp.Expr, None] = {}
    sums: dict[sp.Expr, list[tuple[int, sp.Expr]]] = {}
    for angle in angles:
        parts = [(-1, -term) if term.could_extract_minus_sign() else (1, term) for term in sp.Add.make_args(angle)]
        if len(parts) > 1:
            sums[angle] = parts
        terms.update(dict.fromkeys(term for _, term in parts))
    return list(terms), sums


def _used(loads: tuple[Load, ...], lines: list[str]) -> list[Load]:
    """The loads whose local appears in ``lines``."""
    text = "\n".join(lines)
    return [load for load in loads if re.search(rf"\b{load.local}\b", text)]
