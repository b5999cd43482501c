/* mx_hot_costs.c - Cost_DU and Cost_SE of the built hot region (mx_hot_du_bytes, mx_hot_se_bytes),
 * the stored mode's counts read directly, the other mode's counts rebuilt from the stored arrays:
 *   SE slots from DU  = sum_q 8 * max_r (hot entries of row slot r),
 *   DU blocks from SE = sum_q ceil(ncl_q / 4), ncl_q = sum_j max_r copies(r, j) (first cascade).
 * Both are 0 when the format has no hot region. */
#include <stdlib.h>

#include "mx_core_internal.h"

/* sum_q 8 * width_q, width_q = longest row slot of chunk q, from the DU bitmaps. */
static int64_t se_nslots_from_du(const mx_format *F) {
  int64_t ns = 0;
  for (int32_t q = 0; q < F->nchunks; q++) {
    int32_t len[MX_CHUNK_ROWS] = {0}, w = 0;
    for (int32_t b = F->du_chunkptr[q]; b < F->du_chunkptr[q + 1]; b++)
      for (int r = 0; r < MX_CHUNK_ROWS; r++) len[r] += __builtin_popcount((F->du_bitmap[b] >> (r * MX_BLOCK_COLS)) & 0xFu);
    for (int r = 0; r < MX_CHUNK_ROWS; r++)
      if (len[r] > w) w = len[r];
    ns += (int64_t)MX_CHUNK_ROWS * w;
  }
  return ns;
}

/* (column, row slot) order for qsort. */
static int cmp_col_slot(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Local column count of one SE chunk: key = col*8 + r sorted; runs of equal keys are copies. */
static int32_t se_chunk_ncl(const mx_format *F, int32_t q, int64_t *key) {
  int32_t nk = 0, ncl = 0;
  for (int32_t s = F->se_ptr[q]; s < F->se_ptr[q + 1]; s++)
    if (F->se_col[s] >= 0) key[nk++] = (int64_t)F->se_col[s] * MX_CHUNK_ROWS + s % MX_CHUNK_ROWS;
  qsort(key, (size_t)nk, sizeof(int64_t), cmp_col_slot);
  for (int32_t t = 0; t < nk;) { /* one column j: max copies over its row slots */
    const int64_t j = key[t] / MX_CHUNK_ROWS;
    int32_t maxc = 0;
    while (t < nk && key[t] / MX_CHUNK_ROWS == j) {
      int32_t c = 0;
      const int64_t k0 = key[t];
      while (t < nk && key[t] == k0) c++, t++;
      if (c > maxc) maxc = c;
    }
    ncl += maxc;
  }
  return ncl;
}

/* sum_q ceil(ncl_q / 4) from the SE arrays; -1 if scratch cannot be allocated. */
static int64_t du_nblocks_from_se(const mx_format *F) {
  int32_t wmax = 0;
  for (int32_t q = 0; q < F->nchunks; q++)
    if (F->se_ptr[q + 1] - F->se_ptr[q] > wmax) wmax = F->se_ptr[q + 1] - F->se_ptr[q];
  int64_t *key = malloc(((size_t)wmax + 1) * sizeof(int64_t)), nb = 0;
  if (!key) return -1;
  for (int32_t q = 0; q < F->nchunks; q++) nb += ((int64_t)se_chunk_ncl(F, q, key) + MX_BLOCK_COLS - 1) / MX_BLOCK_COLS;
  free(key);
  return nb;
}

/* du_bytes, se_bytes = exact cost of each mode for F's hot region (SIZE_MAX if unknown: no memory). */
void mx_format_hot_costs(const mx_format *F, size_t *du_bytes, size_t *se_bytes) {
  int64_t nb = 0, ns = 0;
  if (F->mode == MX_HOT_DU) nb = F->du_nblocks, ns = se_nslots_from_du(F);
  if (F->mode == MX_HOT_SE) ns = F->se_nslots, nb = du_nblocks_from_se(F);
  if (F->mode == MX_HOT_NONE) {
    if (du_bytes) *du_bytes = 0;
    if (se_bytes) *se_bytes = 0;
    return;
  }
  if (du_bytes) *du_bytes = nb < 0 ? SIZE_MAX : mx_hot_du_bytes(F->nchunks, nb, F->hot_nnz);
  if (se_bytes) *se_bytes = mx_hot_se_bytes(F->nchunks, ns);
}
