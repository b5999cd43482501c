/* mx_spmm.c - C = A B and C = A' B for k dense columns on the CPU (column-major B and C with leading
 * dimensions ldb and ldc): the CPU path of MatProduct with a dense B.
 *
 * Rule: column c of C is bit for bit mx_spmv (mx_spmv_t) of column c of B: every column's sums are
 * made in the SpMV's order (a cold row left to right from 0, then the hot chunks in order; the
 * transpose scattering rows in order). The columns go in blocks of MX_SPMM_COLS, so that each
 * nonzero, its column index and the block's B entries of that column are read once per block
 * instead of once per column. Rows ldb > nrows (ldc > nrows) of the padding are never read
 * (written). */
#include <string.h>

#include "mx_core_internal.h"

/* columns per block: the accumulators of one row stay in registers */
#define MX_SPMM_COLS 8

/* C[i + c ldc] = sum over the cold row i of v B[j + c ldb], c < kb, in row order from 0. Inlined into
 * cold_block once per kb = 1..8, so that the accumulators are registers and the column loop unrolled. */
static inline __attribute__((always_inline)) void cold_rows(const mx_format *F, const int kb, const double *B, int64_t ldb, double *C,
                                                            int64_t ldc) {
  const int32_t *Cp = F->cold_rowptr, *Cj = F->cold_col;
  const double *Cx = F->cold_val;
  for (int32_t i = 0; i < F->nrows; i++) {
    double s[MX_SPMM_COLS] = {0};
    for (int32_t p = Cp[i]; p < Cp[i + 1]; p++) {
      const double v = Cx[p], *b = B + Cj[p];
      for (int c = 0; c < kb; c++) s[c] += v * b[c * ldb];
    }
    for (int c = 0; c < kb; c++) C[i + c * ldc] = s[c];
  }
}

/* fn(F, KB, B, ldb, C, ldc) with the block width kb as a constant 1..MX_SPMM_COLS (one inlined copy each) */
#define MX_SPMM_BY_WIDTH(fn, kb, F, B, ldb, C, ldc) \
  do { \
    switch (kb) { \
    case 1: fn(F, 1, B, ldb, C, ldc); break; \
    case 2: fn(F, 2, B, ldb, C, ldc); break; \
    case 3: fn(F, 3, B, ldb, C, ldc); break; \
    case 4: fn(F, 4, B, ldb, C, ldc); break; \
    case 5: fn(F, 5, B, ldb, C, ldc); break; \
    case 6: fn(F, 6, B, ldb, C, ldc); break; \
    case 7: fn(F, 7, B, ldb, C, ldc); break; \
    default: fn(F, MX_SPMM_COLS, B, ldb, C, ldc); break; \
    } \
  } while (0)

static void cold_block(const mx_format *F, int kb, const double *B, int64_t ldb, double *C, int64_t ldc) {
  MX_SPMM_BY_WIDTH(cold_rows, kb, F, B, ldb, C, ldc);
}

/* acc[r][c] added into C at the chunk's real rows (hr[r] >= 0), as mx_chunk_store_add does per column. */
static void chunk_store_block(const int32_t *hr, double acc[MX_CHUNK_ROWS][MX_SPMM_COLS], int kb, double *C, int64_t ldc) {
  for (int r = 0; r < MX_CHUNK_ROWS; r++)
    if (hr[r] >= 0)
      for (int c = 0; c < kb; c++) C[hr[r] + c * ldc] += acc[r][c];
}

/* DU blocks of each chunk, the set bits in order (as hot_add_du). */
static void hot_du_block(const mx_format *F, int kb, const double *B, int64_t ldb, double *C, int64_t ldc) {
  const int32_t *cp = F->du_chunkptr, *col = F->du_col, *vp = F->du_valptr;
  for (int32_t q = 0; q < F->nchunks; q++) {
    double acc[MX_CHUNK_ROWS][MX_SPMM_COLS] = {{0}};
    for (int32_t b = cp[q]; b < cp[q + 1]; b++) {
      const int32_t *bc = col + (int64_t)b * MX_BLOCK_COLS;
      const double *bv = F->du_val + vp[b];
      for (uint32_t bits = F->du_bitmap[b]; bits; bits &= bits - 1) {
        const int bit = __builtin_ctz(bits), j = bc[bit % MX_BLOCK_COLS];
        const double v = *bv++;
        for (int c = 0; c < kb; c++) acc[bit / MX_BLOCK_COLS][c] += v * (j >= 0 ? B[j + c * ldb] : 0.0);
      }
    }
    chunk_store_block(F->hot_row + (int64_t)q * MX_CHUNK_ROWS, acc, kb, C, ldc);
  }
}

/* SE slots of each chunk in order (as hot_add_se). */
static void hot_se_block(const mx_format *F, int kb, const double *B, int64_t ldb, double *C, int64_t ldc) {
  const int32_t *sp = F->se_ptr, *col = F->se_col;
  for (int32_t q = 0; q < F->nchunks; q++) {
    double acc[MX_CHUNK_ROWS][MX_SPMM_COLS] = {{0}};
    for (int32_t s = sp[q]; s < sp[q + 1]; s += MX_CHUNK_ROWS)
      for (int r = 0; r < MX_CHUNK_ROWS; r++)
        if (col[s + r] >= 0)
          for (int c = 0; c < kb; c++) acc[r][c] += F->se_val[s + r] * B[col[s + r] + c * ldb];
    chunk_store_block(F->hot_row + (int64_t)q * MX_CHUNK_ROWS, acc, kb, C, ldc);
  }
}

void mx_spmm(const mx_format *F, int32_t k, const double *B, int64_t ldb, double *C, int64_t ldc) {
  for (int32_t c0 = 0; c0 < k; c0 += MX_SPMM_COLS) {
    const int kb = k - c0 < MX_SPMM_COLS ? (int)(k - c0) : MX_SPMM_COLS;
    const double *Bb = B + c0 * ldb;
    double *Cb = C + c0 * ldc;
    cold_block(F, kb, Bb, ldb, Cb, ldc);
    if (F->mode == MX_HOT_DU) hot_du_block(F, kb, Bb, ldb, Cb, ldc);
    if (F->mode == MX_HOT_SE) hot_se_block(F, kb, Bb, ldb, Cb, ldc);
  }
}

/* C[j + c ldc] += v B[i + c ldb] over the cold entries of every row i, rows in order (inlined per kb as
 * cold_rows). */
static inline __attribute__((always_inline)) void cold_t_rows(const mx_format *F, const int kb, const double *B, int64_t ldb, double *C,
                                                              int64_t ldc) {
  const int32_t *Cp = F->cold_rowptr, *Cj = F->cold_col;
  const double *Cx = F->cold_val;
  for (int32_t i = 0; i < F->nrows; i++) {
    double bi[MX_SPMM_COLS];
    for (int c = 0; c < kb; c++) bi[c] = B[i + c * ldb];
    for (int32_t p = Cp[i]; p < Cp[i + 1]; p++) {
      const double v = Cx[p];
      double *t = C + Cj[p];
      for (int c = 0; c < kb; c++) t[c * ldc] += v * bi[c];
    }
  }
}

static void cold_t_block(const mx_format *F, int kb, const double *B, int64_t ldb, double *C, int64_t ldc) {
  MX_SPMM_BY_WIDTH(cold_t_rows, kb, F, B, ldb, C, ldc);
}

/* B's entries at the chunk's rows (0 at padding rows), as the transposed hot kernels read x. */
static void chunk_rows_block(const int32_t *hr, int kb, const double *B, int64_t ldb, double br[MX_CHUNK_ROWS][MX_SPMM_COLS]) {
  for (int r = 0; r < MX_CHUNK_ROWS; r++)
    for (int c = 0; c < kb; c++) br[r][c] = hr[r] >= 0 ? B[hr[r] + c * ldb] : 0.0;
}

static void hot_t_du_block(const mx_format *F, int kb, const double *B, int64_t ldb, double *C, int64_t ldc) {
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
        double *t = C + bc[bit % MX_BLOCK_COLS];
        for (int c = 0; c < kb; c++) t[c * ldc] += v * br[bit / MX_BLOCK_COLS][c];
      }
    }
  }
}

static void hot_t_se_block(const mx_format *F, int kb, const double *B, int64_t ldb, double *C, int64_t ldc) {
  const int32_t *sp = F->se_ptr, *col = F->se_col;
  for (int32_t q = 0; q < F->nchunks; q++) {
    double br[MX_CHUNK_ROWS][MX_SPMM_COLS];
    chunk_rows_block(F->hot_row + (int64_t)q * MX_CHUNK_ROWS, kb, B, ldb, br);
    for (int32_t s = sp[q]; s < sp[q + 1]; s += MX_CHUNK_ROWS)
      for (int r = 0; r < MX_CHUNK_ROWS; r++)
        if (col[s + r] >= 0)
          for (int c = 0; c < kb; c++) C[col[s + r] + c * ldc] += F->se_val[s + r] * br[r][c];
  }
}

void mx_spmm_t(const mx_format *F, int32_t k, const double *B, int64_t ldb, double *C, int64_t ldc) {
  for (int32_t c0 = 0; c0 < k; c0 += MX_SPMM_COLS) {
    const int kb = k - c0 < MX_SPMM_COLS ? (int)(k - c0) : MX_SPMM_COLS;
    const double *Bb = B + c0 * ldb;
    double *Cb = C + c0 * ldc;
    for (int c = 0; c < kb && F->ncols > 0; c++) memset(Cb + c * ldc, 0, (size_t)F->ncols * sizeof(double));
    cold_t_block(F, kb, Bb, ldb, Cb, ldc);
    if (F->mode == MX_HOT_DU) hot_t_du_block(F, kb, Bb, ldb, Cb, ldc);
    if (F->mode == MX_HOT_SE) hot_t_se_block(F, kb, Bb, ldb, Cb, ldc);
  }
}
