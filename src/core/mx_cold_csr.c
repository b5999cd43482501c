/* mx_cold_csr.c - C = A - H as CSR over the original rows: entry k of row i is cold iff row i is
 * not hot or column colidx[k] is not hot; input order is kept; cold_src[p] = k. */
#include <stdlib.h>

#include "mx_core_internal.h"

/* 1 iff entry (i, j) belongs to the hot region. */
static inline int is_hot(const mx_crux_sel *S, int32_t i, int32_t j) { return S->slot[i] >= 0 && S->is_hot_col[j]; }

/* F->cold_* and F->cold_src from A and the selection. */
mx_status mx_cold_csr_build(const mx_csr *A, const mx_crux_sel *S, mx_format *F) {
  const int32_t m = A->nrows, *Ap = A->rowptr, *Aj = A->colidx;
  const double *Ax = A->val;
  const int32_t cnnz = Ap[m] - S->hot_nnz;
  F->cold_nnz = cnnz;
  F->cold_rowptr = malloc(((size_t)m + 1) * sizeof(int32_t));
  F->cold_col = malloc(((size_t)cnnz + 1) * sizeof(int32_t));
  F->cold_val = malloc(((size_t)cnnz + 1) * sizeof(double));
  F->cold_src = malloc(((size_t)cnnz + 1) * sizeof(int32_t));
  if (!F->cold_rowptr || !F->cold_col || !F->cold_val || !F->cold_src) return MX_ERR_MEM;
  int32_t *Cp = F->cold_rowptr, *Cj = F->cold_col, *Cs = F->cold_src;
  double *Cx = F->cold_val;
  int32_t p = 0;
  Cp[0] = 0;
  for (int32_t i = 0; i < m; i++) {
    if (S->slot[i] < 0) { /* whole row cold: plain copy */
      for (int32_t k = Ap[i]; k < Ap[i + 1]; k++, p++) {
        Cj[p] = Aj[k];
        Cx[p] = Ax[k];
        Cs[p] = k;
      }
    } else {
      for (int32_t k = Ap[i]; k < Ap[i + 1]; k++) {
        if (is_hot(S, i, Aj[k])) continue;
        Cj[p] = Aj[k];
        Cx[p] = Ax[k];
        Cs[p++] = k;
      }
    }
    Cp[i + 1] = p;
  }
  return p == cnnz ? MX_OK : MX_ERR_ARG; /* p != cnnz would mean S does not match A */
}

/* 1 when at least half of the cold nonzeros (i, j) continue a diagonal of the row above ((i - 1, j - 1)
 * is one too: stencils, banded FEM), so that the B (C) lines a row touches column-major are the row
 * above's; counted over up to MX_COLD_DIAGONAL_ROWS rows spread over the matrix. */
#define MX_COLD_DIAGONAL_ROWS 64
int mx_cold_follows_diagonals(const mx_format *F) {
  const int32_t *Cp = F->cold_rowptr, *Cj = F->cold_col;
  const int32_t step = F->nrows / MX_COLD_DIAGONAL_ROWS + 1;
  int64_t seen = 0, follow = 0;
  for (int32_t i = 1; i < F->nrows; i += step) {
    int32_t q = Cp[i - 1];
    for (int32_t p = Cp[i]; p < Cp[i + 1]; p++) { /* both rows' columns ascend: one merge */
      while (q < Cp[i] && Cj[q] < Cj[p] - 1) q++;
      follow += q < Cp[i] && Cj[q] == Cj[p] - 1;
      seen++;
    }
  }
  return 2 * follow >= seen;
}
