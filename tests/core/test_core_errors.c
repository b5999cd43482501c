/* test_core_errors.c - argument errors (bad crux, bad CSR, bad mode), int32 limits, free/check on
 * zeroed and corrupted formats. */
#include "core/mx_core_internal.h"
#include "test_util.h"

static const int32_t Ap[] = {0, 2, 3}, Aj[] = {0, 2, 1};
static const double Ax[] = {1, 2, 3};

static void bad_crux(void) {
  const mx_csr A = {2, 3, Ap, Aj, Ax};
  const mx_crux bad[] = {{NAN, 0}, {0.5, NAN}, {-0.1, 0}, {0.5, -1e-300}, {1.0000001, 0.5}, {0.5, 2}, {INFINITY, 0},
                         {-INFINITY, 0}};
  mx_format F;
  for (size_t t = 0; t < sizeof bad / sizeof bad[0]; t++) {
    memset(&F, 0x5a, sizeof F);
    CHECK(mx_format_build(&A, bad[t], MX_MODE_AUTO, &F) == MX_ERR_ARG, "crux (%g,%g) accepted", bad[t].tau_c, bad[t].tau_r);
    CHECK(F.cold_rowptr == NULL && F.hot_row == NULL, "failed build leaves F zeroed");
    mx_format_free(&F); /* safe on the zeroed struct */
  }
  mx_crux c;
  CHECK(mx_crux_clamp((mx_crux){0.3, 0.8}, &c) == MX_OK && c.tau_c == 0.3 && c.tau_r == 0.3, "clamp tau_r");
  CHECK(mx_crux_clamp((mx_crux){0, 0}, &c) == MX_OK && mx_crux_clamp((mx_crux){1, 1}, &c) == MX_OK, "bounds valid");
  CHECK(mx_format_build(&A, (mx_crux){0.5, 0.5}, (mx_mode_request)7, &F) == MX_ERR_ARG, "bad mode accepted");
  CHECK(mx_format_build(&A, (mx_crux){0.5, 0.5}, MX_MODE_AUTO, NULL) == MX_ERR_ARG, "NULL F accepted");
  CHECK(mx_format_build(NULL, (mx_crux){0.5, 0.5}, MX_MODE_AUTO, &F) == MX_ERR_ARG, "NULL A accepted");
}

static void bad_csr(void) {
  mx_format F;
  const int32_t p_bad0[] = {1, 2, 3}, p_dec[] = {0, 3, 2}, j_out[] = {0, 3, 1}, j_neg[] = {0, -1, 1};
  const mx_csr cases[] = {{2, 3, p_bad0, Aj, Ax}, {2, 3, p_dec, Aj, Ax}, {2, 3, Ap, j_out, Ax},
                          {2, 3, Ap, j_neg, Ax},  {-1, 3, Ap, Aj, Ax},   {2, -3, Ap, Aj, Ax},
                          {2, 3, NULL, Aj, Ax},   {2, 3, Ap, NULL, Ax},  {2, 3, Ap, Aj, NULL}};
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++)
    CHECK(mx_format_build(&cases[t], (mx_crux){0.5, 0.5}, MX_MODE_AUTO, &F) == MX_ERR_ARG, "bad CSR %zu accepted", t);
}

static void limits(void) {
  CHECK(mx_fits_i32(0) && mx_fits_i32(INT32_MAX) && !mx_fits_i32((int64_t)INT32_MAX + 1) && !mx_fits_i32(-1), "fits");
  CHECK(mx_crux_target(0.0, 10) == 0 && mx_crux_target(1.0, 10) == 10 && mx_crux_target(0.25, 10) == 3, "target");
  CHECK(mx_crux_target(1.0, INT32_MAX) == INT32_MAX && mx_crux_target(0.5, 0) == 0, "target extremes");
  /* counts beyond int32 from a layout: 2^28 chunks of width 1 would need 2^31 SE slots */
  int32_t w = 1, ncl = 4;
  mx_hot_layout L = {0};
  L.nchunks = 1;
  L.chunk_width = &w;
  L.chunk_ncl = &ncl;
  CHECK(mx_hot_se_nslots(&L) == 8 && mx_hot_du_nblocks(&L) == 1, "layout counts");
  w = INT32_MAX / 8 + 1; /* one chunk with a row longer than INT32_MAX/8: 8*w overflows int32 */
  ncl = INT32_MAX;
  CHECK(!mx_fits_i32(mx_hot_se_nslots(&L)), "SE slot count must overflow");
  CHECK(!mx_fits_i32(mx_hot_du_nblocks(&L) * MX_BLOCK_COLS), "DU column count must overflow");
  mx_format F = {0};
  CHECK(mx_hot_se_encode(NULL, &L, &F) == MX_ERR_OVERFLOW, "SE encoder refuses the overflow");
  CHECK(mx_hot_du_encode(NULL, &L, &F) == MX_ERR_OVERFLOW, "DU encoder refuses the overflow");
  mx_format_free(&F);
}

/* A borrowed cold part is only valid as the identity of the whole input; an owned one needs its map. */
static void borrowed_consistency(void) {
  t_spec s = {64, 64, 600, 2, 2, 0, 0, 0, 0, 0.05, 78};
  t_csr A = t_random(&s);
  const mx_csr V = t_view(&A);
  mx_format B, F;
  CHECK(mx_format_build_borrow(&V, (mx_crux){0, 0}, MX_MODE_AUTO, &B) == MX_OK && B.cold_borrowed, "borrowed build");
  CHECK(mx_format_check(&B) == MX_OK, "valid borrowed format");
  B.cold_nnz--, B.hot_nnz++; /* a borrowed cold part that is not the whole input */
  CHECK(mx_format_check(&B) == MX_ERR_ARG, "borrowed part short of the input not detected");
  B.cold_nnz++, B.hot_nnz--;
  CHECK(mx_format_build(&V, (mx_crux){0, 0}, MX_MODE_AUTO, &F) == MX_OK && !F.cold_borrowed, "owned build");
  int32_t *map = F.cold_src;
  F.cold_src = NULL; /* an owned cold part without its gather map */
  CHECK(mx_format_check(&F) == MX_ERR_ARG, "missing gather map not detected");
  B.cold_src = map; /* a borrowed part with a map */
  CHECK(mx_format_check(&B) == MX_ERR_ARG, "borrowed part with a gather map not detected");
  B.cold_src = NULL;
  F.cold_src = map;
  mx_format_free(&B);
  mx_format_free(&F);
  t_csr_free(&A);
}

/* A corrupted copy of a valid format must fail mx_format_check. */
static void corrupt(void) {
  t_spec s = {64, 64, 600, 2, 2, 0, 0, 0, 0, 0.05, 77};
  t_csr A = t_random(&s);
  const mx_csr V = t_view(&A);
  mx_format F;
  for (int md = 1; md <= 2; md++) {
    CHECK(mx_format_build(&V, (mx_crux){0.9, 0.8}, (mx_mode_request)md, &F) == MX_OK, "build");
    CHECK(mx_format_check(&F) == MX_OK && F.hot_nnz > 0, "valid format");
    int32_t t = F.hot_row[0];
    F.hot_row[0] = F.hot_row[1]; /* duplicate hot row */
    CHECK(mx_format_check(&F) == MX_ERR_ARG, "duplicate hot row not detected");
    F.hot_row[0] = t;
    t = F.cold_src[0];
    F.cold_src[0] = F.cold_src[1]; /* gather map not a bijection */
    CHECK(mx_format_check(&F) == MX_ERR_ARG, "gather map duplicate not detected");
    F.cold_src[0] = t;
    t = F.cold_col[0];
    F.cold_col[0] = A.ncols; /* column out of range */
    CHECK(mx_format_check(&F) == MX_ERR_ARG, "cold column out of range not detected");
    F.cold_col[0] = t;
    if (F.mode == MX_HOT_DU) {
      const uint32_t b = F.du_bitmap[0];
      F.du_bitmap[0] ^= 1u << 31; /* popcount no longer matches valptr */
      CHECK(mx_format_check(&F) == MX_ERR_ARG, "bitmap corruption not detected");
      F.du_bitmap[0] = b;
    } else {
      const double v = F.se_val[F.se_nslots - 1];
      const int32_t c = F.se_col[F.se_nslots - 1];
      F.se_col[F.se_nslots - 1] = -1;
      F.se_val[F.se_nslots - 1] = 1.0; /* padding with a nonzero value */
      CHECK(mx_format_check(&F) == MX_ERR_ARG, "nonzero SE padding not detected");
      F.se_col[F.se_nslots - 1] = c;
      F.se_val[F.se_nslots - 1] = v;
    }
    F.crux.tau_r = 1.0, F.crux.tau_c = 0.5; /* tau_r > tau_c */
    CHECK(mx_format_check(&F) == MX_ERR_ARG, "crux order not detected");
    F.crux.tau_r = 0.8, F.crux.tau_c = 0.9;
    CHECK(mx_format_check(&F) == MX_OK, "restored format valid");
    mx_format_free(&F);
  }
  CHECK(mx_format_check(NULL) == MX_ERR_ARG, "check(NULL)");
  t_csr_free(&A);
}

int main(void) {
  bad_crux();
  bad_csr();
  limits();
  corrupt();
  borrowed_consistency();
  return t_report("test_core_errors");
}
