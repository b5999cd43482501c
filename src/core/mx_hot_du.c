/* mx_hot_du.c - dense unfolding: local column l of chunk q is column l%4 of block
 * du_chunkptr[q] + l/4; the entry at row slot r sets bit b = r*4 + l%4 and its value sits at
 * du_val[du_valptr[blk] + popcount(bitmap & ((1u<<b)-1))]. */
#include <stdlib.h>

#include "mx_core_internal.h"

/* du_chunkptr[q+1] = du_chunkptr[q] + ceil(ncl_q / 4). */
static void du_chunk_pointers(const mx_hot_layout *L, int32_t *cp) {
  cp[0] = 0;
  for (int32_t q = 0; q < L->nchunks; q++)
    cp[q + 1] = cp[q] + (int32_t)(((int64_t)L->chunk_ncl[q] + MX_BLOCK_COLS - 1) / MX_BLOCK_COLS);
}

/* bitmap[blk] |= 1 << (r*4 + c); col[blk*4 + c] = original column (-1 where no local column). */
static void du_bitmaps(const mx_csr *A, const mx_hot_layout *L, const int32_t *cp, uint32_t *bm, int32_t *col,
                       int32_t nblocks) {
  const int32_t *Ep = L->ent_ptr, *Es = L->ent_src, *El = L->ent_lcol, *Aj = A->colidx;
  const uint8_t *Er = L->ent_r;
  for (int32_t b = 0; b < nblocks; b++) bm[b] = 0;
  for (int64_t t = 0; t < (int64_t)nblocks * MX_BLOCK_COLS; t++) col[t] = -1;
  for (int32_t q = 0; q < L->nchunks; q++)
    for (int32_t e = Ep[q]; e < Ep[q + 1]; e++) {
      const int32_t blk = cp[q] + El[e] / MX_BLOCK_COLS, c = El[e] % MX_BLOCK_COLS;
      bm[blk] |= 1u << (Er[e] * MX_BLOCK_COLS + c);
      col[(int64_t)blk * MX_BLOCK_COLS + c] = Aj[Es[e]];
    }
}

/* valptr[blk+1] = valptr[blk] + popcount(bitmap[blk]). */
static void du_value_pointers(const uint32_t *bm, int32_t nblocks, int32_t *vp) {
  vp[0] = 0;
  for (int32_t b = 0; b < nblocks; b++) vp[b + 1] = vp[b] + __builtin_popcount(bm[b]);
}

/* du_val[pos] = val[src], hot_src[pos] = src, pos = valptr[blk] + popcount(bitmap & ((1u<<bit)-1)). */
static void du_values(const mx_csr *A, const mx_hot_layout *L, mx_format *F) {
  const int32_t *Ep = L->ent_ptr, *Es = L->ent_src, *El = L->ent_lcol, *cp = F->du_chunkptr, *vp = F->du_valptr;
  const uint8_t *Er = L->ent_r;
  const uint32_t *bm = F->du_bitmap;
  for (int32_t q = 0; q < L->nchunks; q++)
    for (int32_t e = Ep[q]; e < Ep[q + 1]; e++) {
      const int32_t blk = cp[q] + El[e] / MX_BLOCK_COLS;
      const unsigned bit = (unsigned)(Er[e] * MX_BLOCK_COLS + El[e] % MX_BLOCK_COLS);
      const int32_t pos = vp[blk] + __builtin_popcount(bm[blk] & ((1u << bit) - 1u));
      F->du_val[pos] = A->val[Es[e]];
      F->hot_src[pos] = Es[e];
    }
}

/* F's DU arrays from the layout; MX_ERR_OVERFLOW if 4*du_nblocks does not fit int32. */
mx_status mx_hot_du_encode(const mx_csr *A, const mx_hot_layout *L, mx_format *F) {
  const int64_t nb = mx_hot_du_nblocks(L);
  if (!mx_fits_i32(nb * MX_BLOCK_COLS) || !mx_fits_i32(nb + 1)) return MX_ERR_OVERFLOW;
  F->du_nblocks = (int32_t)nb;
  F->du_chunkptr = malloc(((size_t)L->nchunks + 1) * sizeof(int32_t));
  F->du_bitmap = malloc(((size_t)nb + 1) * sizeof(uint32_t));
  F->du_col = malloc(((size_t)nb * MX_BLOCK_COLS + 1) * sizeof(int32_t));
  F->du_valptr = malloc(((size_t)nb + 1) * sizeof(int32_t));
  F->du_val = malloc(((size_t)L->hot_nnz + 1) * sizeof(double));
  F->hot_src = malloc(((size_t)L->hot_nnz + 1) * sizeof(int32_t));
  if (!F->du_chunkptr || !F->du_bitmap || !F->du_col || !F->du_valptr || !F->du_val || !F->hot_src) return MX_ERR_MEM;
  du_chunk_pointers(L, F->du_chunkptr);
  du_bitmaps(A, L, F->du_chunkptr, F->du_bitmap, F->du_col, F->du_nblocks);
  du_value_pointers(F->du_bitmap, F->du_nblocks, F->du_valptr);
  du_values(A, L, F);
  return MX_OK;
}
