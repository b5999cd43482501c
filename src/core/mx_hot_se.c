/* mx_hot_se.c - sparse encoding: the k-th hot entry (column order) of row slot r of chunk q is
 * slot se_ptr[q] + k*8 + r, k < width_q = longest row of the chunk; padding: column -1, value 0. */
#include <stdlib.h>

#include "mx_core_internal.h"

/* se_ptr[q+1] = se_ptr[q] + 8*width_q. */
static void se_chunk_pointers(const mx_hot_layout *L, int32_t *sp) {
  sp[0] = 0;
  for (int32_t q = 0; q < L->nchunks; q++) sp[q + 1] = sp[q] + MX_CHUNK_ROWS * L->chunk_width[q];
}

/* Slot (k, r) of chunk q <- k-th entry of row slot r; the rest stays padding (-1, 0, src -1). */
static void se_fill(const mx_csr *A, const mx_hot_layout *L, mx_format *F) {
  const int32_t *Ep = L->ent_ptr, *Es = L->ent_src, *sp = F->se_ptr, *Aj = A->colidx;
  const uint8_t *Er = L->ent_r;
  for (int32_t s = 0; s < F->se_nslots; s++) {
    F->se_col[s] = -1;
    F->se_val[s] = 0.0;
    F->hot_src[s] = -1;
  }
  for (int32_t q = 0; q < L->nchunks; q++) {
    int32_t k[MX_CHUNK_ROWS] = {0};
    for (int32_t e = Ep[q]; e < Ep[q + 1]; e++) {
      const int32_t s = sp[q] + k[Er[e]]++ * MX_CHUNK_ROWS + Er[e];
      F->se_col[s] = Aj[Es[e]];
      F->se_val[s] = A->val[Es[e]];
      F->hot_src[s] = Es[e];
    }
  }
}

/* F's SE arrays from the layout; MX_ERR_OVERFLOW if se_nslots does not fit int32. */
mx_status mx_hot_se_encode(const mx_csr *A, const mx_hot_layout *L, mx_format *F) {
  const int64_t ns = mx_hot_se_nslots(L);
  if (!mx_fits_i32(ns)) return MX_ERR_OVERFLOW;
  F->se_nslots = (int32_t)ns;
  F->se_ptr = malloc(((size_t)L->nchunks + 1) * sizeof(int32_t));
  F->se_col = malloc(((size_t)ns + 1) * sizeof(int32_t));
  F->se_val = malloc(((size_t)ns + 1) * sizeof(double));
  F->hot_src = malloc(((size_t)ns + 1) * sizeof(int32_t));
  if (!F->se_ptr || !F->se_col || !F->se_val || !F->hot_src) return MX_ERR_MEM;
  se_chunk_pointers(L, F->se_ptr);
  se_fill(A, L, F);
  return MX_OK;
}
