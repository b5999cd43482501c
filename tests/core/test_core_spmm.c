/* test_core_spmm.c - mx_spmm and mx_spmm_t (k columns at once) against the SpMV of each column on
 * random matrices of many shapes, every crux of the grid and hot mode: column c bit for bit
 * mx_spmv / mx_spmv_t of column c, within 1e-12 of the plain CSR reference, leading dimensions
 * above the rows with the padding of C left as it was; k = 1, 2, 3, 8, 9, 17 (blocks of 8 and
 * their remainders). The build's cold_diagonals (which way the SpMM takes) on a 5-point stencil
 * (1, column-major blocks) and a random matrix (0, panels), the stencil through the same checks. */
#include "test_util.h"

#define POISON (-12345.678)

/* B with ldb > rows (padding NaN: never read); C poisoned, ldc > rows. */
static void check_one(const mx_format *F, const t_csr *A, int32_t k, int transpose, const char *what) {
  const int32_t rin = transpose ? F->nrows : F->ncols, rout = transpose ? F->ncols : F->nrows;
  const int64_t ldb = rin + 3, ldc = rout + 5;
  t_rng r = {(uint64_t)k * 7919u + (uint64_t)transpose};
  double *B = malloc(sizeof(double) * (size_t)(ldb * k + 1)), *C = malloc(sizeof(double) * (size_t)(ldc * k + 1));
  double *y = malloc(sizeof(double) * (size_t)(rout + 1)), *yr = malloc(sizeof(double) * (size_t)(rout + 1));
  for (int64_t p = 0; p < ldb * k; p++) B[p] = (p % ldb) < rin ? 2.0 * t_unif(&r) - 1.0 : NAN;
  for (int64_t p = 0; p < ldc * k; p++) C[p] = POISON;
  const mx_status st = transpose ? mx_spmm_t(F, k, B, ldb, C, ldc) : mx_spmm(F, k, B, ldb, C, ldc);
  CHECK(st == MX_OK, "%s k=%d %s: status %d", what, k, transpose ? "A'B" : "AB", (int)st);
  int bitwise = 1, padding = 1;
  double err = 0.0;
  for (int32_t c = 0; c < k; c++) {
    if (transpose) mx_spmv_t(F, B + c * ldb, y), t_ref_spmv_t(A, B + c * ldb, yr);
    else mx_spmv(F, B + c * ldb, y), t_ref_spmv(A, B + c * ldb, yr);
    if (rout > 0 && memcmp(y, C + c * ldc, sizeof(double) * (size_t)rout)) bitwise = 0;
    const double e = t_relerr(C + c * ldc, yr, rout);
    if (e > err) err = e;
    for (int64_t i = rout; i < ldc; i++)
      if (C[c * ldc + i] != POISON) padding = 0;
  }
  CHECK(bitwise, "%s k=%d %s: a column differs from the SpMV of that column", what, k, transpose ? "A'B" : "AB");
  CHECK(err <= 1e-12, "%s k=%d %s: relative error %g vs the CSR reference", what, k, transpose ? "A'B" : "AB", err);
  CHECK(padding, "%s k=%d %s: the padding rows of C were written", what, k, transpose ? "A'B" : "AB");
  free(B), free(C), free(y), free(yr);
}

static void check_matrix(const t_csr *A, const char *name) {
  static const int32_t ks[] = {1, 2, 3, 8, 9, 17};
  static const mx_mode_request modes[] = {MX_MODE_AUTO, MX_MODE_DU, MX_MODE_SE};
  const mx_csr a = t_view(A);
  for (int g = 0; g < T_NGRID; g++)
    for (int md = 0; md < 3; md++) {
      mx_format F;
      char what[160];
      snprintf(what, sizeof what, "%s crux (%g,%g) mode %d", name, t_grid[g].tau_c, t_grid[g].tau_r, (int)modes[md]);
      if (mx_format_build(&a, t_grid[g], modes[md], &F) != MX_OK) {
        CHECK(0, "%s: build failed", what);
        continue;
      }
      for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++)
        for (int t = 0; t < 2; t++) check_one(&F, A, ks[q], t, what);
      mx_format_free(&F);
    }
}

/* cold_diagonals as the build sets it: 1 on a stencil, 0 on a random pattern */
static void check_diagonals(void) {
  const t_spec uniform = {300, 300, 3000, 0, 0, 0, 0, 0, 0, 0, 41};
  t_csr lap, rnd = t_random(&uniform);
  if (t_gen("lap2d:20", &lap)) {
    CHECK(0, "lap2d:20: generator failed");
    t_csr_free(&rnd);
    return;
  }
  const mx_csr a = t_view(&lap), r = t_view(&rnd);
  mx_format F, G;
  CHECK(mx_format_build(&a, (mx_crux){0.0, 0.0}, MX_MODE_AUTO, &F) == MX_OK && F.cold_diagonals == 1,
        "lap2d:20: cold_diagonals 1 (%d)", F.cold_diagonals);
  CHECK(mx_format_build(&r, (mx_crux){0.0, 0.0}, MX_MODE_AUTO, &G) == MX_OK && G.cold_diagonals == 0,
        "random: cold_diagonals 0 (%d)", G.cold_diagonals);
  mx_format_free(&F), mx_format_free(&G);
  check_matrix(&lap, "lap2d:20");
  t_csr_free(&lap), t_csr_free(&rnd);
}

int main(void) {
  /* m, n, nz, row_pw, col_pw, skip_row, skip_col, dense_rows, dense_cols, dup, seed */
  static const struct {
    const char *name;
    t_spec s;
  } cases[] = {
      {"0x5", {0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 2}},
      {"5x0", {5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3}},
      {"1x1", {1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 4}},
      {"no nnz", {40, 30, 0, 0, 0, 0, 0, 0, 0, 0, 7}},
      {"uniform", {100, 100, 500, 0, 0, 0, 0, 0, 0, 0, 8}},
      {"17 rows", {17, 40, 90, 0, 0, 0, 0, 0, 0, 0, 13}},
      {"wide", {50, 300, 900, 0, 0, 0, 0, 0, 0, 0, 16}},
      {"tall", {300, 50, 900, 0, 0, 0, 0, 0, 0, 0, 17}},
      {"empty rows+cols", {200, 150, 1200, 0, 0, 3, 4, 0, 0, 0, 20}},
      {"dense both", {64, 64, 100, 0, 0, 5, 0, 1, 1, 0, 23}},
      {"power law", {2000, 2000, 20000, 3, 3, 0, 0, 0, 0, 0, 25}},
      {"duplicates", {100, 60, 800, 2, 2, 0, 0, 0, 0, 0.3, 28}},
      {"dense 33x17", {33, 17, 0, 0, 0, 0, 0, 33, 0, 0, 30}},
  };
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
    t_csr A = t_random(&cases[t].s);
    check_matrix(&A, cases[t].name);
    t_csr_free(&A);
  }
  check_diagonals();
  return t_report("test_core_spmm");
}
