/* test_core_features.c - features: exact values on a hand-worked 4x5 matrix (its values' features
 * with one value, column constants, row constants and distinct values), an empty and an
 * all-zero matrix, the name table, and order statistics against a qsort reference on a power-law
 * matrix. */
#include "core/mx_features.h"
#include "test_util.h"
#include <string.h>

static double fv(const mx_features *f, const char *name) {
  const int i = mx_feature_index(name);
  CHECK(i >= 0, "no feature named %s", name);
  return i >= 0 ? f->v[i] : NAN;
}

/* f[name] equals want to 1e-12 relative; an expression, so several can share one line. */
static int near(const mx_features *f, const char *name, double want, int line) {
  const double got = fv(f, name);
  const int ok = fabs(got - want) <= 1e-12 * (1.0 + fabs(want));
  if (!ok) fprintf(stderr, "line %d: %s = %.17g, want %.17g\n", line, name, got, want), t_failures++;
  return ok;
}
#define NEAR(f, name, want) near(f, name, (double)(want), __LINE__)

static void names(void) {
  for (int i = 0; i < MX_NFEATURES; i++) {
    CHECK(mx_feature_name(i) != NULL && mx_feature_index(mx_feature_name(i)) == i, "name %d", i);
    for (int j = 0; j < i; j++) CHECK(strcmp(mx_feature_name(i), mx_feature_name(j)) != 0, "names %d %d equal", i, j);
  }
  CHECK(mx_feature_name(-1) == NULL && mx_feature_name(MX_NFEATURES) == NULL, "name out of range");
  CHECK(mx_feature_index("nope") == -1 && mx_feature_index(NULL) == -1, "unknown name");
  CHECK(mx_feature_index("row_top300") >= 0 && mx_feature_index("col_hot90") >= 0 && mx_feature_index("density") >= 0,
        "table 2 names");
}

/* rows: {0,1,2}, {0}, {}, {0,3,4,1}; row lengths 3 1 0 4, column lengths 3 2 1 1 1. */
static void hand(void) {
  const int32_t p[] = {0, 3, 4, 4, 8}, j[] = {0, 1, 2, 0, 0, 3, 4, 1};
  const double v[] = {1, 1, 1, 1, 1, 1, 1, 1};
  const mx_csr A = {4, 5, p, j, v};
  mx_features f;
  CHECK(mx_features_compute(&A, &f) == MX_OK, "compute");
  NEAR(&f, "nrows", 4), NEAR(&f, "ncols", 5), NEAR(&f, "nnz", 8);
  NEAR(&f, "row_mean", 2), NEAR(&f, "row_std", sqrt(2.5)), NEAR(&f, "row_min", 0), NEAR(&f, "row_max", 4);
  NEAR(&f, "row_pratio", 4); /* min 0 -> max / max(min, 1) */
  NEAR(&f, "col_mean", 1.6), NEAR(&f, "col_std", 0.8), NEAR(&f, "col_min", 1), NEAR(&f, "col_max", 3);
  NEAR(&f, "col_pratio", 3);
  NEAR(&f, "row_top1", 2), NEAR(&f, "row_top2", 1.5), NEAR(&f, "row_top3", 0.5), NEAR(&f, "row_top4", 0);
  NEAR(&f, "row_top5", 0), NEAR(&f, "row_top300", 0);
  NEAR(&f, "col_top1", 1.875), NEAR(&f, "col_top2", 1.25), NEAR(&f, "col_top3", 0.625), NEAR(&f, "col_top5", 0.625);
  NEAR(&f, "col_top10", 0);
  const double rh[9] = {0.25, 0.25, 0.25, 0.25, 0.25, 0.5, 0.5, 0.5, 0.75};
  const double ch[9] = {0.2, 0.2, 0.2, 0.4, 0.4, 0.4, 0.6, 0.8, 1.0};
  for (int r = 0; r < 9; r++) {
    char name[32];
    snprintf(name, sizeof name, "row_hot%d", 10 * (r + 1));
    NEAR(&f, name, rh[r]);
    snprintf(name, sizeof name, "col_hot%d", 10 * (r + 1));
    NEAR(&f, name, ch[r]);
  }
  NEAR(&f, "density", 0.4), NEAR(&f, "row_cv", sqrt(2.5) / 2), NEAR(&f, "col_cv", 0.5);
  NEAR(&f, "row_gini", 0.4375), NEAR(&f, "col_gini", 0.25);
  NEAR(&f, "row_empty_frac", 0.25), NEAR(&f, "col_empty_frac", 0), NEAR(&f, "row_single_frac", 0.25);
  NEAR(&f, "col_single_frac", 0.6);
  NEAR(&f, "row_p50", 1), NEAR(&f, "row_p90", 4), NEAR(&f, "row_p99", 4);
  NEAR(&f, "col_p50", 1), NEAR(&f, "col_p90", 3), NEAR(&f, "col_p99", 3);
  NEAR(&f, "row_skew", 0), NEAR(&f, "col_skew", 0.432 / 0.512);
  NEAR(&f, "aspect", 0.8), NEAR(&f, "diag_frac", 0.25), NEAR(&f, "upper_frac", 0.375);
  NEAR(&f, "band_max", 0.6), NEAR(&f, "band_mean", 0.25), NEAR(&f, "row_span", 0.6);
  NEAR(&f, "row_long32_frac", 0), NEAR(&f, "row_adjdiff", 7.0 / 6.0);
  NEAR(&f, "ell8_fill", 0.25), NEAR(&f, "ell8_sorted_fill", 0.25);
  NEAR(&f, "chunk8_density", 0.2), NEAR(&f, "chunk8_sorted_density", 0.2);
  NEAR(&f, "val_row_eq_frac", 1), NEAR(&f, "val_col_eq_frac", 1); /* one value */
}

/* The value features on the hand matrix's pattern: rows {0,1,2}, {0}, {}, {0,3,4,1}. */
static void values(void) {
  const int32_t p[] = {0, 3, 4, 4, 8}, j[] = {0, 1, 2, 0, 0, 3, 4, 1};
  /* column constants (column c holds c + 1.5): rows' firsts are 1.5, 1.5, -, 1.5 */
  const double colconst[] = {1.5, 2.5, 3.5, 1.5, 1.5, 4.5, 5.5, 2.5};
  /* every value distinct */
  const double unique[] = {1, 2, 3, 4, 5, 6, 7, 8};
  /* row constants: 7 in row 0, -0.0 and +0.0 in row 3 (equal under ==) */
  const double rowconst[] = {7, 7, 7, 2, -0.0, 0.0, 0.0, -0.0};
  /* entries (position: value) equal to their column's first: col 0 at 0, 3, 4 (7, 2, -0): 1 of 3;
   * col 1 at 1, 7 (7, -0): 1; cols 2, 3, 4 one each: 3 -> 5 of 8 */
  mx_features f;
  mx_csr A = {4, 5, p, j, colconst};
  CHECK(mx_features_compute(&A, &f) == MX_OK, "column constants");
  NEAR(&f, "val_col_eq_frac", 1), NEAR(&f, "val_row_eq_frac", 3.0 / 8.0); /* the rows' firsts alone */
  A.val = unique;
  CHECK(mx_features_compute(&A, &f) == MX_OK, "unique");
  NEAR(&f, "val_row_eq_frac", 3.0 / 8.0), NEAR(&f, "val_col_eq_frac", 5.0 / 8.0); /* the firsts alone */
  A.val = rowconst;
  CHECK(mx_features_compute(&A, &f) == MX_OK, "row constants");
  NEAR(&f, "val_row_eq_frac", 1), NEAR(&f, "val_col_eq_frac", 5.0 / 8.0);
}

static void empty(void) {
  const int32_t p0[] = {0}, p3[] = {0, 0, 0, 0};
  const mx_csr Z = {0, 0, p0, NULL, NULL}, E = {3, 3, p3, NULL, NULL};
  mx_features f;
  CHECK(mx_features_compute(&Z, &f) == MX_OK, "0x0");
  for (int i = 0; i < MX_NFEATURES; i++) CHECK(f.v[i] == 0.0, "0x0: %s = %g", mx_feature_name(i), f.v[i]);
  CHECK(mx_features_compute(&E, &f) == MX_OK, "3x3 empty");
  NEAR(&f, "nrows", 3), NEAR(&f, "row_empty_frac", 1), NEAR(&f, "col_empty_frac", 1), NEAR(&f, "row_pratio", 0);
  NEAR(&f, "row_hot90", 0), NEAR(&f, "row_top1", 0), NEAR(&f, "row_gini", 0), NEAR(&f, "density", 0);
  for (int i = 0; i < MX_NFEATURES; i++) CHECK(isfinite(f.v[i]), "3x3 empty: %s not finite", mx_feature_name(i));
  const int32_t pb[] = {0, 2, 3};
  const int32_t jb[] = {0, 5, 1};
  const mx_csr B = {2, 3, pb, jb, NULL};
  CHECK(mx_features_compute(&B, &f) == MX_ERR_ARG, "bad column accepted");
  CHECK(mx_features_compute(&Z, NULL) == MX_ERR_ARG, "NULL f accepted");
}

static int cmp_desc(const void *a, const void *b) {
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x < y) - (x > y);
}

/* TopK, HotR, Gini, percentiles of one dimension against a sort-based reference. */
static void ref_dim(const mx_features *f, const char *pre, int32_t *len, int32_t n, int32_t nnz) {
  qsort(len, (size_t)n, sizeof(int32_t), cmp_desc);
  const double mean = (double)nnz / n;
  const int ks[10] = {1, 2, 3, 4, 5, 10, 50, 100, 200, 300};
  char name[32];
  for (int t = 0; t < 10; t++) {
    snprintf(name, sizeof name, "%s_top%d", pre, ks[t]);
    NEAR(f, name, ks[t] <= n ? len[ks[t] - 1] / mean : 0.0);
  }
  for (int r = 1; r <= 9; r++) {
    long cum = 0, i = 0;
    while (100.0 * cum < 10.0 * r * nnz) cum += len[i++];
    snprintf(name, sizeof name, "%s_hot%d", pre, 10 * r);
    NEAR(f, name, (double)i / n);
  }
  double g = 0.0; /* ascending rank i+1 holds len[n-1-i] */
  for (int32_t i = 0; i < n; i++) g += (double)(i + 1) * len[n - 1 - i];
  snprintf(name, sizeof name, "%s_gini", pre);
  CHECK(fabs(fv(f, name) - (2.0 * g / ((double)n * nnz) - (n + 1.0) / n)) < 1e-9, "%s", name);
  const int ps[3] = {50, 90, 99};
  for (int t = 0; t < 3; t++) {
    long rank = ((long)ps[t] * n + 99) / 100;
    snprintf(name, sizeof name, "%s_p%d", pre, ps[t]);
    NEAR(f, name, len[n - rank]);
  }
  double ell = 0.0;
  for (int32_t i = 0; i < n; i += 8) ell += 8.0 * len[i];
  if (pre[0] == 'r') NEAR(f, "ell8_sorted_fill", nnz / ell);
}

static void reference(void) {
  t_spec s = {3001, 2999, 40000, 3, 2.5, 5, 0, 2, 1, 0.02, 4242};
  t_csr A = t_random(&s);
  const mx_csr V = t_view(&A);
  mx_features f;
  CHECK(mx_features_compute(&V, &f) == MX_OK, "compute");
  int32_t *rl = malloc((size_t)A.nrows * sizeof(int32_t)), *cl = calloc((size_t)A.ncols, sizeof(int32_t));
  for (int32_t i = 0; i < A.nrows; i++) rl[i] = A.rowptr[i + 1] - A.rowptr[i];
  for (int32_t k = 0; k < A.nnz; k++) cl[A.colidx[k]]++;
  ref_dim(&f, "row", rl, A.nrows, A.nnz);
  ref_dim(&f, "col", cl, A.ncols, A.nnz);
  NEAR(&f, "nnz", A.nnz);
  free(rl);
  free(cl);
  t_csr_free(&A);
}

/* mx_features_from_counts, what the GPU path finishes its counts with: bad arguments refused; the
 * counts of the hand matrix's shape give what mx_features_compute gives (a 2x3 matrix, rows 2 and 1
 * long, columns 1, 1, 1 long, entries (0,0), (0,2), (1,1)). */
static void from_counts(void) {
  const int32_t rl[] = {1, 2}, cl[] = {1}, bad_order[] = {2, 1}, bad_sum[] = {1, 3};
  const int64_t rc[] = {1, 1}, cc[] = {3}, bad_count[] = {2, 0};
  mx_feature_counts c = {0};
  mx_features f, g;
  CHECK(mx_features_from_counts(NULL, &f) == MX_ERR_ARG && mx_features_from_counts(&c, NULL) == MX_ERR_ARG, "NULL refused");
  c.nrows = 2, c.ncols = 3, c.nnz = 3;
  CHECK(mx_features_from_counts(&c, &f) == MX_ERR_ARG, "rows without a histogram refused");
  c.cols = (mx_length_bins){cl, cc, 1};
  c.rows = (mx_length_bins){bad_order, rc, 2};
  CHECK(mx_features_from_counts(&c, &f) == MX_ERR_ARG, "bins not ascending refused");
  c.rows = (mx_length_bins){rl, bad_count, 2};
  CHECK(mx_features_from_counts(&c, &f) == MX_ERR_ARG, "an empty bin refused");
  c.rows = (mx_length_bins){bad_sum, rc, 2};
  CHECK(mx_features_from_counts(&c, &f) == MX_ERR_ARG, "lengths adding up to more than nnz refused");
  c.rows = (mx_length_bins){rl, rc, 1};
  CHECK(mx_features_from_counts(&c, &f) == MX_ERR_ARG, "counts adding up to fewer than nrows refused");
  c.rows = (mx_length_bins){rl, rc, 2};
  c.diag = 2, c.upper = 1, c.band_max = 2, c.band_sum = 2, c.nonempty_rows = 2, c.span_sum = 3 + 1;
  c.long32_nnz = 0, c.adj_sum = 1, c.ell8_cells = 16, c.chunk8_distinct = 3, c.chunk8_sorted_distinct = 3;
  c.row_first_eq = 4;
  CHECK(mx_features_from_counts(&c, &f) == MX_ERR_ARG, "more equal values than entries refused");
  c.row_first_eq = 3, c.col_first_eq = -1;
  CHECK(mx_features_from_counts(&c, &f) == MX_ERR_ARG, "a negative value count refused");
  c.col_first_eq = 3;
  CHECK(mx_features_from_counts(&c, &f) == MX_OK, "counts accepted");
  const int32_t p[] = {0, 2, 3}, j[] = {0, 2, 1};
  const double v[] = {1, 1, 1};
  const mx_csr A = {2, 3, p, j, v};
  CHECK(mx_features_compute(&A, &g) == MX_OK, "2x3");
  for (int i = 0; i < MX_NFEATURES; i++)
    CHECK(memcmp(&f.v[i], &g.v[i], sizeof(double)) == 0, "from counts vs compute: %s %.17g vs %.17g", mx_feature_name(i), f.v[i], g.v[i]);
}

int main(void) {
  names();
  hand();
  values();
  empty();
  reference();
  from_counts();
  return t_report("test_core_features");
}
