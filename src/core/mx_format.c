/* mx_format.c - A = H + C: build (crux selection -> cold CSR -> first cascade -> DU or SE), value
 * refresh through the gather map, free, byte counts, and expansion back to CSR. */
#include <stdlib.h>
#include <string.h>

#include "mx_core_internal.h"

mx_status mx_hot_mode_choose(mx_mode_request req, int64_t nchunks, int64_t nb, int64_t ns, int64_t hot_nnz,
                             mx_hot_mode *mode) {
  const int du_ok = mx_fits_i32(nb * MX_BLOCK_COLS) && mx_fits_i32(nb + 1), se_ok = mx_fits_i32(ns);
  if (req == MX_MODE_DU || (req == MX_MODE_AUTO && !se_ok)) {
    *mode = MX_HOT_DU;
    return du_ok ? MX_OK : MX_ERR_OVERFLOW;
  }
  if (req == MX_MODE_SE || !du_ok) {
    *mode = MX_HOT_SE;
    return se_ok ? MX_OK : MX_ERR_OVERFLOW;
  }
  *mode = mx_hot_du_bytes(nchunks, nb, hot_nnz) < mx_hot_se_bytes(nchunks, ns) ? MX_HOT_DU : MX_HOT_SE;
  return MX_OK;
}

/* The hot mode for the request, from the layout's exact block and slot counts. */
static mx_status choose_mode(mx_mode_request req, const mx_hot_layout *L, mx_hot_mode *mode) {
  return mx_hot_mode_choose(req, L->nchunks, mx_hot_du_nblocks(L), mx_hot_se_nslots(L), L->hot_nnz, mode);
}

/* hot_row[t] = S->hot_rows[t] for t < hot_nrows, -1 up to nchunks*8. */
static mx_status hot_row_slots(const mx_crux_sel *S, mx_format *F) {
  const int64_t nslots = (int64_t)F->nchunks * MX_CHUNK_ROWS;
  if (!mx_fits_i32(nslots)) return MX_ERR_OVERFLOW;
  F->hot_row = malloc(((size_t)nslots + 1) * sizeof(int32_t));
  if (!F->hot_row) return MX_ERR_MEM;
  for (int64_t t = 0; t < nslots; t++) F->hot_row[t] = t < S->hot_nrows ? S->hot_rows[t] : -1;
  return MX_OK;
}

/* Hot part of F: first cascade, mode choice, second cascade. */
static mx_status build_hot(const mx_csr *A, const mx_crux_sel *S, mx_mode_request req, mx_format *F) {
  mx_hot_layout L;
  mx_status st = mx_hot_layout_build(A, S, &L);
  if (st != MX_OK) return st;
  st = choose_mode(req, &L, &F->mode);
  if (st == MX_OK) st = F->mode == MX_HOT_DU ? mx_hot_du_encode(A, &L, F) : mx_hot_se_encode(A, &L, F);
  mx_hot_layout_free(&L);
  return st;
}

/* F->cold_* = A's own arrays: the cold part of a format without hot nonzeros is A, in input order. */
static void borrow_cold(const mx_csr *A, mx_format *F) {
  F->cold_borrowed = 1;
  F->cold_nnz = F->nnz;
  F->cold_rowptr = (int32_t *)A->rowptr; /* never written through: cold_borrowed */
  F->cold_col = (int32_t *)A->colidx;
  F->cold_val = (double *)A->val;
  F->cold_src = NULL;
}

/* mx_format_build, or with borrow = 1 mx_format_build_borrow. */
static mx_status build(const mx_csr *A, mx_crux c, mx_mode_request req, int borrow, mx_format *F) {
  if (!F) return MX_ERR_ARG;
  memset(F, 0, sizeof(*F));
  mx_crux cc;
  if (req != MX_MODE_AUTO && req != MX_MODE_DU && req != MX_MODE_SE) return MX_ERR_ARG;
  mx_status st = mx_crux_clamp(c, &cc);
  if (st == MX_OK) st = mx_csr_validate(A);
  if (st != MX_OK) return st;
  mx_crux_sel S;
  st = mx_crux_select(A, cc, &S);
  if (st != MX_OK) return st;
  F->nrows = A->nrows;
  F->ncols = A->ncols;
  F->nnz = A->rowptr[A->nrows];
  F->crux = cc;
  F->hot_ncols = S.hot_ncols;
  F->hot_nrows = S.hot_nrows;
  F->hot_nnz = S.hot_nnz;
  F->nchunks = (int32_t)(((int64_t)S.hot_nrows + MX_CHUNK_ROWS - 1) / MX_CHUNK_ROWS);
  F->mode = MX_HOT_NONE;
  st = hot_row_slots(&S, F);
  if (st == MX_OK && borrow && S.hot_nnz == 0) borrow_cold(A, F);
  else if (st == MX_OK) st = mx_cold_csr_build(A, &S, F);
  if (st == MX_OK) F->cold_diagonals = mx_cold_follows_diagonals(F);
  if (st == MX_OK && F->hot_nnz > 0) st = build_hot(A, &S, req, F);
  mx_crux_sel_free(&S);
  if (st != MX_OK) mx_format_free(F);
  return st;
}

mx_status mx_format_build(const mx_csr *A, mx_crux c, mx_mode_request req, mx_format *F) {
  return build(A, c, req, 0, F);
}

mx_status mx_format_build_borrow(const mx_csr *A, mx_crux c, mx_mode_request req, mx_format *F) {
  return build(A, c, req, 1, F);
}

/* cold_val[p] = val[cold_src[p]]; hot values likewise, padding slots (src -1) = 0. A borrowed cold
 * part (no hot part) takes val itself. */
void mx_format_refresh_values(mx_format *F, const double *val) {
  if (!F) return;
  if (F->cold_borrowed) {
    F->cold_val = (double *)val; /* never written through: cold_borrowed */
    return;
  }
  const int32_t *cs = F->cold_src, *hs = F->hot_src;
  for (int32_t p = 0; p < F->cold_nnz; p++) F->cold_val[p] = val[cs[p]];
  if (F->mode == MX_HOT_DU)
    for (int32_t p = 0; p < F->hot_nnz; p++) F->du_val[p] = val[hs[p]];
  else if (F->mode == MX_HOT_SE)
    for (int32_t p = 0; p < F->se_nslots; p++) F->se_val[p] = hs[p] >= 0 ? val[hs[p]] : 0.0;
}

void mx_format_free(mx_format *F) {
  if (!F) return;
  free(F->hot_row);
  free(F->du_chunkptr);
  free(F->du_bitmap);
  free(F->du_col);
  free(F->du_valptr);
  free(F->du_val);
  free(F->se_ptr);
  free(F->se_col);
  free(F->se_val);
  if (!F->cold_borrowed) {
    free(F->cold_rowptr);
    free(F->cold_col);
    free(F->cold_val);
  }
  free(F->cold_src);
  free(F->hot_src);
  memset(F, 0, sizeof(*F));
}

/* 4*(nrows+1) + 12*nnz. */
const char *mx_status_name(mx_status s) {
  switch (s) {
  case MX_OK: return "ok";
  case MX_ERR_ARG: return "bad argument";
  case MX_ERR_MEM: return "out of memory";
  case MX_ERR_OVERFLOW: return "a count overflows int32";
  }
  return "unknown status";
}

size_t mx_csr_bytes(int32_t nrows, int32_t nnz) { return 4 * ((size_t)nrows + 1) + 12 * (size_t)nnz; }

/* Cold CSR bytes + the stored hot mode's bytes (mx_hot_du_bytes / mx_hot_se_bytes; 0 if none). */
size_t mx_format_bytes(const mx_format *F) {
  size_t b = mx_csr_bytes(F->nrows, F->cold_nnz);
  if (F->mode == MX_HOT_DU) b += mx_hot_du_bytes(F->nchunks, F->du_nblocks, F->hot_nnz);
  if (F->mode == MX_HOT_SE) b += mx_hot_se_bytes(F->nchunks, F->se_nslots);
  return b;
}

/* out[hot_row[q*8+r]] += number of hot entries in row slot r of chunk q, for every hot row. */
static void hot_row_counts(const mx_format *F, int32_t *out) {
  const int32_t *hr = F->hot_row;
  for (int32_t q = 0; q < F->nchunks; q++)
    for (int r = 0; r < MX_CHUNK_ROWS; r++) {
      const int32_t i = hr[q * MX_CHUNK_ROWS + r];
      if (i < 0) continue;
      if (F->mode == MX_HOT_DU)
        for (int32_t b = F->du_chunkptr[q]; b < F->du_chunkptr[q + 1]; b++)
          out[i] += __builtin_popcount((F->du_bitmap[b] >> (r * MX_BLOCK_COLS)) & 0xFu);
      if (F->mode == MX_HOT_SE)
        for (int32_t s = F->se_ptr[q] + r; s < F->se_ptr[q + 1]; s += MX_CHUNK_ROWS) out[i] += F->se_col[s] >= 0;
    }
}

/* colidx[cur[i]++], val[...] = every hot entry of row i, in storage order. */
static void hot_scatter(const mx_format *F, int32_t *cur, int32_t *colidx, double *val) {
  const int32_t *hr = F->hot_row;
  if (F->mode == MX_HOT_DU)
    for (int32_t q = 0; q < F->nchunks; q++)
      for (int32_t b = F->du_chunkptr[q]; b < F->du_chunkptr[q + 1]; b++) {
        int32_t v = F->du_valptr[b];
        for (uint32_t bits = F->du_bitmap[b]; bits; bits &= bits - 1) {
          const int bit = __builtin_ctz(bits);
          const int32_t i = hr[q * MX_CHUNK_ROWS + bit / MX_BLOCK_COLS];
          colidx[cur[i]] = F->du_col[(int64_t)b * MX_BLOCK_COLS + bit % MX_BLOCK_COLS];
          val[cur[i]++] = F->du_val[v++];
        }
      }
  if (F->mode == MX_HOT_SE)
    for (int32_t q = 0; q < F->nchunks; q++)
      for (int32_t s = F->se_ptr[q]; s < F->se_ptr[q + 1]; s++) {
        if (F->se_col[s] < 0) continue;
        const int32_t i = hr[q * MX_CHUNK_ROWS + s % MX_CHUNK_ROWS];
        colidx[cur[i]] = F->se_col[s];
        val[cur[i]++] = F->se_val[s];
      }
}

/* rowptr[i+1] - rowptr[i] = cold length + hot length of row i; each row: cold entries, then hot.
 * rowptr[i] serves as row i's cursor and is shifted back at the end (as in CSparse's cs_transpose). */
void mx_format_to_csr(const mx_format *F, int32_t *rowptr, int32_t *colidx, double *val) {
  const int32_t m = F->nrows, *Cp = F->cold_rowptr, *Cj = F->cold_col;
  const double *Cx = F->cold_val;
  rowptr[0] = 0;
  for (int32_t i = 0; i < m; i++) rowptr[i + 1] = Cp[i + 1] - Cp[i];
  hot_row_counts(F, rowptr + 1);
  for (int32_t i = 0; i < m; i++) rowptr[i + 1] += rowptr[i];
  for (int32_t i = 0; i < m; i++) /* cold part; rowptr[i] becomes the cursor after it */
    for (int32_t p = Cp[i]; p < Cp[i + 1]; p++) {
      colidx[rowptr[i]] = Cj[p];
      val[rowptr[i]++] = Cx[p];
    }
  hot_scatter(F, rowptr, colidx, val);
  for (int32_t i = m - 1; i > 0; i--) rowptr[i] = rowptr[i - 1]; /* end of row i-1 = start of row i */
  if (m > 0) rowptr[0] = 0;
}
