/* test_core_hot_pack.c - the SE hot region's packed values (mx_hot_pack.h) against an independent
 * count and the plain hot kernel.
 *
 * For every matrix x value family x crux (1,1), (0.6,0.4), (0,0), the format forced to SE: the
 * encoding is mx_hot_values_choose applied to a naive count over the HOT ENTRIES OF THE INPUT (the
 * reference crux selection of test_util.h and sorting, not the format's slots): one bit pattern, or
 * one per column; H->one and H->s hold those patterns bit for bit (0.0 for a column without a hot
 * entry); mx_hot_pack_add is bitwise mx_hot_add from the same random y (H NULL too); the whole
 * product mx_spmv_compressed with the cold part plain, in row-pattern form (where
 * mx_cold_rowpat_build holds it) and packed by AUTO is bitwise mx_spmv / mx_spmv_add (y == z too) and
 * within 1e-12 of a plain CSR reference; mx_hot_pack_bytes is the formula; free zeroes. DU formats
 * and formats without a hot part stay PLAIN. Then mx_hot_values_choose's table on hand-picked
 * arguments (one beats colconst and cold codes, cold codes forbid COLCONST, the 24/8 byte rule on
 * both sides of its threshold up to INT32_MAX columns), NULL arguments, and coverage: every
 * encoding taken, and column-constant values left PLAIN by the byte rule.
 * Matrices: random (uniform, power-law rows, empty rows, 0 rows, 1x1, tall, wide, a dense column,
 * duplicates), 2D/3D stencils, the real Matrix Market files of tests/data/matrices/real. Values: as
 * generated, all ones, column-constant (a_ij = 1/(entries of column j)), few, unique, -0.0
 * everywhere (one value), one column holding 0.0 and -0.0 (not column-constant), NaN/inf bit
 * patterns at random, one per column, and one NaN payload everywhere. */
#include "core/mx_hot_pack.h"
#include "core/mx_core_internal.h" /* mx_hot_add */
#include "io/mx_io.h"
#include "test_util.h"

static uint64_t bits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

static int bits_equal(const double *a, const double *b, int32_t n) { return n == 0 || memcmp(a, b, (size_t)n * 8) == 0; }

static double *vec_copy(const double *v, int32_t n) {
  double *w = malloc(((size_t)n + 1) * 8);
  if (n) memcpy(w, v, (size_t)n * 8);
  return w;
}

/* ---- value families ------------------------------------------------------------------------------ */

typedef enum { V_KEEP, V_ONES, V_PAGERANK, V_FEW, V_UNIQUE, V_NEG_ZERO, V_SIGNED_ZERO_COL, V_SPECIAL, V_SPECIAL_COL, V_NAN_ONE, V_COUNT } t_values;
static const char *value_names[V_COUNT] = {"generated", "ones", "pagerank", "few", "unique", "-0.0", "+-0 column", "special", "special per column", "one NaN"};

static const uint64_t NAN1 = 0x7ff8000000000001ull, NAN2 = 0xfff4000000000abcull; /* quiet, signalling */

/* Replace A's values by family how (see the file comment). */
static void make_values(t_csr *A, t_values how, uint64_t seed) {
  t_rng r = {seed};
  int32_t *cnt = calloc((size_t)A->ncols + 1, 4);
  for (int32_t p = 0; p < A->nnz; p++) cnt[A->colidx[p]]++;
  double special[7] = {0.0, -0.0, 0, 0, INFINITY, -INFINITY, 1.0};
  memcpy(&special[2], &NAN1, 8);
  memcpy(&special[3], &NAN2, 8);
  int32_t zero_col = -1, k = 0;
  for (int32_t j = 0; j < A->ncols && zero_col < 0; j++)
    if (cnt[j] >= 2) zero_col = j;
  for (int32_t p = 0; p < A->nnz; p++) {
    const int32_t j = A->colidx[p];
    switch (how) {
      case V_ONES: A->val[p] = 1.0; break;
      case V_PAGERANK: A->val[p] = 1.0 / cnt[j]; break;
      case V_FEW: A->val[p] = (double)t_below(&r, 5) - 2.0; break;
      case V_UNIQUE: A->val[p] = 2.0 * t_unif(&r) - 1.0; break;
      case V_NEG_ZERO: A->val[p] = -0.0; break;
      case V_SIGNED_ZERO_COL: A->val[p] = j == zero_col ? ((k++ % 2) ? 0.0 : -0.0) : 0.5 * j; break;
      case V_SPECIAL: A->val[p] = special[t_below(&r, 7)]; break;
      case V_SPECIAL_COL: A->val[p] = special[j % 7]; break;
      case V_NAN_ONE: memcpy(&A->val[p], &NAN2, 8); break;
      default: break;
    }
  }
  free(cnt);
}

/* ---- the naive count ----------------------------------------------------------------------------- */

typedef struct {
  int32_t nhot; /* hot entries of the input */
  int one, colconst;
  uint64_t one_bits;
  uint64_t *s; /* ncols: each column's pattern (0 without a hot entry); meaningful when colconst */
} t_ref;

static int cmp_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static int cmp_pair(const void *a, const void *b) {
  const uint64_t *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The hot entries of A at crux c by the reference selection; their bit patterns sorted (distinct
 * count) and their (column, pattern) pairs sorted (a column with two patterns breaks colconst). */
static t_ref ref_count(const t_csr *A, mx_crux c) {
  t_ref R = {0, 0, 1, 0, calloc((size_t)A->ncols + 1, 8)};
  uint8_t *hot = calloc((size_t)A->nnz + 1, 1);
  int32_t hc, hr;
  t_ref_select(A, c, hot, &hc, &hr);
  uint64_t *b = malloc(((size_t)A->nnz + 1) * 8), *pr = malloc(((size_t)A->nnz + 1) * 16);
  for (int32_t p = 0; p < A->nnz; p++)
    if (hot[p]) b[R.nhot] = bits(A->val[p]), pr[2 * R.nhot] = (uint64_t)A->colidx[p], pr[2 * R.nhot + 1] = b[R.nhot], R.nhot++;
  qsort(b, (size_t)R.nhot, 8, cmp_u64);
  qsort(pr, (size_t)R.nhot, 16, cmp_pair);
  int32_t ndistinct = 0;
  for (int32_t t = 0; t < R.nhot; t++) ndistinct += t == 0 || b[t] != b[t - 1];
  R.one = ndistinct == 1;
  R.one_bits = R.nhot ? b[0] : 0;
  for (int32_t t = 0; t < R.nhot; t++) {
    if (t > 0 && pr[2 * t] == pr[2 * t - 2] && pr[2 * t + 1] != pr[2 * t - 1]) R.colconst = 0;
    R.s[pr[2 * t]] = pr[2 * t + 1];
  }
  free(hot), free(b), free(pr);
  return R;
}

/* ---- checks -------------------------------------------------------------------------------------- */

static int covered[3];       /* formats by encoding taken (PLAIN, DICT0, COLCONST: indices 0, 1, 2) */
static int colconst_lost = 0; /* column-constant (not one value) hot regions left PLAIN by the byte rule */
static int nan_products = 0;  /* hot products compared with a NaN in the hot values */

static int enc_index(mx_val_enc e) { return e == MX_VAL_DICT0 ? 1 : e == MX_VAL_COLCONST ? 2 : 0; }

static int is_zeroed(const mx_hot_pack *H) { return H->enc == MX_VAL_PLAIN && bits(H->one) == 0 && H->ncols == 0 && !H->s; }

/* y = A x + z by compressed (R, P, H) is bitwise mx_spmv / mx_spmv_add of F (y == z too). */
static void check_whole(const mx_format *F, const mx_cold_rowpat *R, const mx_cold_pack *P, const mx_hot_pack *H, const double *x,
                        const double *z, const double *ax, const double *axz, const char *what, const char *form) {
  const int32_t m = F->nrows;
  t_rng r = {77};
  double *y = t_vec(&r, m), *w = vec_copy(z, m);
  mx_spmv_compressed(F, R, P, H, x, NULL, y);
  CHECK(bits_equal(y, ax, m), "%s, cold %s: y = A x not bitwise mx_spmv", what, form);
  mx_spmv_compressed(F, R, P, H, x, z, y);
  CHECK(bits_equal(y, axz, m), "%s, cold %s: y = A x + z not bitwise mx_spmv_add", what, form);
  mx_spmv_compressed(F, R, P, H, x, w, w);
  CHECK(bits_equal(w, axz, m), "%s, cold %s: z = A x + z (in place) not bitwise mx_spmv_add", what, form);
  free(y), free(w);
}

/* The hot kernel and every whole product of F with H (plain, row-pattern and packed cold parts). */
static void check_products(const mx_format *F, const mx_hot_pack *H, const t_csr *A, const char *what) {
  const int32_t m = F->nrows, n = F->ncols;
  t_rng r = {1000 + (uint64_t)A->nnz};
  double *x = t_vec(&r, n), *z = t_vec(&r, m), *y0 = t_vec(&r, m);
  double *ya = vec_copy(y0, m), *yb = vec_copy(y0, m), *yc = vec_copy(y0, m), *ax = t_vec(&r, m), *axz = t_vec(&r, m), *ref = t_vec(&r, m);
  mx_hot_add(F, x, ya);
  mx_hot_pack_add(F, H, x, yb);
  mx_hot_pack_add(F, NULL, x, yc);
  CHECK(bits_equal(ya, yb, m), "%s: mx_hot_pack_add not bitwise mx_hot_add", what);
  CHECK(bits_equal(ya, yc, m), "%s: mx_hot_pack_add with H NULL not bitwise mx_hot_add", what);
  if (F->hot_nnz > 0 && H->enc != MX_VAL_PLAIN)
    for (int32_t i = 0; i < m; i++)
      if (isnan(ya[i])) {
        nan_products++;
        break;
      }
  mx_spmv(F, x, ax);
  mx_spmv_add(F, x, z, axz);
  t_ref_spmv(A, x, ref);
  CHECK(t_relerr(ax, ref, m) <= 1e-12, "%s: mx_spmv err %g", what, t_relerr(ax, ref, m));
  check_whole(F, NULL, NULL, H, x, z, ax, axz, what, "plain");
  check_whole(F, NULL, NULL, NULL, x, z, ax, axz, what, "plain, H NULL");
  const mx_csr C = {F->nrows, F->ncols, F->cold_rowptr, F->cold_col, F->cold_val};
  mx_cold_rowpat R;
  if (mx_cold_rowpat_build(&C, &R) == MX_OK) {
    check_whole(F, &R, NULL, H, x, z, ax, axz, what, "row patterns");
    mx_cold_rowpat_free(&R);
  }
  const mx_pack_request rq = mx_pack_request_of(MX_COMPRESS_AUTO);
  mx_cold_pack P;
  const mx_status st = mx_cold_pack_build(&C, &rq, &P);
  CHECK(st == MX_OK, "%s: cold pack build %d", what, (int)st);
  if (st == MX_OK) {
    check_whole(F, NULL, &P, H, x, z, ax, axz, what, "packed");
    mx_cold_pack_free(&P);
  }
  free(x), free(z), free(y0), free(ya), free(yb), free(yc), free(ax), free(axz), free(ref);
}

/* H against the naive count on A at crux c; its bytes. */
static void check_encoding(const mx_format *F, const mx_hot_pack *H, const t_csr *A, mx_crux c, const char *what) {
  t_ref R = ref_count(A, c);
  CHECK(R.nhot == F->hot_nnz, "%s: %d hot entries, the format has %d", what, R.nhot, F->hot_nnz);
  const int se = F->mode == MX_HOT_SE && R.nhot > 0;
  const mx_val_enc want = se ? mx_hot_values_choose(R.one, R.colconst, 0, A->ncols, F->se_nslots) : MX_VAL_PLAIN;
  CHECK(H->enc == want, "%s: encoding %s, the count gives %s (one %d colconst %d, %d cols, %d slots)", what, mx_val_enc_name(H->enc),
        mx_val_enc_name(want), R.one, R.colconst, A->ncols, F->se_nslots);
  CHECK(H->ncols == F->ncols, "%s: H->ncols %d", what, H->ncols);
  if (H->enc == MX_VAL_DICT0) CHECK(bits(H->one) == R.one_bits, "%s: one %016llx, expected %016llx", what, (unsigned long long)bits(H->one), (unsigned long long)R.one_bits);
  if (H->enc == MX_VAL_COLCONST) CHECK(H->s && memcmp(H->s, R.s, (size_t)A->ncols * 8) == 0, "%s: column constants differ (bits)", what);
  else CHECK(!H->s, "%s: s allocated for %s", what, mx_val_enc_name(H->enc));
  const size_t slots = (size_t)F->se_nslots, b = F->mode != MX_HOT_SE ? 0
                                                : H->enc == MX_VAL_DICT0 ? 4 * slots + 8
                                                : H->enc == MX_VAL_COLCONST ? 4 * slots + 24 * (size_t)A->ncols
                                                                            : 12 * slots;
  CHECK(mx_hot_pack_bytes(F, H) == b, "%s: bytes %zu, formula %zu", what, mx_hot_pack_bytes(F, H), b);
  CHECK(mx_hot_pack_bytes(F, NULL) == (F->mode == MX_HOT_SE ? 12 * slots : 0), "%s: bytes with H NULL", what);
  covered[enc_index(H->enc)] += se;
  colconst_lost += se && !R.one && R.colconst && H->enc == MX_VAL_PLAIN;
  free(R.s);
}

/* Everything on A with values how at each crux, forced SE (and forced DU at (1,1)). */
static const mx_crux cruxes[] = {{1, 1}, {0.6, 0.4}, {0, 0}};

static void check_matrix(const t_csr *A0, t_values how, const char *name) {
  t_csr A = *A0;
  A.val = vec_copy(A0->val, A0->nnz);
  make_values(&A, how, 5);
  const mx_csr V = t_view(&A);
  for (int g = 0; g < 3; g++)
    for (int du = 0; du < (g == 0 ? 2 : 1); du++) {
      char what[320];
      snprintf(what, sizeof what, "%s %dx%d nnz %d values %s crux (%g,%g)%s", name, A.nrows, A.ncols, A.nnz, value_names[how], cruxes[g].tau_c,
               cruxes[g].tau_r, du ? " DU" : "");
      mx_format F;
      if (mx_format_build(&V, cruxes[g], du ? MX_MODE_DU : MX_MODE_SE, &F) != MX_OK) {
        CHECK(0, "%s: format build", what);
        continue;
      }
      CHECK(F.hot_nnz == 0 || F.mode == (du ? MX_HOT_DU : MX_HOT_SE), "%s: mode %d", what, (int)F.mode);
      mx_hot_pack H;
      memset(&H, 0xab, sizeof H); /* garbage: the build must set every field */
      const mx_status st = mx_hot_pack_build(&F, &H);
      CHECK(st == MX_OK, "%s: build returned %d", what, (int)st);
      if (st == MX_OK) {
        check_encoding(&F, &H, &A, cruxes[g], what);
        if (g == 0 && !du && A.nnz > 0 && (how == V_ONES || how == V_NEG_ZERO || how == V_NAN_ONE))
          CHECK(H.enc == MX_VAL_DICT0, "%s: one value everywhere but %s", what, mx_val_enc_name(H.enc));
        if (g == 0 && how == V_SIGNED_ZERO_COL && A.nnz > A.ncols) /* some column has 2 entries: both zeros in it */
          CHECK(H.enc != MX_VAL_COLCONST, "%s: 0.0 and -0.0 in one column taken as column-constant", what);
        check_products(&F, &H, &A, what);
        mx_hot_pack_free(&H);
        CHECK(is_zeroed(&H), "%s: free does not zero", what);
      }
      mx_format_free(&F);
    }
  free(A.val);
}

static void check_all_values(const t_csr *A, const char *name) {
  for (int v = 0; v < V_COUNT; v++) check_matrix(A, (t_values)v, name);
}

/* ---- the choice and the arguments ---------------------------------------------------------------- */

static void check_choose(void) {
  static const struct {
    int one, colconst, cold_codes;
    int32_t ncols;
    int64_t nslots;
    mx_val_enc want;
  } t[] = {
      {1, 0, 0, 10, 5, MX_VAL_DICT0},          /* one value: whatever the bytes */
      {1, 1, 0, 10, 1000, MX_VAL_DICT0},       /* one wins over colconst */
      {1, 1, 1, 10, 1000, MX_VAL_DICT0},       /* cold codes do not forbid DICT0 */
      {1, 0, 1, 1000000, 1, MX_VAL_DICT0},
      {0, 1, 0, 10, 1000, MX_VAL_COLCONST},
      {0, 1, 1, 10, 1000, MX_VAL_PLAIN},       /* cold codes forbid COLCONST */
      {0, 0, 0, 10, 1000, MX_VAL_PLAIN},
      {0, 0, 1, 10, 1000, MX_VAL_PLAIN},
      {0, 1, 0, 10, 31, MX_VAL_COLCONST},      /* 240 < 248 */
      {0, 1, 0, 10, 30, MX_VAL_PLAIN},         /* 240 = 240: not fewer */
      {0, 1, 0, 10, 29, MX_VAL_PLAIN},
      {0, 1, 0, 1, 4, MX_VAL_COLCONST},        /* 24 < 32 */
      {0, 1, 0, 1, 3, MX_VAL_PLAIN},           /* 24 = 24 */
      {0, 1, 0, 0, 1, MX_VAL_COLCONST},        /* 0 < 8 */
      {0, 1, 0, 0, 0, MX_VAL_PLAIN},           /* 0 = 0 */
      {0, 1, 0, INT32_MAX, 3 * (int64_t)INT32_MAX + 1, MX_VAL_COLCONST}, /* exact in double */
      {0, 1, 0, INT32_MAX, 3 * (int64_t)INT32_MAX, MX_VAL_PLAIN},
      {0, 1, 1, INT32_MAX, 3 * (int64_t)INT32_MAX + 1, MX_VAL_PLAIN},
  };
  for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
    const mx_val_enc e = mx_hot_values_choose(t[k].one, t[k].colconst, t[k].cold_codes, t[k].ncols, t[k].nslots);
    CHECK(e == t[k].want, "choose(one %d, colconst %d, cold_codes %d, ncols %d, nslots %lld) = %s, expected %s", t[k].one, t[k].colconst,
          t[k].cold_codes, t[k].ncols, (long long)t[k].nslots, mx_val_enc_name(e), mx_val_enc_name(t[k].want));
  }
}

static void check_arguments(void) {
  mx_hot_pack H;
  memset(&H, 0xab, sizeof H);
  CHECK(mx_hot_pack_build(NULL, &H) == MX_ERR_ARG && H.enc == MX_VAL_PLAIN && !H.s, "NULL format: not refused, or H not plain");
  mx_format F;
  memset(&F, 0, sizeof F);
  CHECK(mx_hot_pack_build(&F, NULL) == MX_ERR_ARG, "NULL H not refused");
  mx_hot_pack_free(NULL);
  memset(&H, 0, sizeof H);
  mx_hot_pack_free(&H); /* a zeroed one */
  CHECK(is_zeroed(&H), "free of a zeroed H");
}

/* ---- matrices ------------------------------------------------------------------------------------ */

static void check_random(void) {
  /* m, n, nz, row_pw, col_pw, skip_row, skip_col, dense_rows, dense_cols, dup, seed */
  static const struct {
    const char *name;
    t_spec s;
  } cases[] = {
      {"0x0", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
      {"0 rows", {0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 2}},
      {"no nnz", {40, 30, 0, 0, 0, 0, 0, 0, 0, 0, 3}},
      {"1x1", {1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 4}},
      {"uniform", {300, 300, 2400, 0, 0, 0, 0, 0, 0, 0, 5}},
      {"uniform dense-ish", {60, 40, 1500, 0, 0, 0, 0, 0, 0, 0, 6}},
      {"power-law rows", {2000, 500, 12000, 3, 0, 0, 0, 0, 0, 0, 7}},
      {"power-law both", {1000, 1000, 6000, 3, 3, 0, 0, 0, 0, 0, 8}},
      {"empty rows and columns", {200, 150, 1500, 0, 0, 3, 4, 0, 0, 0, 9}},
      {"tall", {900, 40, 3000, 0, 0, 0, 0, 0, 0, 0, 10}},
      {"wide", {40, 900, 3000, 0, 0, 0, 0, 0, 0, 0, 11}},
      {"dense column", {100, 50, 300, 0, 0, 0, 0, 0, 1, 0, 12}},
      {"duplicates", {120, 80, 900, 2, 2, 0, 0, 0, 0, 0.3, 13}},
  };
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
    t_csr A = t_random(&cases[t].s);
    check_all_values(&A, cases[t].name);
    t_csr_free(&A);
  }
}

static void check_gen(const char *spec) {
  t_csr A;
  if (t_gen(spec, &A)) return;
  check_all_values(&A, spec);
  t_csr_free(&A);
}

static void check_real(const char *path) {
  t_csr A;
  if (t_read_mtx(path, &A)) {
    printf("skipped %s (cannot read)\n", path);
    return;
  }
  check_all_values(&A, strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
  t_csr_free(&A);
}

int main(int argc, char **argv) {
  check_choose();
  check_arguments();
  check_random();
  check_gen("lap2d:1");
  check_gen("lap2d:20");
  check_gen("lap3d:6");
  t_for_each_real(argc, argv, __FILE__, check_real);
  printf("SE hot regions: %d plain, %d dict0, %d colconst; %d column-constant left plain by the byte rule; %d NaN products\n", covered[0],
         covered[1], covered[2], colconst_lost, nan_products);
  CHECK(covered[0] > 0 && covered[1] > 0 && covered[2] > 0 && colconst_lost > 0 && nan_products > 0, "coverage: an outcome never taken");
  return t_report("test_core_hot_pack");
}
