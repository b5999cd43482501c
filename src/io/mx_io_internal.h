/* mx_io_internal.h - helpers shared by the io files: error text, RNG, sorting, CSR finishing.
 * Not installed; nothing here is part of the contract in mx_io.h. */
#ifndef MX_IO_INTERNAL_H
#define MX_IO_INTERNAL_H

#include "io/mx_io.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

/* Write a one-line message into err (if err and errlen); always returns 1 (the error code). */
int mx_io_errf(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  ;

/* ---- random numbers: splitmix64 for seeding and hashing, xoshiro256** for streams ---------------- */
typedef struct {
  uint64_t s[4];
} mx_rng;

/* one splitmix64 step: x += golden; return mix(x) */
static inline uint64_t mx_splitmix64(uint64_t *x)
{
  uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* stateless 64-bit hash (the splitmix64 finalizer of x + golden) */
static inline uint64_t mx_hash64(uint64_t x) { return mx_splitmix64(&x); }

/* stream = (seed, stream id): different ids give independent streams from one seed */
static inline void mx_rng_seed(mx_rng *r, uint64_t seed, uint64_t stream)
{
  uint64_t x = seed ^ mx_hash64(stream * 0xD1B54A32D192ED03ULL + 0x5851F42D4C957F2DULL);
  for (int i = 0; i < 4; i++) r->s[i] = mx_splitmix64(&x);
}

static inline uint64_t mx_rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256** next */
static inline uint64_t mx_rng_next(mx_rng *r)
{
  uint64_t *s = r->s;
  uint64_t res = mx_rotl64(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = mx_rotl64(s[3], 45);
  return res;
}

/* uniform double in [0,1) with 53 random bits */
static inline double mx_rng_unif(mx_rng *r) { return (double)(mx_rng_next(r) >> 11) * 0x1.0p-53; }

/* uniform integer in [0,n), n >= 1, unbiased (Lemire's multiply-and-reject) */
static inline uint64_t mx_rng_below(mx_rng *r, uint64_t n)
{
  __uint128_t m = (__uint128_t)mx_rng_next(r) * n;
  uint64_t lo = (uint64_t)m;
  if (lo < n) {
    uint64_t thr = (0 - n) % n;
    while (lo < thr) {
      m = (__uint128_t)mx_rng_next(r) * n;
      lo = (uint64_t)m;
    }
  }
  return (uint64_t)(m >> 64);
}

/* value in (0,1] from a hash: the same (seed, a, b) always gives the same value */
static inline double mx_hash_unit(uint64_t seed, uint64_t a, uint64_t b)
{
  uint64_t h = mx_hash64(seed ^ mx_hash64((a << 32) ^ b ^ (a >> 32)));
  return (double)((h >> 11) + 1) * 0x1.0p-53;
}

/* ---- sorting and CSR finishing ------------------------------------------------------------------- */
/* sort c[0..n) ascending; v (may be NULL) moves with c */
void mx_io_sort_pairs(int32_t *c, double *v, int64_t n);

/* Sort every row by column and merge duplicates (values summed when val != NULL, otherwise the
 * duplicate is dropped); compacts col/val in place and rewrites rowptr. Returns the new nnz. */
int64_t mx_io_csr_sort_dedup(int32_t nrows, int64_t *rowptr, int32_t *col, double *val);

/* Allocation helpers that never call malloc(0) and check size overflow. */
void *mx_io_malloc(size_t count, size_t size);
void *mx_io_calloc(size_t count, size_t size);

/* Lower the memory mx_mem_available reports to at most bytes (0 = no cap): the fuzz harnesses keep
 * inputs that declare huge sizes from allocating past libFuzzer's limit. */
void mx_io_set_mem_cap(uint64_t bytes);

#endif

/* ---- generators (mx_gen*.c) ---------------------------------------------------------------------- */
#define MX_GEN_MAX_NNZ (INT64_C(1) << 34) /* refuse specs whose nonzero count would exceed this */

typedef struct {
  const char *spec; /* the spec as given, for messages */
  uint64_t seed;    /* never 0: 0 was replaced by MX_GEN_DEFAULT_SEED */
  int values;       /* graph families: ":v" suffix -> random positive values instead of 1.0 */
  char *err;
  size_t errlen;
  mx_gen_progress_fn progress; /* may be NULL */
  void *progress_ctx;
  int64_t *est_nnz; /* non-NULL: estimate only (mx_gen_estimate), nothing is generated */
  double *est_bytes;
} mx_gen_ctx;

/* progress report of step: done in [0, 1]; nothing without a callback */
static inline void mx_gen_report(const mx_gen_ctx *g, const char *step, double done)
{
  if (g->progress) g->progress(g->progress_ctx, step, done);
}

/* "spec 'SPEC': message"; returns 1 */
int mx_gen_err(const mx_gen_ctx *g, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;

/* stream ids: one per family so equal seeds do not give correlated families */
enum { MX_STREAM_KRON = 1, MX_STREAM_RGG, MX_STREAM_CHUNGLU, MX_STREAM_CHUNGLU_DIR, MX_STREAM_BAND, MX_STREAM_RAND,
       MX_STREAM_BIPARTITE, MX_STREAM_BLOCKDENSE, MX_STREAM_VALUES, MX_STREAM_LP };

int mx_gen_kron(const mx_gen_ctx *g, int scale, int64_t ef, mx_io_csr *A);
int mx_gen_rgg(const mx_gen_ctx *g, int log2n, mx_io_csr *A);
int mx_gen_chunglu(const mx_gen_ctx *g, int32_t n, double avgdeg, double expo, int directed, mx_io_csr *A);
/* 2D/3D stencils: kind is one of "lap2d", "lap2d9", "lap3d", "lap3d27", "convdiff2d", "convdiff3d" */
int mx_gen_stencil(const mx_gen_ctx *g, const char *kind, int64_t n, mx_io_csr *A);
int mx_gen_band(const mx_gen_ctx *g, int32_t n, int64_t w, mx_io_csr *A);
int mx_gen_randrows(const mx_gen_ctx *g, int32_t m, int32_t n, int64_t perrow, uint64_t stream, mx_io_csr *A);
int mx_gen_blockdense(const mx_gen_ctx *g, int32_t n, int64_t nb, int64_t bs, mx_io_csr *A);
/* m x n: `single` rows of one entry, the others' lengths a power law of exponent expo (1 <= length
 * <= n), the mean about avg; columns distinct and uniform per row */
int mx_gen_lp(const mx_gen_ctx *g, int32_t m, int32_t n, double avg, double expo, int32_t single, mx_io_csr *A);

/* ---- relabelling for locality (SPEC~ORDER, mx_gen_order.c) ----------------------------------- */
typedef enum { MX_ORDER_NONE = 0, MX_ORDER_DEG, MX_ORDER_RCM, MX_ORDER_BFS } mx_order_kind;

/* the order named s ("deg", "rcm", "bfs"), or -1 */
int mx_gen_order_kind(const char *s);
/* bytes relabelling allocates beside a CSR of nnz nonzeros whose larger dimension is n */
double mx_gen_order_bytes(mx_order_kind kind, double n, double nnz);
/* the order of A: rowold[k] = the old row at new place k, colnew[j] = the new number of old column
 * j. Square A: one permutation (colnew is rowold's inverse). deg: by key, largest first; rcm:
 * reverse Cuthill-McKee on A + A^T (each component from its smallest key, neighbours smallest
 * first); bfs: breadth-first on A + A^T (from the largest key, neighbours largest first).
 * Rectangular A, deg only: rows by length, columns by count. 0 ok, 1 out of memory. */
int mx_gen_order_perm(mx_order_kind kind, const mx_io_csr *A, int32_t *rowold, int32_t *colnew);
/* A := its rows in kind's order with columns renumbered, rows sorted, values moving with their
 * entries; rcm and bfs refuse a rectangular A. 0 ok, 1 with the message in g. */
int mx_gen_relabel(const mx_gen_ctx *g, mx_order_kind kind, mx_io_csr *A);

/* fill val[0..nnz) with uniform values in [-1,1) from the (seed, MX_STREAM_VALUES ^ stream) stream */
void mx_gen_fill_uniform(const mx_gen_ctx *g, uint64_t stream, double *val, int64_t nnz);
/* a uniformly random permutation of 0..n-1 drawn from r (Fisher-Yates; malloc'd), NULL when out of memory */
int32_t *mx_gen_random_perm(mx_rng *r, int32_t n);
/* shrink col to nnz entries (after dedup) and allocate val; 0 ok */
int mx_gen_finish(mx_io_csr *A, int32_t nrows, int32_t ncols, int64_t *rowptr, int32_t *col, int64_t nnz);
