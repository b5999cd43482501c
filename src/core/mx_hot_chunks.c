/* mx_hot_chunks.c - first cascade: hot row t lives in chunk t/8, slot t%8; inside a chunk only the
 * columns holding a nonzero get a local column (one per column occurrence, see mx_hot_layout). */
#include <stdlib.h>
#include <string.h>

#include "mx_core_internal.h"

void mx_hot_layout_free(mx_hot_layout *L) {
  if (!L) return;
  free(L->ent_ptr);
  free(L->ent_src);
  free(L->ent_lcol);
  free(L->ent_r);
  free(L->chunk_ncl);
  free(L->chunk_width);
  memset(L, 0, sizeof(*L));
}

/* ord = hot entries sorted by (column, input index) (counting sort on columns); oslot = hot slot. */
static mx_status hot_entries_by_column(const mx_csr *A, const mx_crux_sel *S, int32_t *ord, int32_t *oslot) {
  const int32_t n = A->ncols, *Ap = A->rowptr, *Aj = A->colidx;
  int32_t *cp = calloc((size_t)n + 1, sizeof(int32_t));
  if (!cp) return MX_ERR_MEM;
  for (int32_t t = 0; t < S->hot_nrows; t++) {
    const int32_t i = S->hot_rows[t];
    for (int32_t k = Ap[i]; k < Ap[i + 1]; k++)
      if (S->is_hot_col[Aj[k]]) cp[Aj[k]]++;
  }
  int32_t sum = 0;
  for (int32_t j = 0; j < n; j++) {
    int32_t c = cp[j];
    cp[j] = sum;
    sum += c;
  }
  for (int32_t i = 0; i < A->nrows; i++) { /* rows in input order: input index increases */
    const int32_t s = S->slot[i];
    if (s < 0) continue;
    for (int32_t k = Ap[i]; k < Ap[i + 1]; k++) {
      if (!S->is_hot_col[Aj[k]]) continue;
      const int32_t p = cp[Aj[k]]++;
      ord[p] = k;
      oslot[p] = s;
    }
  }
  free(cp);
  return MX_OK;
}

/* Local columns of one chunk whose entries e0..e1-1 are sorted by (column, input index): the
 * copies of (r, j) in one row are consecutive, the k-th copy takes local column base(j) + k, and
 * column j reserves max_r copies(r, j) local columns. Returns the chunk's local column count. */
static int32_t chunk_local_columns(const int32_t *Aj, int32_t e0, int32_t e1, const int32_t *src, const uint8_t *r,
                                   int32_t *lcol) {
  int32_t base = 0;
  for (int32_t e = e0; e < e1;) {
    const int32_t j = Aj[src[e]];
    int32_t copies = 0, maxcopies = 0;
    for (; e < e1 && Aj[src[e]] == j; e++) {
      copies = (e > e0 && Aj[src[e - 1]] == j && r[e - 1] == r[e]) ? copies + 1 : 1;
      lcol[e] = base + copies - 1;
      if (copies > maxcopies) maxcopies = copies;
    }
    base += maxcopies;
  }
  return base;
}

/* L = per chunk entry lists sorted by (column, input index), their local columns, ncl and width. */
mx_status mx_hot_layout_build(const mx_csr *A, const mx_crux_sel *S, mx_hot_layout *L) {
  memset(L, 0, sizeof(*L));
  const int64_t nchunks = ((int64_t)S->hot_nrows + MX_CHUNK_ROWS - 1) / MX_CHUNK_ROWS;
  const int32_t h = S->hot_nnz;
  L->nchunks = (int32_t)nchunks; /* <= hot_nrows */
  L->hot_nnz = h;
  int32_t *ord = malloc(((size_t)h + 1) * sizeof(int32_t)), *oslot = malloc(((size_t)h + 1) * sizeof(int32_t));
  L->ent_ptr = calloc((size_t)nchunks + 1, sizeof(int32_t));
  L->ent_src = malloc(((size_t)h + 1) * sizeof(int32_t));
  L->ent_lcol = malloc(((size_t)h + 1) * sizeof(int32_t));
  L->ent_r = malloc((size_t)h + 1);
  L->chunk_ncl = calloc((size_t)nchunks + 1, sizeof(int32_t));
  L->chunk_width = calloc((size_t)nchunks + 1, sizeof(int32_t));
  mx_status st = (ord && oslot && L->ent_ptr && L->ent_src && L->ent_lcol && L->ent_r && L->chunk_ncl && L->chunk_width)
                     ? MX_OK
                     : MX_ERR_MEM;
  if (st == MX_OK) st = hot_entries_by_column(A, S, ord, oslot);
  if (st == MX_OK) {
    int32_t *Ep = L->ent_ptr;
    for (int32_t p = 0; p < h; p++) Ep[oslot[p] / MX_CHUNK_ROWS + 1]++;
    for (int32_t q = 0; q < nchunks; q++) Ep[q + 1] += Ep[q];
    for (int32_t p = 0; p < h; p++) { /* stable scatter keeps (column, input index) order */
      const int32_t e = Ep[oslot[p] / MX_CHUNK_ROWS]++;
      L->ent_src[e] = ord[p];
      L->ent_r[e] = (uint8_t)(oslot[p] % MX_CHUNK_ROWS);
    }
    for (int32_t q = (int32_t)nchunks; q > 0; q--) Ep[q] = Ep[q - 1];
    Ep[0] = 0;
    for (int32_t q = 0; q < nchunks; q++) {
      int32_t rowlen[MX_CHUNK_ROWS] = {0}, w = 0;
      L->chunk_ncl[q] = chunk_local_columns(A->colidx, Ep[q], Ep[q + 1], L->ent_src, L->ent_r, L->ent_lcol);
      for (int32_t e = Ep[q]; e < Ep[q + 1]; e++) rowlen[L->ent_r[e]]++;
      for (int r = 0; r < MX_CHUNK_ROWS; r++)
        if (rowlen[r] > w) w = rowlen[r];
      L->chunk_width[q] = w;
    }
  }
  free(ord);
  free(oslot);
  if (st != MX_OK) mx_hot_layout_free(L);
  return st;
}

/* sum_q ceil(ncl_q / 4). */
int64_t mx_hot_du_nblocks(const mx_hot_layout *L) {
  int64_t nb = 0;
  for (int32_t q = 0; q < L->nchunks; q++) nb += ((int64_t)L->chunk_ncl[q] + MX_BLOCK_COLS - 1) / MX_BLOCK_COLS;
  return nb;
}

/* sum_q 8 * width_q. */
int64_t mx_hot_se_nslots(const mx_hot_layout *L) {
  int64_t ns = 0;
  for (int32_t q = 0; q < L->nchunks; q++) ns += (int64_t)MX_CHUNK_ROWS * L->chunk_width[q];
  return ns;
}

/* DU = 32*nchunks + 4*(nchunks+1) + 24*nblocks + 4 + 8*hot_nnz. */
size_t mx_hot_du_bytes(int64_t nchunks, int64_t nblocks, int64_t hot_nnz) {
  return (size_t)(4 * MX_CHUNK_ROWS * nchunks + 4 * (nchunks + 1) + (4 + 4 * MX_BLOCK_COLS + 4) * nblocks + 4 +
                  8 * hot_nnz);
}

/* SE = 32*nchunks + 4*(nchunks+1) + 12*nslots. */
size_t mx_hot_se_bytes(int64_t nchunks, int64_t nslots) {
  return (size_t)(4 * MX_CHUNK_ROWS * nchunks + 4 * (nchunks + 1) + 12 * nslots);
}
