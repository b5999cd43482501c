/* mx_spmv.c - y = (C + H) x and y = (C + H)' x on the CPU: the cold CSR loop writes (or seeds)
 * every y entry, then each hot chunk adds its rows' (or columns') contributions. */
#include <string.h>

#include "mx_core_internal.h"

/* y[i] = (z[i] + Cx[p0] x[Cj[p0]]) + Cx[p1] x[Cj[p1]] + ... over the cold row i, summed left to
 * right from z[i] (0 when z == NULL) exactly as AIJ's MatMult/MatMultAdd do, so that crux (0,0)
 * is bitwise identical to AIJ. y == z allowed: z[i] is read before y[i] is written. (Declared in
 * mx_core_internal.h: mx_spmv_compressed falls back to it.) */
void mx_cold_mult(const mx_format *F, const double *x, const double *z, double *y) {
  const int32_t m = F->nrows, *Cp = F->cold_rowptr, *Cj = F->cold_col;
  const double *Cx = F->cold_val;
  for (int32_t i = 0; i < m; i++) {
    double s = z ? z[i] : 0.0;
    for (int32_t p = Cp[i]; p < Cp[i + 1]; p++) s += Cx[p] * x[Cj[p]];
    y[i] = s;
  }
}

/* y[hot_row[q*8+r]] += acc[r] for the real rows of chunk q. (Declared in mx_core_internal.h: the
 * packed SE kernel stores through it too.) */
void mx_chunk_store_add(const int32_t *hr, const double *acc, double *y) {
  for (int r = 0; r < MX_CHUNK_ROWS; r++)
    if (hr[r] >= 0) y[hr[r]] += acc[r];
}

/* DU: bit b of block blk is row b/4, column du_col[blk*4 + b%4], value du_val[valptr[blk] + rank of b]. */
static void hot_add_du(const mx_format *F, const double *x, double *y) {
  const int32_t *cp = F->du_chunkptr, *col = F->du_col, *vp = F->du_valptr;
  const uint32_t *bm = F->du_bitmap;
  const double *v = F->du_val;
  for (int32_t q = 0; q < F->nchunks; q++) {
    double acc[MX_CHUNK_ROWS] = {0};
    for (int32_t b = cp[q]; b < cp[q + 1]; b++) {
      const int32_t *bc = col + (int64_t)b * MX_BLOCK_COLS;
      const double xb[MX_BLOCK_COLS] = {bc[0] >= 0 ? x[bc[0]] : 0.0, bc[1] >= 0 ? x[bc[1]] : 0.0,
                                        bc[2] >= 0 ? x[bc[2]] : 0.0, bc[3] >= 0 ? x[bc[3]] : 0.0};
      const double *bv = v + vp[b];
      for (uint32_t bits = bm[b]; bits; bits &= bits - 1) {
        const int bit = __builtin_ctz(bits);
        acc[bit / MX_BLOCK_COLS] += *bv++ * xb[bit % MX_BLOCK_COLS];
      }
    }
    mx_chunk_store_add(F->hot_row + (int64_t)q * MX_CHUNK_ROWS, acc, y);
  }
}

/* SE: slot (k, r) of chunk q adds se_val * x[se_col] to row r unless se_col = -1. */
static void hot_add_se(const mx_format *F, const double *x, double *y) {
  const int32_t *sp = F->se_ptr, *col = F->se_col;
  const double *v = F->se_val;
  for (int32_t q = 0; q < F->nchunks; q++) {
    double acc[MX_CHUNK_ROWS] = {0};
    for (int32_t s = sp[q]; s < sp[q + 1]; s += MX_CHUNK_ROWS)
      for (int r = 0; r < MX_CHUNK_ROWS; r++)
        if (col[s + r] >= 0) acc[r] += v[s + r] * x[col[s + r]];
    mx_chunk_store_add(F->hot_row + (int64_t)q * MX_CHUNK_ROWS, acc, y);
  }
}

/* y[hot rows] += H x (declared in mx_core_internal.h: the packed cold kernel adds the hot part too) */
void mx_hot_add(const mx_format *F, const double *x, double *y) {
  if (F->mode == MX_HOT_DU) hot_add_du(F, x, y);
  if (F->mode == MX_HOT_SE) hot_add_se(F, x, y);
}

/* y = A x. */
void mx_spmv(const mx_format *F, const double *x, double *y) {
  mx_cold_mult(F, x, NULL, y);
  mx_hot_add(F, x, y);
}

/* y = A x + z (y == z allowed: mx_cold_mult reads z[i] before writing y[i]). */
void mx_spmv_add(const mx_format *F, const double *x, const double *z, double *y) {
  mx_cold_mult(F, x, z, y);
  mx_hot_add(F, x, y);
}

/* y[Cj[p]] += Cx[p] x[i] over the cold entries of every row i. */
static void cold_mult_t_add(const mx_format *F, const double *x, double *y) {
  const int32_t m = F->nrows, *Cp = F->cold_rowptr, *Cj = F->cold_col;
  const double *Cx = F->cold_val;
  for (int32_t i = 0; i < m; i++) {
    const double xi = x[i];
    for (int32_t p = Cp[i]; p < Cp[i + 1]; p++) y[Cj[p]] += Cx[p] * xi;
  }
}

/* DU transposed: bit b of block blk adds value * x[hot row b/4] to y[du_col[blk*4 + b%4]]. */
static void hot_t_add_du(const mx_format *F, const double *x, double *y) {
  const int32_t *cp = F->du_chunkptr, *col = F->du_col, *vp = F->du_valptr;
  const uint32_t *bm = F->du_bitmap;
  const double *v = F->du_val;
  for (int32_t q = 0; q < F->nchunks; q++) {
    const int32_t *hr = F->hot_row + (int64_t)q * MX_CHUNK_ROWS;
    double xr[MX_CHUNK_ROWS];
    for (int r = 0; r < MX_CHUNK_ROWS; r++) xr[r] = hr[r] >= 0 ? x[hr[r]] : 0.0;
    for (int32_t b = cp[q]; b < cp[q + 1]; b++) {
      const int32_t *bc = col + (int64_t)b * MX_BLOCK_COLS;
      const double *bv = v + vp[b];
      for (uint32_t bits = bm[b]; bits; bits &= bits - 1) {
        const int bit = __builtin_ctz(bits);
        y[bc[bit % MX_BLOCK_COLS]] += *bv++ * xr[bit / MX_BLOCK_COLS];
      }
    }
  }
}

/* SE transposed: slot (k, r) adds se_val * x[hot row r] to y[se_col] unless se_col = -1. */
static void hot_t_add_se(const mx_format *F, const double *x, double *y) {
  const int32_t *sp = F->se_ptr, *col = F->se_col;
  const double *v = F->se_val;
  for (int32_t q = 0; q < F->nchunks; q++) {
    const int32_t *hr = F->hot_row + (int64_t)q * MX_CHUNK_ROWS;
    double xr[MX_CHUNK_ROWS];
    for (int r = 0; r < MX_CHUNK_ROWS; r++) xr[r] = hr[r] >= 0 ? x[hr[r]] : 0.0;
    for (int32_t s = sp[q]; s < sp[q + 1]; s += MX_CHUNK_ROWS)
      for (int r = 0; r < MX_CHUNK_ROWS; r++)
        if (col[s + r] >= 0) y[col[s + r]] += v[s + r] * xr[r];
  }
}

/* y += A' x. */
static void spmv_t_accumulate(const mx_format *F, const double *x, double *y) {
  cold_mult_t_add(F, x, y);
  if (F->mode == MX_HOT_DU) hot_t_add_du(F, x, y);
  if (F->mode == MX_HOT_SE) hot_t_add_se(F, x, y);
}

/* y = A' x. */
void mx_spmv_t(const mx_format *F, const double *x, double *y) {
  if (F->ncols > 0) memset(y, 0, (size_t)F->ncols * sizeof(double));
  spmv_t_accumulate(F, x, y);
}

/* y = A' x + z (y == z allowed). */
void mx_spmv_t_add(const mx_format *F, const double *x, const double *z, double *y) {
  if (y != z && F->ncols > 0) memcpy(y, z, (size_t)F->ncols * sizeof(double));
  spmv_t_accumulate(F, x, y);
}
