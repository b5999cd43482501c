/* mx_format_check.c - the invariants of mx_format.h, each in one function returning 1 iff it holds:
 * sizes add up, cold CSR well formed, hot rows distinct and sorted by hot length (descending, ties by
 * row), DU/SE arrays consistent (first cascade: every kept DU column and every SE row prefix holds
 * nonzeros), and the gather map a bijection of all value slots onto 0..nnz-1. */
#include <stdlib.h>

#include "mx_core_internal.h"

/* Counts agree with each other and with the crux bounds. */
static int sizes_ok(const mx_format *F) {
  const mx_crux c = F->crux;
  if (F->nrows < 0 || F->ncols < 0 || F->nnz < 0 || F->hot_nnz < 0 || F->cold_nnz < 0) return 0;
  if (!(0.0 <= c.tau_r && c.tau_r <= c.tau_c && c.tau_c <= 1.0)) return 0;
  if ((int64_t)F->hot_nnz + F->cold_nnz != F->nnz) return 0;
  if (F->hot_nrows < 0 || F->hot_nrows > F->nrows || F->hot_ncols < 0 || F->hot_ncols > F->ncols) return 0;
  if (F->nchunks != (int32_t)(((int64_t)F->hot_nrows + MX_CHUNK_ROWS - 1) / MX_CHUNK_ROWS)) return 0;
  if ((F->mode == MX_HOT_NONE) != (F->hot_nnz == 0)) return 0;
  if (F->mode != MX_HOT_NONE && F->mode != MX_HOT_DU && F->mode != MX_HOT_SE) return 0;
  return F->cold_rowptr != NULL && (F->nchunks == 0 || F->hot_row != NULL);
}

/* cold_rowptr: 0 = p[0] <= ... <= p[nrows] = cold_nnz; 0 <= cold_col < ncols. */
static int cold_ok(const mx_format *F) {
  const int32_t *Cp = F->cold_rowptr;
  if (Cp[0] != 0 || Cp[F->nrows] != F->cold_nnz) return 0;
  for (int32_t i = 0; i < F->nrows; i++)
    if (Cp[i + 1] < Cp[i]) return 0;
  for (int32_t p = 0; p < F->cold_nnz; p++)
    if (F->cold_col[p] < 0 || F->cold_col[p] >= F->ncols) return 0;
  return 1;
}

/* hot_row[0..hot_nrows-1] distinct rows in range, the rest -1. */
static int hot_rows_ok(const mx_format *F, uint8_t *seen) {
  for (int32_t t = 0; t < F->nchunks * MX_CHUNK_ROWS; t++) {
    const int32_t i = F->hot_row[t];
    if (t >= F->hot_nrows) {
      if (i != -1) return 0;
    } else {
      if (i < 0 || i >= F->nrows || seen[i]) return 0;
      seen[i] = 1;
    }
  }
  return 1;
}

/* chunkptr, valptr = prefix of popcounts, columns: -1 iff no bit in that block column, padded row
 * slots without bits. */
static int du_ok(const mx_format *F) {
  const int32_t *cp = F->du_chunkptr, *vp = F->du_valptr;
  if (cp[0] != 0 || cp[F->nchunks] != F->du_nblocks || vp[0] != 0 || vp[F->du_nblocks] != F->hot_nnz) return 0;
  for (int32_t q = 0; q < F->nchunks; q++) {
    if (cp[q + 1] < cp[q]) return 0;
    for (int32_t b = cp[q]; b < cp[q + 1]; b++) {
      const uint32_t bm = F->du_bitmap[b];
      if (vp[b + 1] - vp[b] != __builtin_popcount(bm)) return 0;
      for (int r = 0; r < MX_CHUNK_ROWS; r++)
        if (F->hot_row[q * MX_CHUNK_ROWS + r] < 0 && ((bm >> (r * MX_BLOCK_COLS)) & 0xFu)) return 0;
      for (int c = 0; c < MX_BLOCK_COLS; c++) {
        const int32_t j = F->du_col[(int64_t)b * MX_BLOCK_COLS + c];
        const int used = (bm & (0x11111111u << c)) != 0;
        if (j < -1 || j >= F->ncols || (j >= 0) != used) return 0;
      }
    }
  }
  return 1;
}

/* se_ptr multiples of 8, columns in [-1, ncols), padding value 0, each row slot a full prefix of
 * its ELL column, the chunk's last ELL column used (width = longest row), hot_nnz real slots. */
static int se_ok(const mx_format *F) {
  const int32_t *sp = F->se_ptr;
  int64_t real = 0;
  if (sp[0] != 0 || sp[F->nchunks] != F->se_nslots) return 0;
  for (int32_t q = 0; q < F->nchunks; q++) {
    const int32_t w8 = sp[q + 1] - sp[q];
    if (w8 < 0 || w8 % MX_CHUNK_ROWS != 0) return 0;
    int last_used = w8 == 0;
    for (int r = 0; r < MX_CHUNK_ROWS; r++) {
      int ended = F->hot_row[q * MX_CHUNK_ROWS + r] < 0;
      for (int32_t s = sp[q] + r; s < sp[q + 1]; s += MX_CHUNK_ROWS) {
        const int32_t j = F->se_col[s];
        if (j < -1 || j >= F->ncols || (j < 0 && F->se_val[s] != 0.0) || (j >= 0 && ended)) return 0;
        if (j < 0) ended = 1;
        real += j >= 0;
        if (j >= 0 && s >= sp[q + 1] - MX_CHUNK_ROWS) last_used = 1;
      }
    }
    if (!last_used) return 0;
  }
  return real == F->hot_nnz;
}

/* len[t] = hot entries of hot slot t. */
static void hot_slot_lengths(const mx_format *F, int32_t *len) {
  for (int32_t t = 0; t < F->nchunks * MX_CHUNK_ROWS; t++) len[t] = 0;
  for (int32_t q = 0; q < F->nchunks; q++)
    for (int r = 0; r < MX_CHUNK_ROWS; r++) {
      int32_t *l = &len[q * MX_CHUNK_ROWS + r];
      if (F->mode == MX_HOT_DU)
        for (int32_t b = F->du_chunkptr[q]; b < F->du_chunkptr[q + 1]; b++)
          *l += __builtin_popcount((F->du_bitmap[b] >> (r * MX_BLOCK_COLS)) & 0xFu);
      if (F->mode == MX_HOT_SE)
        for (int32_t s = F->se_ptr[q] + r; s < F->se_ptr[q + 1]; s += MX_CHUNK_ROWS) *l += F->se_col[s] >= 0;
    }
}

/* Hot slot t < hot_nrows: len >= 1, (len desc, row asc) order. */
static int hot_order_ok(const mx_format *F, const int32_t *len) {
  for (int32_t t = 0; t < F->hot_nrows; t++) {
    if (len[t] < 1) return 0;
    if (t > 0 && (len[t] > len[t - 1] || (len[t] == len[t - 1] && F->hot_row[t] < F->hot_row[t - 1]))) return 0;
  }
  return 1;
}

/* Every slot's source in [0, nnz) and hit once; -1 exactly at SE padding. A borrowed cold part is
 * the whole input (identity map, no hot part). */
static int gather_ok(const mx_format *F, uint8_t *hit) {
  if (F->cold_borrowed) return !F->cold_src && F->hot_nnz == 0 && F->mode == MX_HOT_NONE && F->cold_nnz == F->nnz;
  if (!F->cold_src && F->cold_nnz > 0) return 0;
  const int32_t nh = F->mode == MX_HOT_SE ? F->se_nslots : F->mode == MX_HOT_DU ? F->hot_nnz : 0;
  for (int32_t p = 0; p < F->cold_nnz; p++) {
    const int32_t k = F->cold_src[p];
    if (k < 0 || k >= F->nnz || hit[k]) return 0;
    hit[k] = 1;
  }
  for (int32_t p = 0; p < nh; p++) {
    const int32_t k = F->hot_src[p];
    if (F->mode == MX_HOT_SE && (k < 0) != (F->se_col[p] < 0)) return 0;
    if (k < 0 && F->mode == MX_HOT_SE) continue;
    if (k < 0 || k >= F->nnz || hit[k]) return 0;
    hit[k] = 1;
  }
  return 1; /* sizes_ok: cold_nnz + hot_nnz = nnz, so every k was hit */
}

mx_status mx_format_check(const mx_format *F) {
  if (!F || !sizes_ok(F) || !cold_ok(F)) return MX_ERR_ARG;
  if (F->mode == MX_HOT_DU && !du_ok(F)) return MX_ERR_ARG;
  if (F->mode == MX_HOT_SE && !se_ok(F)) return MX_ERR_ARG;
  uint8_t *seen = calloc((size_t)F->nrows + 1, 1), *hit = calloc((size_t)F->nnz + 1, 1);
  int32_t *len = malloc(((size_t)F->nchunks * MX_CHUNK_ROWS + 1) * sizeof(int32_t));
  mx_status st = (seen && hit && len) ? MX_OK : MX_ERR_MEM;
  if (st == MX_OK) {
    hot_slot_lengths(F, len);
    if (!hot_rows_ok(F, seen) || !hot_order_ok(F, len) || !gather_ok(F, hit)) st = MX_ERR_ARG;
  }
  free(seen);
  free(hit);
  free(len);
  return st;
}
