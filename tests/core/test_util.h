/* test_util.h - shared helpers of the core tests: a deterministic RNG (splitmix64), random CSR
 * generators, a plain CSR reference SpMV, a small Matrix Market reader, and the full battery that
 * checks one format build against the input. Header-only (static), one copy per test program. */
#ifndef MX_TEST_UTIL_H
#define MX_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/mx_io.h"

#include "core/mx_format.h"

static int t_failures = 0;
#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      if (t_failures < 50) {                                                                                           \
        fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);                                       \
        fprintf(stderr, __VA_ARGS__);                                                                                  \
        fprintf(stderr, "\n");                                                                                         \
      }                                                                                                                \
      t_failures++;                                                                                                    \
    }                                                                                                                  \
  } while (0)

/* ---- RNG ---------------------------------------------------------------------------------------- */
typedef struct {
  uint64_t s;
} t_rng;

static inline uint64_t t_next(t_rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static inline double t_unif(t_rng *r) { return (double)(t_next(r) >> 11) * (1.0 / 9007199254740992.0); }
static inline int32_t t_below(t_rng *r, int32_t n) { return n > 0 ? (int32_t)(t_next(r) % (uint64_t)n) : 0; }

/* ---- owned CSR ---------------------------------------------------------------------------------- */
typedef struct {
  int32_t nrows, ncols, nnz;
  int32_t *rowptr, *colidx;
  double *val;
} t_csr;

static inline mx_csr t_view(const t_csr *A) {
  mx_csr v = {A->nrows, A->ncols, A->rowptr, A->colidx, A->val};
  return v;
}

static inline void t_csr_free(t_csr *A) {
  free(A->rowptr);
  free(A->colidx);
  free(A->val);
  memset(A, 0, sizeof(*A));
}

/* CSR from triplets, keeping triplet order inside each row (so columns stay unsorted). */
static inline t_csr t_from_triplets(int32_t m, int32_t n, int32_t nz, const int32_t *ti, const int32_t *tj, const double *tv) {
  t_csr A = {m, n, nz, calloc((size_t)m + 1, sizeof(int32_t)), malloc(((size_t)nz + 1) * sizeof(int32_t)),
             malloc(((size_t)nz + 1) * sizeof(double))};
  for (int32_t k = 0; k < nz; k++) A.rowptr[ti[k] + 1]++;
  for (int32_t i = 0; i < m; i++) A.rowptr[i + 1] += A.rowptr[i];
  int32_t *next = malloc(((size_t)m + 1) * sizeof(int32_t));
  memcpy(next, A.rowptr, ((size_t)m + 1) * sizeof(int32_t));
  for (int32_t k = 0; k < nz; k++) {
    A.colidx[next[ti[k]]] = tj[k];
    A.val[next[ti[k]]++] = tv[k];
  }
  free(next);
  return A;
}

/* Random matrix description. Entries: nz random (row, col) drawn uniformly, or with a power law
 * (index = floor(n * u^pw), pw > 1 skews to small indices); rows/cols with index % skip == skip-1
 * are kept empty (skip = 0: none); dense_rows full rows and dense_cols full columns are added;
 * a fraction dup of the entries is repeated (duplicates). Values in [-1, 1). */
typedef struct {
  int32_t m, n, nz;
  double row_pw, col_pw; /* 0 or 1 = uniform */
  int32_t skip_row, skip_col;
  int32_t dense_rows, dense_cols;
  double dup;
  uint64_t seed;
} t_spec;

static inline int32_t t_draw(t_rng *r, int32_t n, double pw, int32_t skip) {
  for (int tries = 0; tries < 64; tries++) {
    const double u = t_unif(r);
    int32_t i = (pw > 1.0) ? (int32_t)(n * pow(u, pw)) : (int32_t)(n * u);
    if (i >= n) i = n - 1;
    if (skip <= 0 || i % skip != skip - 1) return i;
  }
  return 0; /* index 0 is never skipped (skip >= 2) or skip = 1 makes everything empty but 0 */
}

static inline t_csr t_random(const t_spec *s) {
  t_rng r = {s->seed};
  const int64_t cap = (int64_t)s->nz + (int64_t)s->dense_rows * s->n + (int64_t)s->dense_cols * s->m;
  const int64_t capd = cap + (int64_t)(s->dup * (double)cap) + 1;
  int32_t *ti = malloc((size_t)capd * sizeof(int32_t)), *tj = malloc((size_t)capd * sizeof(int32_t));
  double *tv = malloc((size_t)capd * sizeof(double));
  int32_t k = 0;
  if (s->m > 0 && s->n > 0) {
    for (int32_t t = 0; t < s->nz; t++, k++) {
      ti[k] = t_draw(&r, s->m, s->row_pw, s->skip_row);
      tj[k] = t_draw(&r, s->n, s->col_pw, s->skip_col);
      tv[k] = 2.0 * t_unif(&r) - 1.0;
    }
    for (int32_t d = 0; d < s->dense_rows; d++) {
      const int32_t i = t_below(&r, s->m);
      for (int32_t j = 0; j < s->n; j++, k++) ti[k] = i, tj[k] = j, tv[k] = 2.0 * t_unif(&r) - 1.0;
    }
    for (int32_t d = 0; d < s->dense_cols; d++) {
      const int32_t j = t_below(&r, s->n);
      for (int32_t i = 0; i < s->m; i++, k++) ti[k] = i, tj[k] = j, tv[k] = 2.0 * t_unif(&r) - 1.0;
    }
    const int32_t base = k, ndup = (int32_t)(s->dup * base);
    for (int32_t d = 0; d < ndup && base > 0; d++, k++) {
      const int32_t src = t_below(&r, base);
      ti[k] = ti[src], tj[k] = tj[src], tv[k] = 2.0 * t_unif(&r) - 1.0;
    }
    for (int32_t t = k - 1; t > 0; t--) { /* shuffle: unsorted columns inside rows */
      const int32_t u = t_below(&r, t + 1);
      int32_t a = ti[t]; ti[t] = ti[u]; ti[u] = a;
      a = tj[t]; tj[t] = tj[u]; tj[u] = a;
      double b = tv[t]; tv[t] = tv[u]; tv[u] = b;
    }
  }
  t_csr A = t_from_triplets(s->m, s->n, k, ti, tj, tv);
  free(ti);
  free(tj);
  free(tv);
  return A;
}

/* ---- reference kernels -------------------------------------------------------------------------- */
static inline void t_ref_spmv(const t_csr *A, const double *x, double *y) {
  for (int32_t i = 0; i < A->nrows; i++) {
    double s = 0.0;
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) s += A->val[p] * x[A->colidx[p]];
    y[i] = s;
  }
}

static inline void t_ref_spmv_t(const t_csr *A, const double *x, double *y) {
  for (int32_t j = 0; j < A->ncols; j++) y[j] = 0.0;
  for (int32_t i = 0; i < A->nrows; i++)
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) y[A->colidx[p]] += A->val[p] * x[i];
}

/* ||a - b||_2 / ||b||_2 over the entries where b is finite (absolute when that norm is 0); an entry
 * where b is inf or NaN (real matrices may hold inf) must be the same in a, else the result is inf. */
static inline double t_relerr(const double *a, const double *b, int32_t n) {
  double d = 0.0, nb = 0.0;
  for (int32_t i = 0; i < n; i++) {
    if (!isfinite(b[i])) {
      if (!(isnan(b[i]) ? isnan(a[i]) : a[i] == b[i])) return INFINITY;
      continue;
    }
    d += (a[i] - b[i]) * (a[i] - b[i]), nb += b[i] * b[i];
  }
  return nb > 0.0 ? sqrt(d / nb) : sqrt(d);
}

static inline double *t_vec(t_rng *r, int32_t n) {
  double *v = malloc(((size_t)n + 1) * sizeof(double));
  for (int32_t i = 0; i < n; i++) v[i] = 2.0 * t_unif(r) - 1.0;
  return v;
}

/* ---- small Matrix Market reader (well-formed files only; symmetric/skew expanded) ---------------- */
static inline int t_read_mtx(const char *path, t_csr *A) {
  FILE *f = fopen(path, "r");
  if (!f) return 1;
  char line[1024], fmt[64] = "", field[64] = "", sym[64] = "";
  if (!fgets(line, sizeof line, f) || sscanf(line, "%%%%MatrixMarket matrix %63s %63s %63s", fmt, field, sym) != 3) {
    fclose(f);
    return 1;
  }
  do {
    if (!fgets(line, sizeof line, f)) {
      fclose(f);
      return 1;
    }
  } while (line[0] == '%');
  const int array = strcmp(fmt, "array") == 0, pattern = strcmp(field, "pattern") == 0;
  const int symm = strcmp(sym, "symmetric") == 0, skew = strcmp(sym, "skew-symmetric") == 0;
  long m = 0, n = 0, nz = 0;
  if (array ? sscanf(line, "%ld %ld", &m, &n) != 2 : sscanf(line, "%ld %ld %ld", &m, &n, &nz) != 3) {
    fclose(f);
    return 1;
  }
  const long cap = array ? m * n : 2 * nz;
  int32_t *ti = malloc((size_t)(cap + 1) * sizeof(int32_t)), *tj = malloc((size_t)(cap + 1) * sizeof(int32_t));
  double *tv = malloc((size_t)(cap + 1) * sizeof(double));
  long k = 0, bad = 0;
  if (array) { /* column major; symmetric: lower triangle only */
    for (long j = 0; j < n && !bad; j++)
      for (long i = symm || skew ? j : 0; i < m && !bad; i++) {
        double v;
        if (fscanf(f, "%lf", &v) != 1) bad = 1;
        ti[k] = (int32_t)i, tj[k] = (int32_t)j, tv[k++] = v;
        if ((symm || skew) && i != j) ti[k] = (int32_t)j, tj[k] = (int32_t)i, tv[k++] = skew ? -v : v;
      }
  } else {
    for (long t = 0; t < nz && !bad; t++) {
      long i, j;
      double v = 1.0;
      if (fscanf(f, "%ld %ld", &i, &j) != 2 || (!pattern && fscanf(f, "%lf", &v) != 1)) bad = 1;
      if (i < 1 || i > m || j < 1 || j > n) bad = 1;
      if (bad) break;
      ti[k] = (int32_t)(i - 1), tj[k] = (int32_t)(j - 1), tv[k++] = v;
      if ((symm || skew) && i != j) ti[k] = (int32_t)(j - 1), tj[k] = (int32_t)(i - 1), tv[k++] = skew ? -v : v;
    }
  }
  fclose(f);
  if (!bad) *A = t_from_triplets((int32_t)m, (int32_t)n, (int32_t)k, ti, tj, tv);
  free(ti);
  free(tj);
  free(tv);
  return (int)bad;
}

/* ---- generated and real test matrices ---------------------------------------------------------- */
/* *A = the generated matrix spec (mx_gen, seed 0) as an owned t_csr; 0, or 1 after a failed check. */
static inline int t_gen(const char *spec, t_csr *A) {
  mx_io_csr B;
  char err[256];
  if (mx_gen(spec, 0, &B, err, sizeof err)) {
    CHECK(0, "%s: %s", spec, err);
    return 1;
  }
  *A = (t_csr){B.nrows, B.ncols, (int32_t)B.nnz, malloc(((size_t)B.nrows + 1) * 4), malloc(((size_t)B.nnz + 1) * 4),
               malloc(((size_t)B.nnz + 1) * 8)};
  for (int32_t i = 0; i <= B.nrows; i++) A->rowptr[i] = (int32_t)B.rowptr[i];
  if (B.nnz) memcpy(A->colidx, B.colidx, (size_t)B.nnz * 4), memcpy(A->val, B.val, (size_t)B.nnz * 8);
  mx_io_csr_free(&B);
  return 0;
}

/* check(path) on each file named in argv[1..] or, without arguments, on the real matrices of
 * tests/data/matrices/real found from the calling test's source path src (its __FILE__; a file it
 * cannot read is the check's to report). */
static inline void t_for_each_real(int argc, char **argv, const char *src, void (*check)(const char *path)) {
  static const char *files[] = {"LFAT5", "west0067", "lp_afiro", "karate", "jagmesh7", "olm1000", "cryg2500", "bcsstk13"};
  const char *slash = strrchr(src, '/');
  if (argc > 1) {
    for (int a = 1; a < argc; a++) check(argv[a]);
    return;
  }
  for (size_t f = 0; slash && f < sizeof files / sizeof files[0]; f++) {
    char path[1024];
    snprintf(path, sizeof path, "%.*s/../data/matrices/real/%s.mtx", (int)(slash - src), src, files[f]);
    check(path);
  }
}

/* ---- reference crux selection (comparison sorts, written independently of src/core) ------------- */
static const int32_t *t_sort_len;
static inline int t_cmp_len_desc(const void *a, const void *b) {
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  if (t_sort_len[x] != t_sort_len[y]) return t_sort_len[x] > t_sort_len[y] ? -1 : 1;
  return (x > y) - (x < y);
}

/* hot[k] = 1 iff entry k is in the hot region of crux c; returns the hot column and row counts. */
static inline void t_ref_select(const t_csr *A, mx_crux c, uint8_t *hot, int32_t *hot_ncols, int32_t *hot_nrows) {
  const int32_t m = A->nrows, n = A->ncols, nz = A->nnz;
  const double tr = c.tau_r < c.tau_c ? c.tau_r : c.tau_c;
  int32_t *len = calloc((size_t)(m > n ? m : n) + 1, sizeof(int32_t)), *ord = malloc(((size_t)(m > n ? m : n) + 1) * sizeof(int32_t));
  uint8_t *hc = calloc((size_t)n + 1, 1), *hr = calloc((size_t)m + 1, 1);
  for (int32_t k = 0; k < nz; k++) len[A->colidx[k]]++;
  for (int32_t j = 0; j < n; j++) ord[j] = j;
  t_sort_len = len;
  qsort(ord, (size_t)n, sizeof(int32_t), t_cmp_len_desc);
  double tc_target = ceil(c.tau_c * (double)nz), tr_target = ceil(tr * (double)nz);
  long sum = 0;
  int32_t p = 0;
  while (p < n && sum < tc_target) sum += len[ord[p++]];
  *hot_ncols = p;
  for (int32_t t = 0; t < p; t++) hc[ord[t]] = 1;
  for (int32_t i = 0; i < m; i++) {
    len[i] = 0;
    for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) len[i] += hc[A->colidx[k]];
    ord[i] = i;
  }
  qsort(ord, (size_t)m, sizeof(int32_t), t_cmp_len_desc);
  sum = 0, p = 0;
  while (p < m && sum < tr_target) sum += len[ord[p++]];
  *hot_nrows = p;
  for (int32_t t = 0; t < p; t++) hr[ord[t]] = 1;
  for (int32_t i = 0; i < m; i++)
    for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) hot[k] = hr[i] && hc[A->colidx[k]];
  free(len);
  free(ord);
  free(hc);
  free(hr);
}

/* ---- the battery ------------------------------------------------------------------------------ */
static inline int t_cmp_pair(const void *a, const void *b) {
  const double *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Rows of B equal rows of A as multisets of (col, val). */
static inline int t_same_multiset(const t_csr *A, const int32_t *Bp, const int32_t *Bj, const double *Bx) {
  int32_t maxlen = 0;
  for (int32_t i = 0; i < A->nrows; i++)
    if (A->rowptr[i + 1] - A->rowptr[i] > maxlen) maxlen = A->rowptr[i + 1] - A->rowptr[i];
  double *pa = malloc((4 * (size_t)maxlen + 1) * sizeof(double)), *pb = pa + 2 * (size_t)maxlen;
  int ok = Bp[0] == 0;
  for (int32_t i = 0; i < A->nrows && ok; i++) {
    const int32_t la = A->rowptr[i + 1] - A->rowptr[i];
    if (Bp[i + 1] - Bp[i] != la) {
      ok = 0;
      break;
    }
    for (int32_t t = 0; t < la; t++) {
      pa[2 * t] = A->colidx[A->rowptr[i] + t], pa[2 * t + 1] = A->val[A->rowptr[i] + t];
      pb[2 * t] = Bj[Bp[i] + t], pb[2 * t + 1] = Bx[Bp[i] + t];
    }
    qsort(pa, (size_t)la, 2 * sizeof(double), t_cmp_pair);
    qsort(pb, (size_t)la, 2 * sizeof(double), t_cmp_pair);
    ok = memcmp(pa, pb, 2 * (size_t)la * sizeof(double)) == 0;
  }
  free(pa);
  return ok;
}

#define T_ARR_EQ(a, b, n) ((n) == 0 || ((a) && (b) && memcmp((a), (b), (size_t)(n) * sizeof(*(a))) == 0))

/* Same input, same crux, same mode -> identical arrays. */
static inline int t_identical(const mx_format *F, const mx_format *G) {
  const int32_t nh = F->mode == MX_HOT_SE ? F->se_nslots : F->hot_nnz;
  return F->mode == G->mode && F->hot_nnz == G->hot_nnz && F->nchunks == G->nchunks && F->du_nblocks == G->du_nblocks &&
         F->se_nslots == G->se_nslots && F->cold_nnz == G->cold_nnz && T_ARR_EQ(F->hot_row, G->hot_row, F->nchunks * 8) &&
         T_ARR_EQ(F->du_chunkptr, G->du_chunkptr, F->mode == MX_HOT_DU ? F->nchunks + 1 : 0) &&
         T_ARR_EQ(F->du_bitmap, G->du_bitmap, F->du_nblocks) && T_ARR_EQ(F->du_col, G->du_col, 4 * F->du_nblocks) &&
         T_ARR_EQ(F->du_val, G->du_val, F->mode == MX_HOT_DU ? F->hot_nnz : 0) &&
         T_ARR_EQ(F->se_col, G->se_col, F->se_nslots) && T_ARR_EQ(F->se_val, G->se_val, F->se_nslots) &&
         T_ARR_EQ(F->cold_rowptr, G->cold_rowptr, F->nrows + 1) && T_ARR_EQ(F->cold_col, G->cold_col, F->cold_nnz) &&
         T_ARR_EQ(F->cold_val, G->cold_val, F->cold_nnz) && T_ARR_EQ(F->cold_src, G->cold_src, F->cold_nnz) &&
         T_ARR_EQ(F->hot_src, G->hot_src, nh);
}

/* All four products of F against the reference on A (tolerance 1e-12), y == z included. */
static inline void t_check_products(const mx_format *F, const t_csr *A, const char *what, uint64_t seed) {
  const int32_t m = A->nrows, n = A->ncols;
  t_rng r = {seed};
  double *x = t_vec(&r, n), *xt = t_vec(&r, m), *z = t_vec(&r, m), *zt = t_vec(&r, n);
  double *y = t_vec(&r, m), *yt = t_vec(&r, n), *ref = t_vec(&r, m), *reft = t_vec(&r, n), *w = t_vec(&r, m + n);
  const double tol = 1e-12;
  t_ref_spmv(A, x, ref);
  mx_spmv(F, x, y);
  CHECK(t_relerr(y, ref, m) <= tol, "%s: y=Ax err %g", what, t_relerr(y, ref, m));
  for (int32_t i = 0; i < m; i++) ref[i] += z[i];
  mx_spmv_add(F, x, z, y);
  CHECK(t_relerr(y, ref, m) <= tol, "%s: y=Ax+z err %g", what, t_relerr(y, ref, m));
  memcpy(w, z, (size_t)m * sizeof(double));
  mx_spmv_add(F, x, w, w);
  CHECK(t_relerr(w, ref, m) <= tol, "%s: z=Ax+z err %g", what, t_relerr(w, ref, m));
  t_ref_spmv_t(A, xt, reft);
  mx_spmv_t(F, xt, yt);
  CHECK(t_relerr(yt, reft, n) <= tol, "%s: y=A'x err %g", what, t_relerr(yt, reft, n));
  for (int32_t j = 0; j < n; j++) reft[j] += zt[j];
  mx_spmv_t_add(F, xt, zt, yt);
  CHECK(t_relerr(yt, reft, n) <= tol, "%s: y=A'x+z err %g", what, t_relerr(yt, reft, n));
  memcpy(w, zt, (size_t)n * sizeof(double));
  mx_spmv_t_add(F, xt, w, w);
  CHECK(t_relerr(w, reft, n) <= tol, "%s: z=A'x+z err %g", what, t_relerr(w, reft, n));
  free(x), free(xt), free(z), free(zt), free(y), free(yt), free(ref), free(reft), free(w);
}

static const mx_crux t_grid[] = {{0, 0}, {1, 1}, {1, 0}, {0.5, 0.3}, {0.9, 0.8}, {0.7, 0.5}};
#define T_NGRID ((int)(sizeof(t_grid) / sizeof(t_grid[0])))

/* Build A at crux c in mode req and check everything that can be checked against A. */
static inline void t_battery_one(const t_csr *A, mx_crux c, mx_mode_request req, const char *name) {
  char what[256];
  snprintf(what, sizeof what, "%s %dx%d nnz %d crux (%g,%g) mode %d", name, A->nrows, A->ncols, A->nnz, c.tau_c,
           c.tau_r, (int)req);
  const mx_csr V = t_view(A);
  mx_format F, G;
  mx_status st = mx_format_build(&V, c, req, &F);
  CHECK(st == MX_OK, "%s: build returned %d", what, (int)st);
  if (st != MX_OK) return;
  CHECK(mx_format_check(&F) == MX_OK, "%s: check failed", what);
  /* the selection equals the independent reference */
  uint8_t *hot = calloc((size_t)A->nnz + 1, 1), *got = calloc((size_t)A->nnz + 1, 1);
  int32_t rc, rr;
  t_ref_select(A, c, hot, &rc, &rr);
  CHECK(F.hot_ncols == rc && F.hot_nrows == rr, "%s: hot cols/rows %d/%d, expected %d/%d", what, F.hot_ncols,
        F.hot_nrows, rc, rr);
  const int32_t nh = F.mode == MX_HOT_SE ? F.se_nslots : F.mode == MX_HOT_DU ? F.hot_nnz : 0;
  for (int32_t p = 0; p < nh; p++)
    if (F.hot_src[p] >= 0) got[F.hot_src[p]] = 1;
  CHECK(memcmp(hot, got, (size_t)A->nnz) == 0, "%s: hot entry set differs from the reference", what);
  CHECK(F.nnz == A->nnz && F.nrows == A->nrows && F.ncols == A->ncols, "%s: sizes", what);
  if (F.hot_nnz > 0 && req != MX_MODE_AUTO)
    CHECK((int)F.mode == (int)req, "%s: forced mode %d not honoured (%d)", what, (int)req, (int)F.mode);
  size_t du = 0, se = 0;
  mx_format_hot_costs(&F, &du, &se);
  if (req == MX_MODE_AUTO && F.hot_nnz > 0)
    CHECK(F.mode == (du < se ? MX_HOT_DU : MX_HOT_SE), "%s: auto chose %d with du %zu se %zu", what, (int)F.mode, du, se);
  CHECK(mx_format_bytes(&F) == mx_csr_bytes(F.nrows, F.cold_nnz) + (F.mode == MX_HOT_DU ? du : F.mode == MX_HOT_SE ? se : 0),
        "%s: bytes %zu inconsistent with hot costs", what, mx_format_bytes(&F));
  if (F.hot_nnz == 0) CHECK(mx_format_bytes(&F) == mx_csr_bytes(A->nrows, A->nnz), "%s: all-cold bytes", what);
  /* round trip */
  int32_t *Bp = malloc(((size_t)A->nrows + 1) * sizeof(int32_t)), *Bj = malloc(((size_t)A->nnz + 1) * sizeof(int32_t));
  double *Bx = malloc(((size_t)A->nnz + 1) * sizeof(double));
  mx_format_to_csr(&F, Bp, Bj, Bx);
  CHECK(t_same_multiset(A, Bp, Bj, Bx), "%s: to_csr differs from the input", what);
  t_check_products(&F, A, what, 1234);
  /* determinism */
  st = mx_format_build(&V, c, req, &G);
  CHECK(st == MX_OK && t_identical(&F, &G), "%s: second build differs", what);
  mx_format_free(&G);
  /* value refresh: new values, same pattern */
  t_csr S = *A;
  S.val = malloc(((size_t)A->nnz + 1) * sizeof(double));
  for (int32_t k = 0; k < A->nnz; k++) S.val[k] = -3.0 * A->val[k] + 0.001 * (k % 7);
  mx_format_refresh_values(&F, S.val);
  CHECK(mx_format_check(&F) == MX_OK, "%s: check after refresh", what);
  mx_format_to_csr(&F, Bp, Bj, Bx);
  CHECK(t_same_multiset(&S, Bp, Bj, Bx), "%s: to_csr after refresh differs", what);
  t_check_products(&F, &S, what, 99);
  free(S.val), free(Bp), free(Bj), free(Bx), free(hot), free(got);
  mx_format_free(&F);
}

/* mx_format_build_borrow: without hot nonzeros the cold CSR is A's own arrays (identity map, never
 * freed or written by the format; refresh takes the new value array), with them the same format as
 * mx_format_build. Products, check, refresh and free are checked against A. */
static inline void t_check_borrow(const t_csr *A, mx_crux c, mx_mode_request req, const char *name) {
  char what[256];
  snprintf(what, sizeof what, "%s %dx%d crux (%g,%g) mode %d borrowed", name, A->nrows, A->ncols, c.tau_c, c.tau_r, (int)req);
  const mx_csr V = t_view(A);
  mx_format B, F;
  if (mx_format_build_borrow(&V, c, req, &B) != MX_OK || mx_format_build(&V, c, req, &F) != MX_OK) {
    CHECK(0, "%s: build failed", what);
    return;
  }
  CHECK(mx_format_check(&B) == MX_OK, "%s: check failed", what);
  if (B.hot_nnz > 0) {
    CHECK(!B.cold_borrowed && t_identical(&B, &F), "%s: differs from the owned build", what);
  } else {
    CHECK(B.cold_borrowed && !B.cold_src && B.cold_rowptr == V.rowptr && B.cold_col == V.colidx && B.cold_val == V.val &&
              B.cold_nnz == A->nnz, "%s: does not borrow A", what);
    CHECK(mx_format_bytes(&B) == mx_format_bytes(&F), "%s: bytes differ from the owned build", what);
    t_check_products(&B, A, what, 4321);
    t_csr S = *A;
    S.val = malloc(((size_t)A->nnz + 1) * sizeof(double));
    for (int32_t k = 0; k < A->nnz; k++) S.val[k] = 0.5 * A->val[k] - 0.002 * (k % 5);
    mx_format_refresh_values(&B, S.val);
    CHECK(B.cold_val == S.val && mx_format_check(&B) == MX_OK, "%s: refresh does not take the new values", what);
    t_check_products(&B, &S, what, 77);
    free(S.val); /* B only points at it; mx_format_free(&B) below must not free it (nor A's arrays) */
  }
  mx_format_free(&B);
  mx_format_free(&F);
}

/* Every crux of the grid in every mode; DU and SE builds report the same costs. */
static inline void t_battery(const t_csr *A, const char *name) {
  for (int g = 0; g < T_NGRID; g++) {
    for (int md = 0; md < 3; md++) t_battery_one(A, t_grid[g], (mx_mode_request)md, name);
    t_check_borrow(A, t_grid[g], MX_MODE_AUTO, name);
    const mx_csr V = t_view(A);
    mx_format D, S;
    if (mx_format_build(&V, t_grid[g], MX_MODE_DU, &D) == MX_OK && mx_format_build(&V, t_grid[g], MX_MODE_SE, &S) == MX_OK) {
      size_t d1, s1, d2, s2;
      mx_format_hot_costs(&D, &d1, &s1);
      mx_format_hot_costs(&S, &d2, &s2);
      CHECK(d1 == d2 && s1 == s2, "%s crux (%g,%g): costs from DU (%zu,%zu) vs from SE (%zu,%zu)", name,
            t_grid[g].tau_c, t_grid[g].tau_r, d1, s1, d2, s2);
      mx_format_free(&D);
      mx_format_free(&S);
    }
  }
}

static inline int t_report(const char *prog) {
  if (t_failures) fprintf(stderr, "%s: %d check(s) failed\n", prog, t_failures);
  else printf("%s: all checks passed\n", prog);
  return t_failures ? 1 : 0;
}

#endif
