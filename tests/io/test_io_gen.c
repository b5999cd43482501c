/* test_io_gen.c - generators: for every family the size, nnz (exact where known, a range otherwise),
 * CSR invariants (sorted, no duplicate columns), symmetry where promised, values, determinism
 * (same seed -> identical arrays, other seed -> different), and refused specs. */
#include "io/mx_io_internal.h" /* mx_io_set_mem_cap */
#include "mx_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double entry(const mx_io_csr *A, int32_t i, int32_t j)
{
  int64_t lo = A->rowptr[i], hi = A->rowptr[i + 1];
  while (lo < hi) { /* rows are sorted */
    int64_t mid = (lo + hi) / 2;
    if (A->colidx[mid] < j) lo = mid + 1;
    else hi = mid;
  }
  return lo < A->rowptr[i + 1] && A->colidx[lo] == j ? A->val[lo] : NAN;
}

/* 1: symmetric pattern and values, 2: symmetric pattern only, 0: not */
static int symmetry(const mx_io_csr *A)
{
  if (A->nrows != A->ncols) return 0;
  int vals = 1;
  for (int32_t i = 0; i < A->nrows; i++)
    for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
      double t = entry(A, A->colidx[k], i);
      if (isnan(t)) return 0;
      if (t != A->val[k]) vals = 0;
    }
  return vals ? 1 : 2;
}

static int64_t diag_count(const mx_io_csr *A)
{
  int64_t d = 0;
  for (int32_t i = 0; i < A->nrows && i < A->ncols; i++) d += !isnan(entry(A, i, i));
  return d;
}

static int same_csr(const mx_io_csr *A, const mx_io_csr *B)
{
  return A->nrows == B->nrows && A->ncols == B->ncols && A->nnz == B->nnz &&
         !memcmp(A->rowptr, B->rowptr, ((size_t)A->nrows + 1) * sizeof(int64_t)) &&
         !memcmp(A->colidx, B->colidx, (size_t)A->nnz * sizeof(int32_t)) &&
         !memcmp(A->val, B->val, (size_t)A->nnz * sizeof(double));
}

enum { V_ONE, V_UNIT, V_PM1, V_STENCIL };
typedef struct {
  const char *spec;
  int32_t m, n;
  int64_t nnz_lo, nnz_hi; /* inclusive */
  int sym;                /* 1 symmetric (values too), 0 not promised, -1 promised nonsymmetric */
  int values;             /* V_* */
  int random;             /* depends on the seed */
  int nodiag;             /* graph families: no self-loops */
} gen_case;

#define L2(N) (5 * (int64_t)(N) * (N) - 4 * (int64_t)(N))
#define L3(N) (7 * (int64_t)(N) * (N) * (N) - 6 * (int64_t)(N) * (N))
static const gen_case cases[] = {
  /* kron:12:8: 4096 vertices, 32768 edges drawn -> < 65536 nnz; duplicates cost roughly a quarter */
  {"kron:12:8", 4096, 4096, 30000, 65536, 1, V_ONE, 1, 1},
  {"kron:12:8:v", 4096, 4096, 30000, 65536, 1, V_UNIT, 1, 1},
  /* rgg:14: average degree ~ pi*0.55^2*ln(n) = 9.26 -> ~151,700 nnz (+-10%) */
  {"rgg:14", 16384, 16384, 136000, 167000, 1, V_ONE, 1, 1},
  {"rgg:14:v", 16384, 16384, 136000, 167000, 1, V_UNIT, 1, 1},
  {"chunglu:20000:8:2.5", 20000, 20000, 100000, 160000, 1, V_ONE, 1, 1},
  {"chunglu:20000:8:2.5:v", 20000, 20000, 100000, 160000, 1, V_UNIT, 1, 1},
  {"chunglu-dir:20000:8:2.2", 20000, 20000, 100000, 160000, 0, V_ONE, 1, 1},
  {"chunglu-dir:20000:8:2.2:v", 20000, 20000, 100000, 160000, 0, V_UNIT, 1, 1},
  {"lap2d:37", 1369, 1369, L2(37), L2(37), 1, V_STENCIL, 0, 0},
  {"lap2d9:37", 1369, 1369, 35 * 35 * 9 + 4 * 35 * 6 + 4 * 4, 35 * 35 * 9 + 4 * 35 * 6 + 4 * 4, 1, V_STENCIL, 0, 0},
  {"lap3d:13", 2197, 2197, L3(13), L3(13), 1, V_STENCIL, 0, 0},
  {"lap3d27:9", 729, 729, 25 * 25 * 25, 25 * 25 * 25, 1, V_STENCIL, 0, 0}, /* (3N-2)^3 */
  {"convdiff2d:37", 1369, 1369, L2(37), L2(37), -1, V_STENCIL, 0, 0},
  {"convdiff3d:13", 2197, 2197, L3(13), L3(13), -1, V_STENCIL, 0, 0},
  {"band:1000:5", 1000, 1000, 1000 * 11 - 30, 1000 * 11 - 30, 0, V_PM1, 1, 0},
  {"band:7:0", 7, 7, 7, 7, 0, V_PM1, 1, 0},
  {"rand:5000:9", 5000, 5000, 45000, 45000, 0, V_PM1, 1, 0},
  {"rand:50:40", 50, 50, 2000, 2000, 0, V_PM1, 1, 0}, /* dense rows: selection sampling */
  {"bipartite:3000:700:6", 3000, 700, 18000, 18000, 0, V_PM1, 1, 0},
  {"bipartite:10:100000:3", 10, 100000, 30, 30, 0, V_PM1, 1, 0},
  /* lp: about M*AVG, every row rounded to its length (and at least 1) */
  {"lp:3000:5000:20:3:0", 3000, 5000, 57000, 63000, 0, V_PM1, 1, 0},
  {"lp:3000:5000:20:2.5:60", 3000, 5000, 57000, 63000, 0, V_PM1, 1, 0},
  {"lp:100:50:10:1.5:0", 100, 50, 100, 1100, 0, V_PM1, 1, 0}, /* the long rows clamped at N */
  /* 5000 rows: 5 background + blocks 20*16*16 = 5120 (overlaps merged) */
  {"blockdense:5000:20:16", 5000, 5000, 24000, 30120, 0, V_PM1, 1, 0},
};

static void check_values(const gen_case *c, const mx_io_csr *A)
{
  int ok = 1;
  for (int64_t k = 0; k < A->nnz && ok; k++) {
    double v = A->val[k];
    if (c->values == V_ONE) ok = v == 1.0;
    else if (c->values == V_UNIT) ok = v > 0.0 && v <= 1.0;
    else if (c->values == V_PM1) ok = v >= -1.0 && v < 1.0;
  }
  CHECK(ok, "%s: values outside the promised range", c->spec);
  if (c->values == V_UNIT) { /* really random, not all equal */
    int differ = 0;
    for (int64_t k = 1; k < A->nnz; k++) differ |= A->val[k] != A->val[0];
    CHECK(differ, "%s: ':v' values all equal", c->spec);
  }
  if (c->values == V_STENCIL) {
    /* diagonal = sum of |off-diagonal| in the interior (zero row sum), >= at the boundary; off-diagonals < 0 */
    int dd = 1, neg = 1, zero_rows = 0;
    for (int32_t i = 0; i < A->nrows; i++) {
      double d = 0, off = 0;
      for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
        if (A->colidx[k] == i) d = A->val[k];
        else {
          off += -A->val[k];
          neg &= A->val[k] < 0;
        }
      }
      dd &= d >= off - 1e-12;
      zero_rows += fabs(d - off) < 1e-12;
    }
    CHECK(dd && neg, "%s: not a diagonally dominant M-matrix", c->spec);
    CHECK(zero_rows > 0, "%s: no interior row with zero row sum", c->spec);
  }
}

static void test_families(void)
{
  char err[512];
  for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
    const gen_case *c = &cases[t];
    mx_io_csr A, B, C;
    int rc = mx_gen(c->spec, 0, &A, err, sizeof(err));
    CHECK(rc == 0, "%s: %s", c->spec, err);
    if (rc) continue;
    printf("  %-28s %7d x %-7d nnz %lld\n", c->spec, A.nrows, A.ncols, (long long)A.nnz);
    CHECK(A.nrows == c->m && A.ncols == c->n, "%s: %d x %d, expected %d x %d", c->spec, A.nrows, A.ncols, c->m, c->n);
    CHECK(A.nnz >= c->nnz_lo && A.nnz <= c->nnz_hi, "%s: nnz %lld outside [%lld, %lld]", c->spec, (long long)A.nnz,
          (long long)c->nnz_lo, (long long)c->nnz_hi);
    CHECK(mx_io_csr_check(&A, err, sizeof(err)) == 0, "%s: %s", c->spec, err); /* sorted, no duplicates */
    if (c->sym == 1) CHECK(symmetry(&A) == 1, "%s: not symmetric (pattern and values)", c->spec);
    if (c->sym == -1) CHECK(symmetry(&A) != 1, "%s: symmetric but should not be", c->spec);
    if (c->nodiag) CHECK(diag_count(&A) == 0, "%s: has self-loops", c->spec);
    if (c->values == V_STENCIL) CHECK(diag_count(&A) == A.nrows, "%s: missing diagonal entries", c->spec);
    check_values(c, &A);
    /* determinism: seed 0 is the documented default seed; same seed -> identical arrays */
    rc = mx_gen(c->spec, MX_GEN_DEFAULT_SEED, &B, err, sizeof(err));
    CHECK(rc == 0 && same_csr(&A, &B), "%s: seed 0 and MX_GEN_DEFAULT_SEED differ", c->spec);
    if (!rc) mx_io_csr_free(&B);
    rc = mx_gen(c->spec, 777, &B, err, sizeof(err));
    int rc2 = mx_gen(c->spec, 777, &C, err, sizeof(err));
    CHECK(rc == 0 && rc2 == 0 && same_csr(&B, &C), "%s: seed 777 twice gives different matrices", c->spec);
    if (c->random) CHECK(!same_csr(&A, &B), "%s: seeds 0 and 777 give the same matrix", c->spec);
    else CHECK(same_csr(&A, &B), "%s: deterministic family depends on the seed", c->spec);
    if (!rc) mx_io_csr_free(&B);
    if (!rc2) mx_io_csr_free(&C);
    mx_io_csr_free(&A);
  }
}

/* the ":v" variants have the same structure as the plain ones */
static void test_value_suffix(void)
{
  const char *pairs[][2] = {{"kron:11:4", "kron:11:4:v"}, {"rgg:12", "rgg:12:v"}, {"chunglu:3000:6:2.3", "chunglu:3000:6:2.3:v"}};
  char err[512];
  for (int t = 0; t < 3; t++) {
    mx_io_csr A, B;
    int rc = mx_gen(pairs[t][0], 9, &A, err, sizeof(err)) || mx_gen(pairs[t][1], 9, &B, err, sizeof(err));
    CHECK(rc == 0, "%s", err);
    if (rc) continue;
    CHECK(A.nnz == B.nnz && !memcmp(A.rowptr, B.rowptr, ((size_t)A.nrows + 1) * 8) &&
            !memcmp(A.colidx, B.colidx, (size_t)A.nnz * 4),
          "%s vs %s: structure differs", pairs[t][0], pairs[t][1]);
    mx_io_csr_free(&A);
    mx_io_csr_free(&B);
  }
}

/* SPEC@VALUES: the pattern of SPEC, the values of the variant, reproducible; unknown names refused */
static void test_value_variants(void)
{
  const char *bases[] = {"lap2d:30", "kron:11:4:v", "band:500:3"};
  const char *kinds[] = {"ones", "pagerank", "unique", "few"};
  char err[512], spec[64];
  for (int b = 0; b < 3; b++) {
    mx_io_csr A;
    if (mx_gen(bases[b], 5, &A, err, sizeof(err))) {
      CHECK(0, "%s", err);
      continue;
    }
    for (int k = 0; k < 4; k++) {
      mx_io_csr V, W;
      snprintf(spec, sizeof spec, "%s@%s", bases[b], kinds[k]);
      int rc = mx_gen(spec, 5, &V, err, sizeof(err)) || mx_gen(spec, 5, &W, err, sizeof(err));
      CHECK(rc == 0, "%s: %s", spec, err);
      if (rc) continue;
      CHECK(V.nnz == A.nnz && !memcmp(V.rowptr, A.rowptr, ((size_t)A.nrows + 1) * 8) && !memcmp(V.colidx, A.colidx, (size_t)A.nnz * 4),
            "%s: the pattern of %s", spec, bases[b]);
      CHECK(!memcmp(V.val, W.val, (size_t)V.nnz * 8), "%s: same spec and seed, same values", spec);
      double *colsum = calloc((size_t)V.ncols, sizeof(double));
      int64_t bad = 0;
      for (int64_t q = 0; q < V.nnz; q++) {
        const double v = V.val[q];
        colsum[V.colidx[q]] += v;
        if (k == 0) bad += v != 1.0;
        if (k == 2) bad += !(v >= -1.0 && v < 1.0);
        if (k == 3) bad += !(v == -2.0 || v == -1.0 || v == 1.0 || v == 2.0 || v == 3.0);
      }
      if (k == 1) /* a transition matrix: every nonempty column sums to 1 */
        for (int64_t q = 0; q < V.nnz; q++) bad += fabs(colsum[V.colidx[q]] - 1.0) > 1e-12;
      CHECK(bad == 0, "%s: %lld values not of the variant", spec, (long long)bad);
      free(colsum);
      mx_io_csr_free(&V);
      mx_io_csr_free(&W);
    }
    mx_io_csr_free(&A);
  }
  mx_io_csr X;
  CHECK(mx_gen("lap2d:30@bogus", 5, &X, err, sizeof(err)) != 0 && strstr(err, "@bogus"), "unknown values refused: %s", err);
  CHECK(mx_gen("lap2d:30@", 5, &X, err, sizeof(err)) != 0, "empty values refused");
  int64_t n1 = 0, n2 = 0;
  CHECK(!mx_gen_estimate("lap2d:30", &n1, NULL, err, sizeof(err)) && !mx_gen_estimate("lap2d:30@unique", &n2, NULL, err, sizeof(err)) && n1 == n2,
        "estimate of SPEC@VALUES = estimate of SPEC");
  CHECK(strstr(mx_gen_help(), "@pagerank") != NULL, "help documents @VALUES");
}

/* the stencil values themselves */
static void test_stencil_values(void)
{
  char err[512];
  mx_io_csr A;
  CHECK(mx_gen("lap2d:5", 0, &A, err, sizeof(err)) == 0, "%s", err);
  int32_t c = 2 * 5 + 2; /* centre point (2,2) */
  CHECK(A.rowptr[c + 1] - A.rowptr[c] == 5 && entry(&A, c, c) == 4 && entry(&A, c, c - 1) == -1 && entry(&A, c, c + 5) == -1,
        "lap2d centre row");
  CHECK(A.rowptr[1] - A.rowptr[0] == 3, "lap2d corner row has %lld entries", (long long)(A.rowptr[1] - A.rowptr[0]));
  mx_io_csr_free(&A);
  CHECK(mx_gen("lap3d27:3", 0, &A, err, sizeof(err)) == 0, "%s", err);
  CHECK(A.rowptr[14] - A.rowptr[13] == 27 && entry(&A, 13, 13) == 26 && entry(&A, 13, 0) == -1, "lap3d27 centre row");
  mx_io_csr_free(&A);
  CHECK(mx_gen("convdiff2d:5", 0, &A, err, sizeof(err)) == 0, "%s", err);
  CHECK(entry(&A, c, c) == 5.5 && entry(&A, c, c - 1) == -2 && entry(&A, c, c + 1) == -1 && entry(&A, c, c - 5) == -1.5 &&
          entry(&A, c, c + 5) == -1,
        "convdiff2d centre row");
  mx_io_csr_free(&A);
  CHECK(mx_gen("convdiff3d:3", 0, &A, err, sizeof(err)) == 0, "%s", err);
  CHECK(entry(&A, 13, 13) == 7.75 && entry(&A, 13, 4) == -1.25 && entry(&A, 13, 22) == -1 && entry(&A, 13, 12) == -2,
        "convdiff3d centre row");
  mx_io_csr_free(&A);
  CHECK(mx_gen("band:10:2", 0, &A, err, sizeof(err)) == 0, "%s", err);
  CHECK(A.rowptr[1] == 3 && A.rowptr[6] - A.rowptr[5] == 5 && A.colidx[A.rowptr[5]] == 3, "band rows");
  mx_io_csr_free(&A);
}

/* Kronecker degree skew: the R-MAT parameters give a heavy tail (max degree >> average) */
static void test_kron_skew(void)
{
  char err[512];
  mx_io_csr A;
  CHECK(mx_gen("kron:14:16", 0, &A, err, sizeof(err)) == 0, "%s", err);
  int64_t maxd = 0, empty = 0;
  for (int32_t i = 0; i < A.nrows; i++) {
    int64_t d = A.rowptr[i + 1] - A.rowptr[i];
    if (d > maxd) maxd = d;
    empty += d == 0;
  }
  double avg = (double)A.nnz / A.nrows;
  printf("  kron:14:16 nnz %lld avg %.1f max %lld empty rows %lld\n", (long long)A.nnz, avg, (long long)maxd, (long long)empty);
  CHECK(maxd > 20 * avg, "kron max degree %lld not heavy-tailed (avg %.1f)", (long long)maxd, avg);
  CHECK(empty > A.nrows / 20, "kron: too few isolated vertices (%lld), Graph500 has many", (long long)empty);
  /* relabelled: the hub is not vertex 0 */
  int64_t d0 = A.rowptr[1] - A.rowptr[0];
  CHECK(d0 < maxd, "kron: vertex 0 is the hub, relabelling missing");
  mx_io_csr_free(&A);
}

/* lp: the row lengths, sorted, are the power law's (the i-th longest of the M - S rows that are not
 * single-entry max(1, min(N, round(a (M - S) w_i / sum w))), a = (AVG M - S) / (M - S)), then S rows
 * of one entry; not in sorted order along the rows */
static int cmp_desc(const void *a, const void *b)
{
  return (*(const int64_t *)a < *(const int64_t *)b) - (*(const int64_t *)a > *(const int64_t *)b);
}

static void test_lp_rows(void)
{
  const struct {
    const char *spec;
    int32_t m, n, single;
    double avg, expo;
  } c[] = {{"lp:3000:5000:20:3:0", 3000, 5000, 0, 20, 3},
           {"lp:100:50:10:1.5:0", 100, 50, 0, 10, 1.5},
           {"lp:4000:70000:256:3:30", 4000, 70000, 1200, 256, 3},
           {"lp:20000:27000:60:2.5:61", 20000, 27000, 12200, 60, 2.5}};
  char err[512];
  for (int t = 0; t < 4; t++) {
    mx_io_csr A;
    if (mx_gen(c[t].spec, 0, &A, err, sizeof err)) {
      CHECK(0, "%s: %s", c[t].spec, err);
      continue;
    }
    int64_t *len = malloc(sizeof(int64_t) * (size_t)A.nrows);
    int sorted = 1;
    for (int32_t i = 0; i < A.nrows; i++) len[i] = A.rowptr[i + 1] - A.rowptr[i];
    for (int32_t i = 1; i < A.nrows; i++) sorted &= len[i] <= len[i - 1];
    CHECK(!sorted, "%s: rows in sorted order", c[t].spec);
    qsort(len, (size_t)A.nrows, sizeof(int64_t), cmp_desc);
    const int32_t q = c[t].m - c[t].single;
    const double a = (c[t].avg * c[t].m - c[t].single) / q;
    double sum = 0;
    for (int32_t i = 0; i < q; i++) sum += pow(i + 1.0, -1.0 / (c[t].expo - 1.0));
    int64_t wrong = 0, ones = 0;
    for (int32_t i = 0; i < c[t].m; i++) {
      double want = i < q ? floor(a * q * pow(i + 1.0, -1.0 / (c[t].expo - 1.0)) / sum + 0.5) : 1;
      want = want < 1 ? 1 : want > c[t].n ? c[t].n : want;
      wrong += len[i] != (int64_t)want;
      ones += len[i] == 1;
    }
    CHECK(ones >= c[t].single, "%s: %lld single-entry rows, %d wanted", c[t].spec, (long long)ones, (int)c[t].single);
    CHECK(wrong == 0, "%s: %lld row lengths off the power law", c[t].spec, (long long)wrong);
    free(len);
    mx_io_csr_free(&A);
  }
}

/* SPEC~ORDER is P A Q for the permutation mx_gen_order_perm gives (every entry and value moved, rows
 * sorted), reproducible; deg orders by key; rcm and bfs give a randomly numbered grid a band back;
 * refused: unknown orders, rcm/bfs on a rectangular matrix */
static int is_permutation(const int32_t *p, int32_t n)
{
  char *hit = calloc((size_t)n, 1);
  int ok = 1;
  for (int32_t k = 0; k < n && ok; k++) ok = p[k] >= 0 && p[k] < n && !hit[p[k]]++;
  free(hit);
  return ok;
}

static int64_t bandwidth(const mx_io_csr *A)
{
  int64_t bw = 0;
  for (int32_t i = 0; i < A->nrows; i++)
    for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
      int64_t d = llabs((long long)A->colidx[k] - i);
      bw = d > bw ? d : bw;
    }
  return bw;
}

static void check_relabelled(const char *spec, const char *order)
{
  char err[512], full[128];
  snprintf(full, sizeof full, "%s~%s", spec, order);
  mx_io_csr A, B, B2;
  if (mx_gen(spec, 3, &A, err, sizeof err)) {
    CHECK(0, "%s: %s", spec, err);
    return;
  }
  int rc = mx_gen(full, 3, &B, err, sizeof err);
  CHECK(rc == 0, "%s: %s", full, err);
  if (rc) return mx_io_csr_free(&A);
  CHECK(mx_io_csr_check(&B, err, sizeof err) == 0, "%s: %s", full, err);
  CHECK(B.nrows == A.nrows && B.ncols == A.ncols && B.nnz == A.nnz, "%s: dimensions changed", full);
  int32_t *rowold = malloc(sizeof(int32_t) * (size_t)A.nrows), *colnew = malloc(sizeof(int32_t) * (size_t)A.ncols);
  CHECK(mx_gen_order_perm((mx_order_kind)mx_gen_order_kind(order), &A, rowold, colnew) == 0, "%s: perm", full);
  CHECK(is_permutation(rowold, A.nrows) && is_permutation(colnew, A.ncols), "%s: not permutations", full);
  int64_t wrong = 0;
  for (int32_t k = 0; k < A.nrows; k++) {
    int32_t i = rowold[k];
    wrong += (B.rowptr[k + 1] - B.rowptr[k]) != (A.rowptr[i + 1] - A.rowptr[i]);
    for (int64_t p = A.rowptr[i]; p < A.rowptr[i + 1]; p++) wrong += entry(&B, k, colnew[A.colidx[p]]) != A.val[p];
  }
  CHECK(wrong == 0, "%s: %lld entries not at their relabelled place", full, (long long)wrong);
  if (A.nrows == A.ncols)
    for (int32_t k = 0; k < A.nrows; k++) wrong += colnew[rowold[k]] != k;
  CHECK(wrong == 0, "%s: rows and columns not relabelled alike", full);
  if (!strcmp(order, "deg") && A.nrows == A.ncols) { /* keys (row length + column count) never grow */
    int64_t *key = calloc((size_t)A.nrows, sizeof(int64_t));
    for (int32_t i = 0; i < B.nrows; i++) key[i] += B.rowptr[i + 1] - B.rowptr[i];
    for (int64_t p = 0; p < B.nnz; p++) key[B.colidx[p]]++;
    for (int32_t i = 1; i < B.nrows; i++) wrong += key[i] > key[i - 1];
    CHECK(wrong == 0, "%s: keys out of order", full);
    free(key);
  }
  CHECK(mx_gen(full, 3, &B2, err, sizeof err) == 0 && same_csr(&B, &B2), "%s: not reproducible", full);
  mx_io_csr_free(&B2);
  free(rowold), free(colnew);
  mx_io_csr_free(&A), mx_io_csr_free(&B);
}

static void test_orders(void)
{
  const char *specs[] = {"kron:10:8@unique", "chunglu:3000:8:2.1", "chunglu-dir:2000:6:2.3:v", "lap2d:17",
                         "convdiff3d:7@few", "rgg:11@pagerank", "blockdense:400:3:20"};
  const char *orders[] = {"deg", "rcm", "bfs"};
  for (size_t s = 0; s < sizeof(specs) / sizeof(specs[0]); s++)
    for (int o = 0; o < 3; o++) check_relabelled(specs[s], orders[o]);
  check_relabelled("bipartite:40:70:5", "deg");
  /* a 30 x 30 grid numbered at random: rcm and bfs give it back a band of at most twice the grid's 30 */
  char err[512];
  mx_io_csr A;
  CHECK(mx_gen("lap2d:30", 0, &A, err, sizeof err) == 0, "%s", err);
  int32_t n = A.nrows, *shuffled = malloc(sizeof(int32_t) * (size_t)n), *rowold = malloc(sizeof(int32_t) * (size_t)n),
          *colnew = malloc(sizeof(int32_t) * (size_t)n);
  uint64_t x = 12345;
  for (int32_t i = 0; i < n; i++) shuffled[i] = i;
  for (int32_t i = n - 1; i > 0; i--) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    int32_t j = (int32_t)((x >> 33) % (uint64_t)(i + 1)), t = shuffled[i];
    shuffled[i] = shuffled[j], shuffled[j] = t;
  }
  for (int64_t p = 0; p < A.nnz; p++) A.colidx[p] = shuffled[A.colidx[p]]; /* columns renamed, rows below */
  mx_io_csr R = A;
  R.rowptr = malloc(sizeof(int64_t) * ((size_t)n + 1));
  R.colidx = malloc(sizeof(int32_t) * (size_t)A.nnz);
  R.val = malloc(sizeof(double) * (size_t)A.nnz);
  int32_t *inv = malloc(sizeof(int32_t) * (size_t)n);
  for (int32_t i = 0; i < n; i++) inv[shuffled[i]] = i;
  R.rowptr[0] = 0;
  for (int32_t k = 0; k < n; k++) { /* row k of R = old row inv[k] */
    int64_t q = R.rowptr[k];
    for (int64_t p = A.rowptr[inv[k]]; p < A.rowptr[inv[k] + 1]; p++, q++) R.colidx[q] = A.colidx[p], R.val[q] = A.val[p];
    R.rowptr[k + 1] = q;
  }
  CHECK(bandwidth(&R) > 300, "the shuffled grid is still banded (%lld)", (long long)bandwidth(&R));
  for (int o = 1; o < 3; o++) {
    CHECK(mx_gen_order_perm((mx_order_kind)mx_gen_order_kind(orders[o]), &R, rowold, colnew) == 0, "perm");
    int64_t bw = 0;
    for (int32_t i = 0; i < n; i++)
      for (int64_t p = R.rowptr[i]; p < R.rowptr[i + 1]; p++) {
        int64_t d = llabs((long long)colnew[i] - colnew[R.colidx[p]]);
        bw = d > bw ? d : bw;
      }
    CHECK(bw <= 60, "~%s on a shuffled lap2d:30: bandwidth %lld", orders[o], (long long)bw);
  }
  free(shuffled), free(rowold), free(colnew), free(inv);
  mx_io_csr_free(&R), mx_io_csr_free(&A);
  const char *bad[] = {"lap2d:10~foo", "lap2d:10~", "lap2d:10~bfs@ones", "bipartite:10:20:3~rcm", "bipartite:10:20:3~bfs"};
  for (size_t t = 0; t < sizeof(bad) / sizeof(bad[0]); t++) {
    int rc = mx_gen(bad[t], 0, &A, err, sizeof err);
    CHECK(rc != 0 && strstr(err, bad[t]) && strstr(err, "~"), "'%s' accepted or unclear: %s", bad[t], rc ? err : "");
    if (!rc) mx_io_csr_free(&A);
  }
}

static void test_bad_specs(void)
{
  const char *bad[] = {"",          "kron",        "kron:18",       "kron:18:16:w",  "kron:18:16:v:v", "kron:0:16",
                       "kron:31:1", "kron:x:16",   "kron:18:-1",    "kron:30:100",   "kron:18:1.5",    "rgg:0",
                       "rgg:29",    "rgg:10:16",   "lap2d",         "lap2d:0",       "lap2d:46341",    "lap2d:-5",
                       "lap2d:1e3", "lap2d:5:v",   "lap3d:1291",    "lap3d27:0",     "lap2d9:a",       "convdiff2d:",
                       "convdiff3d:2000", "band:10", "band:10:10",  "band:0:0",      "rand:10:0",      "rand:10:11",
                       "rand:0:1",  "rand:3000000000:1", "chunglu:100:5", "chunglu:100:5:1", "chunglu:100:5:0.5",
                       "chunglu:100:0:2.5", "chunglu:100:200:2.5", "chunglu:100:5:inf", "chunglu:100:5:2.5:x",
                       "chunglu-dir:0:5:2.5", "blockdense:100:5", "blockdense:100:0:5", "blockdense:100:5:101",
                       "bipartite:10:10", "bipartite:10:5:6", "bipartite:0:5:1", "foo:10", "KRON:10:10",
                       "lap2d:99999999999999999999999999", ":", "::::::::::::", "rand:1000000:1000000", "l0\n", "lap2d:\t5", "lp:10:10:5:2", "lp:10:10:20:2:0",
                       "lp:10:10:5:1:0", "lp:0:10:5:2:0", "lp:10:10:0.5:2:0", "lp:10:10:5:2:100", "lp:10:10:5:2:0:v"};
  char err[512];
  for (size_t t = 0; t < sizeof(bad) / sizeof(bad[0]); t++) {
    mx_io_csr A;
    int rc = mx_gen(bad[t], 0, &A, err, sizeof(err));
    char want[128];
    snprintf(want, sizeof(want), "spec '%s'", bad[t]);
    for (char *c = want; *c; c++) /* control characters are echoed as '?' */
      if ((unsigned char)*c < 0x20) *c = '?';
    CHECK(rc != 0, "bad spec '%s' accepted", bad[t]);
    if (rc) CHECK(strstr(err, want) != NULL && !strchr(err, '\n'), "'%s': message '%s' does not name the spec", bad[t], err);
    else mx_io_csr_free(&A);
    CHECK(A.rowptr == NULL, "'%s': output not cleared", bad[t]);
  }
}

/* mx_gen_estimate bounds what mx_gen makes: nonzeros >= the generated count, bytes >= the CSR's */
static void test_estimate(void)
{
  const char *specs[] = {"kron:10:16",  "kron:12:3:v", "rgg:12",     "rgg:16",          "chunglu:2000:8:2.5",
                         "chunglu-dir:2000:8:2.5", "lap2d:30", "lap2d9:17", "lap3d:9",  "lap3d27:8", "convdiff2d:11",
                         "convdiff3d:9", "band:500:7", "rand:300:9", "bipartite:30:70:5", "blockdense:500:3:40",
                         "kron:10:16@unique~bfs", "chunglu:2000:8:2.5~rcm", "bipartite:30:70:5~deg", "lp:3000:5000:20:3:0",
                         "lp:100:50:10:1.5:0", "lp:3000:5000:20:2.5:60",
                         "chunglu:301:1:3", "chunglu-dir:1001:0.6:2.5"}; /* N*AVGDEG odd / rounded up */
  char err[512];
  for (size_t t = 0; t < sizeof(specs) / sizeof(specs[0]); t++) {
    mx_io_csr A;
    int64_t nnz = -1;
    double bytes = -1;
    CHECK(mx_gen_estimate(specs[t], &nnz, &bytes, err, sizeof err) == 0, "%s: %s", specs[t], err);
    CHECK(mx_gen(specs[t], 0, &A, err, sizeof err) == 0, "%s: %s", specs[t], err);
    CHECK(nnz >= A.nnz, "%s: estimated %lld nonzeros, generated %lld", specs[t], (long long)nnz, (long long)A.nnz);
    CHECK(bytes >= 12.0 * (double)A.nnz + 8.0 * (A.nrows + 1), "%s: estimated %.0f bytes for %lld nonzeros", specs[t],
          bytes, (long long)A.nnz);
    mx_io_csr_free(&A);
  }
  CHECK(mx_gen_estimate("kron:8", NULL, NULL, err, sizeof err) != 0 && strstr(err, "spec 'kron:8'"), "%s", err);
  /* over the memory left (a 1 MB cap here): refused with the bytes needed and available, output cleared */
  mx_io_csr A;
  mx_io_set_mem_cap(1u << 20);
  CHECK(mx_gen("kron:12:16", 0, &A, err, sizeof err) != 0 && strstr(err, "needs ") && strstr(err, "1048576 bytes (0.00 GB) available under the test cap"), "%s", err);
  CHECK(A.rowptr == NULL, "output not cleared");
  mx_io_set_mem_cap(0);
  CHECK(mx_gen("kron:12:16", 0, &A, err, sizeof err) == 0, "without the cap: %s", err);
  mx_io_csr_free(&A);
}

static void test_help(void)
{
  const char *h = mx_gen_help();
  const char *fam[] = {"kron:", "rgg:", "lap2d:", "lap2d9:", "lap3d:", "lap3d27:", "band:", "rand:", "chunglu:",
                       "chunglu-dir:", "blockdense:", "bipartite:", "lp:", "convdiff2d:", "convdiff3d:", ":v", "20240601",
                       "~deg", "~rcm", "~bfs"};
  for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) CHECK(strstr(h, fam[i]) != NULL, "help lacks '%s'", fam[i]);
}

int main(void)
{
  test_families();
  test_value_suffix();
  test_value_variants();
  test_stencil_values();
  test_kron_skew();
  test_lp_rows();
  test_orders();
  test_bad_specs();
  test_estimate();
  test_help();
  TEST_DONE("test_io_gen");
}
