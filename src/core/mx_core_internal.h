/* mx_core_internal.h - building blocks of mx_format_build, shared by the core sources and tests/core.
 * Not part of the contract of mx_format.h: other layers must not include it. */
#ifndef MX_CORE_INTERNAL_H
#define MX_CORE_INTERNAL_H

#include "mx_format.h"

/* 1 iff 0 <= n <= INT32_MAX: every count stored in the format must pass this (else MX_ERR_OVERFLOW). */
static inline int mx_fits_i32(int64_t n) { return n >= 0 && n <= INT32_MAX; }

/* A well formed: nrows, ncols >= 0, rowptr[0] = 0, rowptr nondecreasing, 0 <= colidx < ncols. */
mx_status mx_csr_validate(const mx_csr *A);

/* Crux c valid (no NaN, both in [0,1]); on success *out = c with tau_r clamped to <= tau_c. */
mx_status mx_crux_clamp(mx_crux c, mx_crux *out);

/* ceil(tau * nnz) in exact int64, clamped to [0, nnz]: the nonzeros a prefix must cover. */
int64_t mx_crux_target(double tau, int32_t nnz);

/* perm = 0..n-1 ordered by len descending, ties by index ascending (counting sort, O(n + maxlen)). */
mx_status mx_sort_desc_by_length(int32_t n, const int32_t *len, int32_t *perm);

/* Shortest prefix p of perm with sum len[perm[0..p-1]] >= target (0 if target <= 0). */
int32_t mx_prefix_cover(int32_t n, const int32_t *perm, const int32_t *len, int64_t target);

/* The crux selection: hot columns (a set) and hot rows (an ordered list), see mx_crux_select. */
typedef struct {
  int32_t hot_ncols;
  uint8_t *is_hot_col; /* ncols: 1 iff column selected by tau_c */
  int32_t hot_nrows;
  int32_t *hot_rows;   /* hot_nrows: original rows, hot length descending, ties by row index */
  int32_t *slot;       /* nrows: position of row i in hot_rows, -1 if cold */
  int32_t hot_nnz;     /* nonzeros in hot rows x hot columns */
} mx_crux_sel;

/* Columns by length descending (ties by index), shortest prefix covering ceil(tau_c*nnz); rows by
 * their length inside those columns, descending (ties by index), shortest prefix covering
 * ceil(tau_r*nnz). c must be clamped already. */
mx_status mx_crux_select(const mx_csr *A, mx_crux c, mx_crux_sel *S);
void mx_crux_sel_free(mx_crux_sel *S);

/* First cascade: the hot entries of each 8-row chunk, ordered by (column, input index). A chunk's
 * local columns are column occurrences: column j gets as many local columns as the largest number
 * of copies of (r, j) in one row r of the chunk (1 without duplicates), so that each local
 * (row, column) cell holds at most one nonzero. Entries e of chunk q are ent_ptr[q]..ent_ptr[q+1]-1. */
typedef struct {
  int32_t nchunks;
  int32_t hot_nnz;
  int32_t *ent_ptr;  /* nchunks+1 */
  int32_t *ent_src;  /* hot_nnz: index into A's colidx/val */
  int32_t *ent_lcol; /* hot_nnz: local column (occurrence) inside the chunk, 0..chunk_ncl[q]-1 */
  uint8_t *ent_r;    /* hot_nnz: row slot inside the chunk, 0..7 */
  int32_t *chunk_ncl;   /* nchunks: local columns kept by the first cascade */
  int32_t *chunk_width; /* nchunks: longest hot row of the chunk */
} mx_hot_layout;

mx_status mx_hot_layout_build(const mx_csr *A, const mx_crux_sel *S, mx_hot_layout *L);
void mx_hot_layout_free(mx_hot_layout *L);

/* DU block count sum_q ceil(chunk_ncl[q]/4) and SE slot count sum_q 8*chunk_width[q], in int64. */
int64_t mx_hot_du_nblocks(const mx_hot_layout *L);
int64_t mx_hot_se_nslots(const mx_hot_layout *L);

/* Exact bytes of each hot mode (hot_row included in both, gather map excluded):
 *   DU = 32*nchunks + 4*(nchunks+1) + 24*nblocks + 4 + 8*hot_nnz
 *        (hot_row, du_chunkptr, bitmap + 4 columns + valptr per block, last valptr, du_val)
 *   SE = 32*nchunks + 4*(nchunks+1) + 12*nslots   (hot_row, se_ptr, se_col + se_val) */
size_t mx_hot_du_bytes(int64_t nchunks, int64_t nblocks, int64_t hot_nnz);
size_t mx_hot_se_bytes(int64_t nchunks, int64_t nslots);

/* Second cascade encoders: fill the DU or SE arrays and hot_src of F from the layout. F->nchunks,
 * F->hot_nnz are set; the encoder allocates its own arrays and sets du_nblocks or se_nslots. */
mx_status mx_hot_du_encode(const mx_csr *A, const mx_hot_layout *L, mx_format *F);
mx_status mx_hot_se_encode(const mx_csr *A, const mx_hot_layout *L, mx_format *F);

/* Cold CSR over the original rows: every nonzero not in hot rows x hot columns, input order. */
mx_status mx_cold_csr_build(const mx_csr *A, const mx_crux_sel *S, mx_format *F);
/* 1 when the cold rows follow diagonals (mx_format.cold_diagonals), from a sample of rows. */
int mx_cold_follows_diagonals(const mx_format *F);

/* y[hot rows] += H x in chunk order (the hot half of mx_spmv; nothing without a hot part). */
void mx_hot_add(const mx_format *F, const double *x, double *y);

/* y = C x + z (z == NULL: y = C x; y == z allowed) for F's plain cold CSR C: the cold half of mx_spmv,
 * each row summed left to right from z[i] (or 0) as AIJ does. */
void mx_cold_mult(const mx_format *F, const double *x, const double *z, double *y);

/* y[hr[r]] += acc[r] for the real rows r < MX_CHUNK_ROWS of a hot chunk (hr[r] = -1: padding): the
 * store of every CPU hot kernel, so packed and plain ones add alike. */
void mx_chunk_store_add(const int32_t *hr, const double *acc, double *y);

#endif
