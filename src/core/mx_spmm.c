/* mx_spmm.c - C = A B and C = A' B for k dense columns on the CPU (column-major B and C with leading
 * dimensions ldb and ldc): the CPU path of MatProduct with a dense B.
 *
 * Rule: column c of C is bit for bit mx_spmv (mx_spmv_t) of column c of B: every column's sums are
 * made in the SpMV's order (a cold row left to right from 0, then the hot chunks in order; the
 * transpose scattering rows in order). The columns go in blocks (of 8 with a panel, else 4), so
 * that each nonzero, its column index and the block's B entries of that column are read once per
 * block instead of once per column (two columns per vector operation in a block of even width: each
 * lane's operations are the scalar ones); one column is the SpMV itself (mx_spmv, mx_spmv_t). Rows
 * ldb > nrows (ldc > nrows) of the padding are never read (written).
 *
 * Panels: where the rows' nonzeros do not follow diagonals (F->cold_diagonals, set by the build: a
 * row reads other B lines than the row above, as in graphs) and the matrix has at least as many
 * nonzeros as the side a nonzero's column indexes (B's rows for A B, C's rows for A' B), that side of
 * a block of 8 columns is a row-major panel P[j kb + c]: a nonzero then reads (A B) or adds to (A' B)
 * kb consecutive doubles, one or two cache lines instead of kb. Copying the panel in (A B) or out
 * (A' B) costs one pass over the block. Elsewhere the blocks are of 4 columns, column-major. Neither
 * changes any sum's order. */
#include <stdlib.h>
#include <string.h>

#include "mx_core_internal.h"

/* columns per block: the accumulators of one row stay in registers; MX_SPMM_COLS_LOCAL without a
 * panel (8 column-major streams of B and of C share cache sets when the leading dimension is a
 * multiple of 512 doubles; 4 stay within an 8-way set) */
#define MX_SPMM_COLS       8
#define MX_SPMM_COLS_LOCAL 4

/* Entry (j, c) of a block's side that nonzeros index by column: column-major (at j + c ld) or a
 * row-major panel of kb columns (at j kb + c). Inlined with panel and kb constant in the cold loops. */
static inline __attribute__((always_inline)) double *side_at(double *a, int64_t ld, int panel, int kb, int32_t j, int c) {
  return panel ? a + (int64_t)j * kb + c : a + j + (int64_t)c * ld;
}

/* C[i + c ldc] = sum over the cold row i of v B(j, c), c < kb, in row order from 0. Inlined into
 * cold_block once per kb = 1..8, so that the accumulators are registers and the column loop unrolled. */
static inline __attribute__((always_inline)) void cold_rows(const mx_format *F, const int kb, const int panel, double *B, int64_t ldb, double *C,
                                                            int64_t ldc) {
  const int32_t *Cp = F->cold_rowptr, *Cj = F->cold_col;
  const double *Cx = F->cold_val;
  for (int32_t i = 0; i < F->nrows; i++) {
    double s[MX_SPMM_COLS] = {0};
    for (int32_t p = Cp[i]; p < Cp[i + 1]; p++) {
      const double v = Cx[p];
      for (int c = 0; c < kb; c++) s[c] += v * *side_at(B, ldb, panel, kb, Cj[p], c);
    }
    for (int c = 0; c < kb; c++) C[i + c * ldc] = s[c];
  }
}

/* cold_rows for an even kb, two columns per vector operation: lane l of pair h is column 2h + l,
 * each lane's product and sum the scalar ones (a multiply, then an add), so every column's bits are
 * cold_rows'. The pair of B entries is one 16-byte load on a panel, two 8-byte loads column-major. */
typedef double mx_spmm_pair __attribute__((vector_size(16)));
static inline __attribute__((always_inline)) mx_spmm_pair pair_at(const double *B, int64_t ldb, int panel, int kb, int32_t j, int h) {
  mx_spmm_pair b;
  if (panel) memcpy(&b, B + (int64_t)j * kb + 2 * h, sizeof b);
  else b = (mx_spmm_pair){B[j + 2 * h * ldb], B[j + (2 * h + 1) * ldb]};
  return b;
}
static inline __attribute__((always_inline)) void cold_rows_pairs(const mx_format *F, const int kb, const int panel, const double *B, int64_t ldb,
                                                                  double *C, int64_t ldc) {
  const int32_t *Cp = F->cold_rowptr, *Cj = F->cold_col;
  const double *Cx = F->cold_val;
  for (int32_t i = 0; i < F->nrows; i++) {
    mx_spmm_pair s[MX_SPMM_COLS / 2] = {{0}};
    for (int32_t p = Cp[i]; p < Cp[i + 1]; p++) {
      const mx_spmm_pair v = {Cx[p], Cx[p]};
      for (int h = 0; h < kb / 2; h++) s[h] += v * pair_at(B, ldb, panel, kb, Cj[p], h);
    }
    for (int h = 0; h < kb / 2; h++) {
      C[i + 2 * h * ldc]       = s[h][0];
      C[i + (2 * h + 1) * ldc] = s[h][1];
    }
  }
}
/* the pairs for an even block width, else the scalar loop */
#define cold_rows_any(F, KB, PANEL, B, ldb, C, ldc) \
  do { \
    if ((KB) % 2 == 0) cold_rows_pairs(F, KB, PANEL, B, ldb, C, ldc); \
    else cold_rows(F, KB, PANEL, B, ldb, C, ldc); \
  } while (0)
#define cold_rows_cm(F, KB, B, ldb, C, ldc)    cold_rows_any(F, KB, 0, B, ldb, C, ldc)
#define cold_rows_panel(F, KB, B, ldb, C, ldc) cold_rows_any(F, KB, 1, B, ldb, C, ldc)

/* fn(F, KB, X, ldx, Y, ldy) with the block width kb as a constant 1..MX_SPMM_COLS (one inlined copy each) */
#define MX_SPMM_BY_WIDTH(fn, kb, F, X, ldx, Y, ldy) \
  do { \
    switch (kb) { \
    case 1: fn(F, 1, X, ldx, Y, ldy); break; \
    case 2: fn(F, 2, X, ldx, Y, ldy); break; \
    case 3: fn(F, 3, X, ldx, Y, ldy); break; \
    case 4: fn(F, 4, X, ldx, Y, ldy); break; \
    case 5: fn(F, 5, X, ldx, Y, ldy); break; \
    case 6: fn(F, 6, X, ldx, Y, ldy); break; \
    case 7: fn(F, 7, X, ldx, Y, ldy); break; \
    default: fn(F, MX_SPMM_COLS, X, ldx, Y, ldy); break; \
    } \
  } while (0)

static void cold_block(const mx_format *F, int kb, int panel, double *B, int64_t ldb, double *C, int64_t ldc) {
  if (panel) MX_SPMM_BY_WIDTH(cold_rows_panel, kb, F, B, ldb, C, ldc);
  else MX_SPMM_BY_WIDTH(cold_rows_cm, kb, F, B, ldb, C, ldc);
}

/* acc[r][c] added into C at the chunk's real rows (hr[r] >= 0), as mx_chunk_store_add does per column. */
static void chunk_store_block(const int32_t *hr, double acc[MX_CHUNK_ROWS][MX_SPMM_COLS], int kb, double *C, int64_t ldc) {
  for (int r = 0; r < MX_CHUNK_ROWS; r++)
    if (hr[r] >= 0)
      for (int c = 0; c < kb; c++) C[hr[r] + c * ldc] += acc[r][c];
}

/* DU blocks of each chunk, the set bits in order (as hot_add_du). */
static void hot_du_block(const mx_format *F, int kb, int panel, double *B, int64_t ldb, double *C, int64_t ldc) {
  const int32_t *cp = F->du_chunkptr, *col = F->du_col, *vp = F->du_valptr;
  for (int32_t q = 0; q < F->nchunks; q++) {
    double acc[MX_CHUNK_ROWS][MX_SPMM_COLS] = {{0}};
    for (int32_t b = cp[q]; b < cp[q + 1]; b++) {
      const int32_t *bc = col + (int64_t)b * MX_BLOCK_COLS;
      const double *bv = F->du_val + vp[b];
      for (uint32_t bits = F->du_bitmap[b]; bits; bits &= bits - 1) {
        const int bit = __builtin_ctz(bits), j = bc[bit % MX_BLOCK_COLS];
        const double v = *bv++;
        for (int c = 0; c < kb; c++) acc[bit / MX_BLOCK_COLS][c] += v * (j >= 0 ? *side_at(B, ldb, panel, kb, j, c) : 0.0);
      }
    }
    chunk_store_block(F->hot_row + (int64_t)q * MX_CHUNK_ROWS, acc, kb, C, ldc);
  }
}

/* SE slots of each chunk in order (as hot_add_se). */
static void hot_se_block(const mx_format *F, int kb, int panel, double *B, int64_t ldb, double *C, int64_t ldc) {
  const int32_t *sp = F->se_ptr, *col = F->se_col;
  for (int32_t q = 0; q < F->nchunks; q++) {
    double acc[MX_CHUNK_ROWS][MX_SPMM_COLS] = {{0}};
    for (int32_t s = sp[q]; s < sp[q + 1]; s += MX_CHUNK_ROWS)
      for (int r = 0; r < MX_CHUNK_ROWS; r++)
        if (col[s + r] >= 0)
          for (int c = 0; c < kb; c++) acc[r][c] += F->se_val[s + r] * *side_at(B, ldb, panel, kb, col[s + r], c);
    chunk_store_block(F->hot_row + (int64_t)q * MX_CHUNK_ROWS, acc, kb, C, ldc);
  }
}

/* How the k columns go: blocks of `width`, and whether the side the nonzeros index is a panel. */
typedef struct {
  int width, panel;
} mx_spmm_way;

static mx_spmm_way spmm_way(const mx_format *F, int32_t k) {
  mx_spmm_way w = {MX_SPMM_COLS_LOCAL, 0};
  if (k >= 2 && F->ncols > 0 && F->nnz >= (int64_t)F->ncols && !F->cold_diagonals) w = (mx_spmm_way){MX_SPMM_COLS, 1};
  return w;
}

/* P[j kb + c] = B[j + c ldb], j < n, c < kb */
static void panel_in(const double *B, int64_t ldb, int32_t n, int kb, double *P) {
  for (int32_t j = 0; j < n; j++)
    for (int c = 0; c < kb; c++) P[(int64_t)j * kb + c] = B[j + c * ldb];
}

/* C[j + c ldc] = P[j kb + c], j < n, c < kb */
static void panel_out(const double *P, int32_t n, int kb, double *C, int64_t ldc) {
  for (int c = 0; c < kb; c++)
    for (int32_t j = 0; j < n; j++) C[j + c * ldc] = P[(int64_t)j * kb + c];
}

/* The panel of a way that takes one (8 columns of n rows), else NULL; MX_ERR_MEM in *st if it
 * could not be allocated. */
static double *panel_alloc(mx_spmm_way w, int32_t n, mx_status *st) {
  double *P = w.panel ? malloc(sizeof(double) * (size_t)n * (size_t)w.width) : NULL;
  *st = w.panel && !P ? MX_ERR_MEM : MX_OK;
  return P;
}

mx_status mx_spmm(const mx_format *F, int32_t k, const double *B, int64_t ldb, double *C, int64_t ldc) {
  if (k == 1) { /* one column: the SpMV itself */
    mx_spmv(F, B, C);
    return MX_OK;
  }
  const mx_spmm_way w = spmm_way(F, k);
  mx_status st;
  double *P = panel_alloc(w, F->ncols, &st);
  if (st != MX_OK) return st;
  for (int32_t c0 = 0; c0 < k; c0 += w.width) {
    const int kb = k - c0 < w.width ? (int)(k - c0) : w.width;
    double *Bb = (double *)(B + c0 * ldb), *Cb = C + c0 * ldc;
    if (P) panel_in(Bb, ldb, F->ncols, kb, P);
    double *Bs = P ? P : Bb;
    cold_block(F, kb, P != NULL, Bs, ldb, Cb, ldc);
    if (F->mode == MX_HOT_DU) hot_du_block(F, kb, P != NULL, Bs, ldb, Cb, ldc);
    if (F->mode == MX_HOT_SE) hot_se_block(F, kb, P != NULL, Bs, ldb, Cb, ldc);
  }
  free(P);
  return MX_OK;
}

/* C(j, c) += v B[i + c ldb] over the cold entries of every row i, rows in order (inlined per kb as
 * cold_rows). */
static inline __attribute__((always_inline)) void cold_t_rows(const mx_format *F, const int kb, const int panel, double *C, int64_t ldc,
                                                              const double *B, int64_t ldb) {
  const int32_t *Cp = F->cold_rowptr, *Cj = F->cold_col;
  const double *Cx = F->cold_val;
  for (int32_t i = 0; i < F->nrows; i++) {
    double bi[MX_SPMM_COLS];
    for (int c = 0; c < kb; c++) bi[c] = B[i + c * ldb];
    for (int32_t p = Cp[i]; p < Cp[i + 1]; p++) {
      const double v = Cx[p];
      for (int c = 0; c < kb; c++) *side_at(C, ldc, panel, kb, Cj[p], c) += v * bi[c];
    }
  }
}
#define cold_t_rows_cm(F, KB, C, ldc, B, ldb)    cold_t_rows(F, KB, 0, C, ldc, B, ldb)
#define cold_t_rows_panel(F, KB, C, ldc, B, ldb) cold_t_rows(F, KB, 1, C, ldc, B, ldb)

static void cold_t_block(const mx_format *F, int kb, int panel, double *C, int64_t ldc, const double *B, int64_t ldb) {
  if (panel) MX_SPMM_BY_WIDTH(cold_t_rows_panel, kb, F, C, ldc, B, ldb);
  else MX_SPMM_BY_WIDTH(cold_t_rows_cm, kb, F, C, ldc, B, ldb);
}

/* B's entries at the chunk's rows (0 at padding rows), as the transposed hot kernels read x. */
static void chunk_rows_block(const int32_t *hr, int kb, const double *B, int64_t ldb, double br[MX_CHUNK_ROWS][MX_SPMM_COLS]) {
  for (int r = 0; r < MX_CHUNK_ROWS; r++)
    for (int c = 0; c < kb; c++) br[r][c] = hr[r] >= 0 ? B[hr[r] + c * ldb] : 0.0;
}

static void hot_t_du_block(const mx_format *F, int kb, const double *B, int64_t ldb, int panel, double *C, int64_t ldc) {
  const int32_t *cp = F->du_chunkptr, *col = F->du_col, *vp = F->du_valptr;
  for (int32_t q = 0; q < F->nchunks; q++) {
    double br[MX_CHUNK_ROWS][MX_SPMM_COLS];
    chunk_rows_block(F->hot_row + (int64_t)q * MX_CHUNK_ROWS, kb, B, ldb, br);
    for (int32_t b = cp[q]; b < cp[q + 1]; b++) {
      const int32_t *bc = col + (int64_t)b * MX_BLOCK_COLS;
      const double *bv = F->du_val + vp[b];
      for (uint32_t bits = F->du_bitmap[b]; bits; bits &= bits - 1) {
        const int bit = __builtin_ctz(bits);
        const double v = *bv++;
        for (int c = 0; c < kb; c++) *side_at(C, ldc, panel, kb, bc[bit % MX_BLOCK_COLS], c) += v * br[bit / MX_BLOCK_COLS][c];
      }
    }
  }
}

static void hot_t_se_block(const mx_format *F, int kb, const double *B, int64_t ldb, int panel, double *C, int64_t ldc) {
  const int32_t *sp = F->se_ptr, *col = F->se_col;
  for (int32_t q = 0; q < F->nchunks; q++) {
    double br[MX_CHUNK_ROWS][MX_SPMM_COLS];
    chunk_rows_block(F->hot_row + (int64_t)q * MX_CHUNK_ROWS, kb, B, ldb, br);
    for (int32_t s = sp[q]; s < sp[q + 1]; s += MX_CHUNK_ROWS)
      for (int r = 0; r < MX_CHUNK_ROWS; r++)
        if (col[s + r] >= 0)
          for (int c = 0; c < kb; c++) *side_at(C, ldc, panel, kb, col[s + r], c) += F->se_val[s + r] * br[r][c];
  }
}

mx_status mx_spmm_t(const mx_format *F, int32_t k, const double *B, int64_t ldb, double *C, int64_t ldc) {
  if (k == 1) { /* one column: the transposed SpMV itself */
    mx_spmv_t(F, B, C);
    return MX_OK;
  }
  const mx_spmm_way w = spmm_way(F, k);
  mx_status st;
  double *P = panel_alloc(w, F->ncols, &st);
  if (st != MX_OK) return st;
  for (int32_t c0 = 0; c0 < k; c0 += w.width) {
    const int kb = k - c0 < w.width ? (int)(k - c0) : w.width;
    const double *Bb = B + c0 * ldb;
    double *Cb = C + c0 * ldc;
    double *Cs = P ? P : Cb;
    if (P) memset(P, 0, sizeof(double) * (size_t)F->ncols * (size_t)kb);
    else
      for (int c = 0; c < kb && F->ncols > 0; c++) memset(Cb + c * ldc, 0, (size_t)F->ncols * sizeof(double));
    cold_t_block(F, kb, P != NULL, Cs, ldc, Bb, ldb);
    if (F->mode == MX_HOT_DU) hot_t_du_block(F, kb, Bb, ldb, P != NULL, Cs, ldc);
    if (F->mode == MX_HOT_SE) hot_t_se_block(F, kb, Bb, ldb, P != NULL, Cs, ldc);
    if (P) panel_out(P, F->ncols, kb, Cb, ldc);
  }
  free(P);
  return MX_OK;
}
