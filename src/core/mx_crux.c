/* mx_crux.c - the crux selection: hot columns = shortest prefix of the columns sorted by length
 * (descending, ties by index) covering ceil(tau_c*nnz); hot rows = shortest prefix of the rows
 * sorted by their length inside the hot columns covering ceil(tau_r*nnz). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mx_core_internal.h"

/* A valid: rowptr[0] = 0 <= rowptr[i] <= rowptr[i+1], 0 <= colidx[k] < ncols. */
mx_status mx_csr_validate(const mx_csr *A) {
  if (!A || A->nrows < 0 || A->ncols < 0 || !A->rowptr) return MX_ERR_ARG;
  const int32_t m = A->nrows, n = A->ncols, *Ap = A->rowptr, *Aj = A->colidx;
  if (Ap[0] != 0) return MX_ERR_ARG;
  for (int32_t i = 0; i < m; i++)
    if (Ap[i + 1] < Ap[i]) return MX_ERR_ARG;
  if (Ap[m] > 0 && (!Aj || !A->val)) return MX_ERR_ARG;
  for (int32_t k = 0; k < Ap[m]; k++)
    if (Aj[k] < 0 || Aj[k] >= n) return MX_ERR_ARG;
  return MX_OK;
}

/* 0 <= tau_c <= 1, 0 <= tau_r <= 1, no NaN; out = (tau_c, min(tau_r, tau_c)). */
mx_status mx_crux_clamp(mx_crux c, mx_crux *out) {
  if (!(c.tau_c >= 0.0 && c.tau_c <= 1.0) || !(c.tau_r >= 0.0 && c.tau_r <= 1.0)) return MX_ERR_ARG;
  out->tau_c = c.tau_c;
  out->tau_r = c.tau_r <= c.tau_c ? c.tau_r : c.tau_c;
  return MX_OK;
}

/* ceil of the double product tau*nnz (no epsilon, so any other code evaluating the same C
 * expression agrees bit for bit), clamped to [0, nnz]. */
int64_t mx_crux_target(double tau, int32_t nnz) {
  double t = ceil(tau * (double)nnz);
  if (!(t > 0.0)) return 0;
  if (t >= (double)nnz) return nnz;
  return (int64_t)t;
}

mx_status mx_crux_targets(mx_crux c, int32_t nnz, mx_crux *clamped, int64_t *target_c, int64_t *target_r) {
  mx_status st = mx_crux_clamp(c, clamped);
  if (st != MX_OK) return st;
  *target_c = mx_crux_target(clamped->tau_c, nnz);
  *target_r = mx_crux_target(clamped->tau_r, nnz);
  return MX_OK;
}

/* Counting sort: start[l] = #{j : len[j] > l}; scanning j upward keeps ties by index. */
mx_status mx_sort_desc_by_length(int32_t n, const int32_t *len, int32_t *perm) {
  int32_t maxlen = 0;
  for (int32_t j = 0; j < n; j++)
    if (len[j] > maxlen) maxlen = len[j];
  int32_t *start = calloc((size_t)maxlen + 2, sizeof(int32_t));
  if (!start) return MX_ERR_MEM;
  for (int32_t j = 0; j < n; j++) start[len[j]]++;
  int32_t above = 0; /* rows longer than l */
  for (int32_t l = maxlen; l >= 0; l--) {
    int32_t cnt = start[l];
    start[l] = above;
    above += cnt;
  }
  for (int32_t j = 0; j < n; j++) perm[start[len[j]]++] = j;
  free(start);
  return MX_OK;
}

/* p = min { p : sum_{t<p} len[perm[t]] >= target }. */
int32_t mx_prefix_cover(int32_t n, const int32_t *perm, const int32_t *len, int64_t target) {
  int64_t sum = 0;
  int32_t p = 0;
  while (p < n && sum < target) sum += len[perm[p++]];
  return p;
}

void mx_crux_sel_free(mx_crux_sel *S) {
  if (!S) return;
  free(S->is_hot_col);
  free(S->hot_rows);
  free(S->slot);
  memset(S, 0, sizeof(*S));
}

/* collen[j] = #{k : colidx[k] = j}. */
static void col_lengths(const mx_csr *A, int32_t *collen) {
  const int32_t nnz = A->rowptr[A->nrows], *Aj = A->colidx;
  memset(collen, 0, (size_t)A->ncols * sizeof(int32_t));
  for (int32_t k = 0; k < nnz; k++) collen[Aj[k]]++;
}

/* rowlen[i] = #{k in row i : is_hot_col[colidx[k]]}. */
static void hot_row_lengths(const mx_csr *A, const uint8_t *is_hot_col, int32_t *rowlen) {
  const int32_t m = A->nrows, *Ap = A->rowptr, *Aj = A->colidx;
  for (int32_t i = 0; i < m; i++) {
    int32_t l = 0;
    for (int32_t k = Ap[i]; k < Ap[i + 1]; k++) l += is_hot_col[Aj[k]];
    rowlen[i] = l;
  }
}

/* S = hot columns (prefix of columns by length) and hot rows (prefix of rows by hot length). */
mx_status mx_crux_select(const mx_csr *A, mx_crux c, mx_crux_sel *S) {
  const int32_t m = A->nrows, n = A->ncols, nnz = A->rowptr[m];
  memset(S, 0, sizeof(*S));
  int32_t *len = malloc(((size_t)(m > n ? m : n) + 1) * sizeof(int32_t));
  int32_t *perm = malloc(((size_t)(m > n ? m : n) + 1) * sizeof(int32_t));
  S->is_hot_col = calloc((size_t)n + 1, 1);
  S->slot = malloc(((size_t)m + 1) * sizeof(int32_t));
  mx_status st = (len && perm && S->is_hot_col && S->slot) ? MX_OK : MX_ERR_MEM;
  if (st == MX_OK && mx_crux_target(c.tau_c, nnz) == 0) { /* no hot column, so no hot row (tau_r <= tau_c): */
    for (int32_t i = 0; i < m; i++) S->slot[i] = -1;     /* all cold, without the sorts (the default (0,0)) */
    S->hot_rows = malloc(sizeof(int32_t));
    if (!S->hot_rows) st = MX_ERR_MEM;
    free(len);
    free(perm);
    if (st != MX_OK) mx_crux_sel_free(S);
    return st;
  }
  if (st == MX_OK) { /* columns */
    col_lengths(A, len);
    st = mx_sort_desc_by_length(n, len, perm);
  }
  if (st == MX_OK) {
    S->hot_ncols = mx_prefix_cover(n, perm, len, mx_crux_target(c.tau_c, nnz));
    for (int32_t t = 0; t < S->hot_ncols; t++) S->is_hot_col[perm[t]] = 1;
    hot_row_lengths(A, S->is_hot_col, len); /* rows */
    st = mx_sort_desc_by_length(m, len, perm);
  }
  if (st == MX_OK) {
    S->hot_nrows = mx_prefix_cover(m, perm, len, mx_crux_target(c.tau_r, nnz));
    S->hot_rows = malloc(((size_t)S->hot_nrows + 1) * sizeof(int32_t));
    if (!S->hot_rows) st = MX_ERR_MEM;
  }
  if (st == MX_OK) {
    int64_t hot_nnz = 0;
    for (int32_t i = 0; i < m; i++) S->slot[i] = -1;
    for (int32_t t = 0; t < S->hot_nrows; t++) {
      S->hot_rows[t] = perm[t];
      S->slot[perm[t]] = t;
      hot_nnz += len[perm[t]];
    }
    S->hot_nnz = (int32_t)hot_nnz; /* <= nnz */
  }
  free(len);
  free(perm);
  if (st != MX_OK) mx_crux_sel_free(S);
  return st;
}
