/* test_core_layout.c - exact arrays of small hand-worked examples (selection, chunks, DU bitmaps,
 * value order, SE slots, cold CSR, gather maps, costs, duplicates). */
#include "test_util.h"

#define EQ_ARR(a, b, n, what)                                                                                          \
  do {                                                                                                                 \
    int _ok = 1;                                                                                                       \
    for (int _t = 0; _t < (n); _t++) _ok &= (a)[_t] == (b)[_t];                                                        \
    CHECK(_ok, "%s", what);                                                                                            \
  } while (0)

/* 4x6, entries in input order (row, col, val):
 *   (0,1,1) (0,4,2) | (1,1,3) (1,2,4) (1,4,5) (1,5,6) | (2,0,7) | (3,4,8) (3,1,9)
 * column lengths c0..c5 = 1 3 1 0 3 1, sorted: c1 c4 c0 c2 c5 c3. */
static const int32_t Ap[] = {0, 2, 6, 7, 9}, Aj[] = {1, 4, 1, 2, 4, 5, 0, 4, 1};
static const double Ax[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};

static void crux_1_1(void) {
  const mx_csr A = {4, 6, Ap, Aj, Ax};
  mx_format F;
  CHECK(mx_format_build(&A, (mx_crux){1, 1}, MX_MODE_AUTO, &F) == MX_OK, "build (1,1)");
  CHECK(F.hot_ncols == 5 && F.hot_nrows == 4 && F.hot_nnz == 9 && F.nchunks == 1 && F.cold_nnz == 0, "(1,1) sizes");
  /* rows by hot length: r1 (4), r0 (2), r3 (2), r2 (1) */
  const int32_t hot_row[8] = {1, 0, 3, 2, -1, -1, -1, -1};
  EQ_ARR(F.hot_row, hot_row, 8, "(1,1) hot_row");
  /* DU cost 32 + 8 + 24*2 + 4 + 8*9 = 164 < SE cost 32 + 8 + 12*32 = 424 */
  size_t du, se;
  mx_format_hot_costs(&F, &du, &se);
  CHECK(du == 164 && se == 424, "(1,1) costs %zu %zu", du, se);
  CHECK(F.mode == MX_HOT_DU && F.du_nblocks == 2, "(1,1) auto -> DU with 2 blocks");
  /* local columns c0 c1 c2 c4 | c5; slots: r1->0, r0->1, r3->2, r2->3 */
  const int32_t chunkptr[2] = {0, 2}, col[8] = {0, 1, 2, 4, 5, -1, -1, -1}, valptr[3] = {0, 8, 9};
  const uint32_t bitmap[2] = {(1u << 1) | (1u << 2) | (1u << 3) | (1u << 5) | (1u << 7) | (1u << 9) | (1u << 11) | (1u << 12), 1u};
  const double val[9] = {3, 4, 5, 1, 2, 9, 8, 7, 6};
  const int32_t src[9] = {2, 3, 4, 0, 1, 8, 7, 6, 5};
  EQ_ARR(F.du_chunkptr, chunkptr, 2, "(1,1) du_chunkptr");
  EQ_ARR(F.du_bitmap, bitmap, 2, "(1,1) du_bitmap");
  EQ_ARR(F.du_col, col, 8, "(1,1) du_col");
  EQ_ARR(F.du_valptr, valptr, 3, "(1,1) du_valptr");
  EQ_ARR(F.du_val, val, 9, "(1,1) du_val");
  EQ_ARR(F.hot_src, src, 9, "(1,1) hot_src");
  /* the value of bit b is du_val[valptr + popcount(bitmap & ((1<<b)-1))]: bit 9 = row slot 2 (row 3), col 1 */
  CHECK(F.du_val[F.du_valptr[0] + __builtin_popcount(F.du_bitmap[0] & ((1u << 9) - 1))] == 9.0, "(1,1) decode");
  mx_format_free(&F);

  CHECK(mx_format_build(&A, (mx_crux){1, 1}, MX_MODE_SE, &F) == MX_OK && F.mode == MX_HOT_SE, "build (1,1) SE");
  const int32_t se_ptr[2] = {0, 32};
  const int32_t se_col[32] = {1, 1, 1, 0, -1, -1, -1, -1, 2, 4, 4, -1, -1, -1, -1, -1,
                              4, -1, -1, -1, -1, -1, -1, -1, 5, -1, -1, -1, -1, -1, -1, -1};
  const double se_val[32] = {3, 1, 9, 7, 0, 0, 0, 0, 4, 2, 8, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0};
  CHECK(F.se_nslots == 32, "(1,1) SE slots %d", F.se_nslots);
  EQ_ARR(F.se_ptr, se_ptr, 2, "(1,1) se_ptr");
  EQ_ARR(F.se_col, se_col, 32, "(1,1) se_col");
  EQ_ARR(F.se_val, se_val, 32, "(1,1) se_val");
  CHECK(F.hot_src[0] == 2 && F.hot_src[3] == 6 && F.hot_src[10] == 7 && F.hot_src[4] == -1, "(1,1) SE hot_src");
  mx_format_hot_costs(&F, &du, &se);
  CHECK(du == 164 && se == 424, "(1,1) costs from SE %zu %zu", du, se);
  mx_format_free(&F);
}

static void crux_05_03(void) {
  const mx_csr A = {4, 6, Ap, Aj, Ax};
  mx_format F;
  /* ceil(4.5) = 5 -> c1, c4 (6 nonzeros); hot lengths r0 2, r1 2, r3 2, r2 0; ceil(2.7) = 3 -> r0, r1 */
  CHECK(mx_format_build(&A, (mx_crux){0.5, 0.3}, MX_MODE_DU, &F) == MX_OK, "build (0.5,0.3)");
  CHECK(F.hot_ncols == 2 && F.hot_nrows == 2 && F.hot_nnz == 4 && F.cold_nnz == 5, "(0.5,0.3) sizes");
  const int32_t hot_row[8] = {0, 1, -1, -1, -1, -1, -1, -1}, col[4] = {1, 4, -1, -1};
  const int32_t crp[5] = {0, 0, 2, 3, 5}, ccol[5] = {2, 5, 0, 4, 1}, csrc[5] = {3, 5, 6, 7, 8}, hsrc[4] = {0, 1, 2, 4};
  const double cval[5] = {4, 6, 7, 8, 9}, val[4] = {1, 2, 3, 5};
  EQ_ARR(F.hot_row, hot_row, 8, "(0.5,0.3) hot_row");
  CHECK(F.du_nblocks == 1 && F.du_bitmap[0] == (1u | 2u | 16u | 32u), "(0.5,0.3) bitmap %u", F.du_bitmap[0]);
  EQ_ARR(F.du_col, col, 4, "(0.5,0.3) du_col");
  EQ_ARR(F.du_val, val, 4, "(0.5,0.3) du_val");
  EQ_ARR(F.hot_src, hsrc, 4, "(0.5,0.3) hot_src");
  EQ_ARR(F.cold_rowptr, crp, 5, "(0.5,0.3) cold_rowptr");
  EQ_ARR(F.cold_col, ccol, 5, "(0.5,0.3) cold_col (input order)");
  EQ_ARR(F.cold_val, cval, 5, "(0.5,0.3) cold_val");
  EQ_ARR(F.cold_src, csrc, 5, "(0.5,0.3) cold_src");
  mx_format_free(&F);

  /* (1, 0): all columns hot, no hot row: all cold, mode NONE, same bytes as CSR */
  CHECK(mx_format_build(&A, (mx_crux){1, 0}, MX_MODE_AUTO, &F) == MX_OK, "build (1,0)");
  CHECK(F.hot_ncols == 5 && F.hot_nrows == 0 && F.nchunks == 0 && F.mode == MX_HOT_NONE && F.cold_nnz == 9, "(1,0)");
  CHECK(mx_format_bytes(&F) == mx_csr_bytes(4, 9) && mx_csr_bytes(4, 9) == 4 * 5 + 12 * 9, "(1,0) bytes");
  EQ_ARR(F.cold_col, Aj, 9, "(1,0) cold = input");
  mx_format_free(&F);
  /* tau_r > tau_c is clamped: (0.5, 0.9) behaves as (0.5, 0.5) */
  CHECK(mx_format_build(&A, (mx_crux){0.5, 0.9}, MX_MODE_AUTO, &F) == MX_OK, "build (0.5,0.9)");
  CHECK(F.crux.tau_c == 0.5 && F.crux.tau_r == 0.5 && F.hot_nrows == 3 && F.hot_nnz == 6, "clamp: rows %d nnz %d",
        F.hot_nrows, F.hot_nnz);
  mx_format_free(&F);
}

/* Duplicates: row 0 = (1,a) (1,b) (2,c), row 1 = (1,d): column 1 takes two local columns. */
static void duplicates(void) {
  const int32_t p[] = {0, 3, 4}, j[] = {1, 1, 2, 1};
  const double v[] = {10, 20, 30, 40};
  const mx_csr A = {2, 3, p, j, v};
  mx_format F;
  CHECK(mx_format_build(&A, (mx_crux){1, 1}, MX_MODE_DU, &F) == MX_OK, "build dup");
  const int32_t col[4] = {1, 1, 2, -1};
  const double val[4] = {10, 20, 30, 40};
  CHECK(F.du_nblocks == 1 && F.du_bitmap[0] == (1u | 2u | 4u | 16u), "dup bitmap %u", F.du_bitmap[0]);
  EQ_ARR(F.du_col, col, 4, "dup du_col");
  EQ_ARR(F.du_val, val, 4, "dup du_val");
  const double x[3] = {1, 2, 3};
  double y[2];
  mx_spmv(&F, x, y);
  CHECK(y[0] == 10 * 2 + 20 * 2 + 30 * 3 && y[1] == 40 * 2, "dup y = %g %g", y[0], y[1]);
  mx_format_free(&F);
  CHECK(mx_format_build(&A, (mx_crux){1, 1}, MX_MODE_SE, &F) == MX_OK, "build dup SE");
  CHECK(F.se_nslots == 24 && F.se_col[0] == 1 && F.se_col[8] == 1 && F.se_col[16] == 2 && F.se_col[1] == 1, "dup SE");
  mx_format_hot_costs(&F, NULL, NULL);
  size_t du, se;
  mx_format_hot_costs(&F, &du, &se);
  CHECK(du == 32 + 8 + 24 + 4 + 8 * 4 && se == 32 + 8 + 12 * 24, "dup costs %zu %zu", du, se);
  mx_format_free(&F);
}

int main(void) {
  crux_1_1();
  crux_05_03();
  duplicates();
  return t_report("test_core_layout");
}
