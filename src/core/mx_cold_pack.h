/* mx_cold_pack.h - the third cascade on the cold region: a lossless packed form of a cold CSR
 * (pure C99, no PETSc, no CUDA).
 *
 * The cold CSR (rowptr, col, val) is stored with the same row pointers and the same nonzero order,
 * but each nonzero's value and column in fewer bytes where the matrix allows it:
 *   values  PLAIN    8 bytes per nonzero;
 *           DICT0    one distinct value: dict[0], nothing per nonzero;
 *           DICT8    <= 256 distinct values: dict[ndict] + a 1-byte code per nonzero;
 *           DICT16   <= 65536 distinct values: dict[ndict] + a 2-byte code per nonzero;
 *           COLCONST every nonzero of column j equals s_j: dict = s[ncols] (0.0 for an empty
 *                    column), nothing per nonzero (value of nonzero p = dict[col(p)]).
 *           Values are compared by BIT PATTERN (-0.0 != 0.0, every NaN payload its own value), so a
 *           decoded value is bit-identical to the stored one. A dictionary is sorted ascending by
 *           bit pattern (as uint64); code = rank in it.
 *   columns PLAIN    4 bytes per nonzero;
 *           DELTA8 / DELTA16: nonzeros cut into segments of MX_PACK_SEG = 32 by their index
 *                    (segment k = nonzeros 32k .. 32k+31, one warp load on the GPU), each with a
 *                    32-bit base (its smallest column) and a 1- or 2-byte unsigned delta per
 *                    nonzero: col(p) = seg_base[p / 32] + delta[p]. One width per matrix.
 *   rows    PLAIN    the row pointers as they are, 4 bytes per row;
 *           OFF16    rows cut into chunks of MX_PACK_RCHUNK = 64 by their index, each with a 32-bit
 *                    base (the row pointer of its first row) and a 2-byte offset per row pointer:
 *                    rowptr(i) = row_base[i / 64] + row_off[i], i <= nrows. Fits where no chunk's
 *                    rows hold more than 65535 nonzeros. Forced only: AUTO keeps the row pointers
 *                    plain, because the packed GPU kernels read OFF16 SLOWER despite the bytes it
 *                    saves (they are latency-bound, not byte-bound; docs/performance.md, "Cold
 *                    kernels"). Kept, tested, for the A/B when the kernels change.
 * Each encoding is chosen by EXACT byte count (mx_cold_pack_choose) from a few statistics of the
 * matrix (mx_cold_pack_stats), so the host encoder here and the GPU encoder (src/cuda) decide alike
 * and produce the same bytes.
 *
 * Decoding never changes a product or the summation order: value(p) * x[col(p)] is the same double
 * as in the plain CSR (for COLCONST s_j * x_j == a_ij * x_j because s_j == a_ij bitwise), and the
 * kernels sum in the plain kernels' order, so results are bitwise equal to the uncompressed ones.
 */
#ifndef MX_COLD_PACK_H
#define MX_COLD_PACK_H

#include <stddef.h>
#include <stdint.h>
#include "mx_format.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MX_PACK_SEG 32            /* nonzeros per index segment (one warp) */
#define MX_PACK_RCHUNK 64         /* row pointers per row chunk (OFF16) */
#define MX_PACK_DICT_MAX 65536    /* most dictionary entries (DICT16) */
#define MX_PACK_AUTO (-1)         /* request: choose by exact byte count */

typedef enum { MX_VAL_PLAIN = 0, MX_VAL_DICT0 = 1, MX_VAL_DICT8 = 2, MX_VAL_DICT16 = 3, MX_VAL_COLCONST = 4 } mx_val_enc;
typedef enum { MX_IDX_PLAIN = 0, MX_IDX_DELTA8 = 1, MX_IDX_DELTA16 = 2 } mx_idx_enc;
typedef enum { MX_ROW_PLAIN = 0, MX_ROW_OFF16 = 1 } mx_row_enc;

/* -mat_matxtract_compress auto|off */
typedef enum { MX_COMPRESS_OFF = 0, MX_COMPRESS_AUTO = 1 } mx_compress_request;

/* Which form of the cold region a request allows (the GPU's mx_device_compress): the packed form
 * here only; the row-pattern form (mx_cold_rowpat.h) where it holds the matrix in fewer bytes than
 * any packed form could, else the packed form; or the row-pattern form forced (tests, A/B). */
typedef enum { MX_FORM_PACK = 0, MX_FORM_AUTO = 1, MX_FORM_ROWPAT = 2 } mx_pack_form;

/* What to build: each field MX_PACK_AUTO (smallest exact bytes) or one encoding forced (tests).
 * form: an mx_pack_form (0 = MX_FORM_PACK, what an initializer that leaves it out asks). */
typedef struct {
  int val;  /* MX_PACK_AUTO or an mx_val_enc */
  int idx;  /* MX_PACK_AUTO or an mx_idx_enc */
  int row;  /* MX_PACK_AUTO or an mx_row_enc */
  int form; /* an mx_pack_form */
} mx_pack_request;

/* OFF = {PLAIN, PLAIN, PLAIN, PACK}; AUTO = {AUTO, AUTO, AUTO, FORM_AUTO}. */
mx_pack_request mx_pack_request_of(mx_compress_request c);

/* What the choice depends on, nothing else (the GPU encoder computes the same numbers). */
typedef struct {
  int64_t nnz;
  int32_t ncols;
  int64_t ndistinct; /* distinct value bit patterns, capped at MX_PACK_DICT_MAX + 1 */
  int colconst;      /* 1 iff in every column all nonzeros have one bit pattern (1 when nnz = 0) */
  int64_t max_span;  /* max over index segments of (largest - smallest column); 0 when nnz = 0 */
  int32_t nrows;
  int64_t max_row_span; /* max over row chunks of rowptr(last pointer in it) - rowptr(first) */
} mx_cold_pack_stats;

/* Exact bytes of the value part and of the column part of each encoding (see the table above:
 * PLAIN 8*nnz; DICTw 8*ndistinct + w*nnz (w = 0, 1, 2); COLCONST 8*ncols; column PLAIN 4*nnz;
 * DELTAw 4*ceil(nnz/32) + w*nnz). */
size_t mx_pack_value_bytes(mx_val_enc e, const mx_cold_pack_stats *st);
size_t mx_pack_index_bytes(mx_idx_enc e, int64_t nnz);
/* Row part: PLAIN 4*(nrows+1); OFF16 4*ceil((nrows+1)/64) + 2*(nrows+1). */
size_t mx_pack_row_bytes(mx_row_enc e, int32_t nrows);
/* Fewest bytes a packed form of nrows rows and nnz nonzeros that AUTO chooses can take: plain row
 * pointers (AUTO's), one value (DICT0: 8; nothing when nnz = 0) and the smaller of plain columns and
 * 1-byte deltas. A form smaller than this is smaller than the pack AUTO would choose, without
 * building it. */
size_t mx_pack_bytes_floor(int32_t nrows, int64_t nnz);
/* 1 iff encoding e can hold the matrix of these statistics. */
int mx_pack_value_fits(mx_val_enc e, const mx_cold_pack_stats *st);
int mx_pack_index_fits(mx_idx_enc e, const mx_cold_pack_stats *st);
int mx_pack_row_fits(mx_row_enc e, const mx_cold_pack_stats *st);

/* The encodings for a request: a forced one (MX_ERR_ARG if it cannot hold the matrix or is not an
 * encoding), or AUTO = the fitting one of fewest bytes moved per product, ties to the first of
 * PLAIN, DICT0, DICT8, DICT16, COLCONST (columns: PLAIN, DELTA8, DELTA16; rows: always PLAIN, see
 * OFF16 above). Bytes moved = the exact
 * bytes above, plus for COLCONST 16*ncols: the GPU kernels scale x once per product (xs_j = s_j x_j:
 * read x, write xs; then gather xs where the plain kernel gathers x) instead of gathering s_j per
 * nonzero, which cost more than it saved (docs/performance.md, "Behind the source's constants"). */
mx_status mx_cold_pack_choose(const mx_pack_request *req, const mx_cold_pack_stats *st, mx_val_enc *v, mx_idx_enc *ix,
                              mx_row_enc *rw);

/* 1 iff the value choice of request val (MX_PACK_AUTO or an encoding) is COLCONST however many
 * distinct values there are beyond one: the matrix is column-constant (st->colconst) and COLCONST
 * moves fewer bytes than a two-value dictionary (a larger dictionary moves more). st->ndistinct is
 * not read: a builder that knows the matrix has two values or more need not count them. */
int mx_pack_colconst_settles(int val, const mx_cold_pack_stats *st);

/* The value encoding a refresh chooses again for new values of statistics st (the columns stay) under
 * request req: mx_cold_pack_choose's, or PLAIN where a forced encoding no longer holds them. */
mx_val_enc mx_cold_pack_refresh_choose(const mx_pack_request *req, const mx_cold_pack_stats *st);

/* A packed cold CSR. Owns every array. */
typedef struct {
  int32_t nrows, ncols, nnz;
  mx_pack_request req; /* as built; a value refresh re-chooses the value encoding by req.val */
  mx_val_enc val_enc;
  mx_idx_enc idx_enc;
  mx_row_enc row_enc;

  /* row pointers (the cold CSR's, decoded by mx_pack_rowptr) */
  int32_t *rowptr;   /* nrows+1, PLAIN */
  int32_t nrchunk;   /* ceil((nrows+1)/64) for OFF16, else 0 */
  int32_t *row_base; /* nrchunk, OFF16 */
  uint16_t *row_off; /* nrows+1, OFF16 */

  /* values */
  int32_t ndict;   /* DICT*: distinct values; COLCONST: ncols; PLAIN: 0 */
  double *dict;    /* ndict: sorted by bit pattern (DICT*), or s_j per column (COLCONST) */
  uint8_t *code8;  /* nnz, DICT8 */
  uint16_t *code16;/* nnz, DICT16 */
  double *val;     /* nnz, PLAIN */

  /* columns */
  int32_t nseg;      /* ceil(nnz/32) for DELTA*, else 0 */
  int32_t *seg_base; /* nseg */
  uint8_t *delta8;   /* nnz, DELTA8 */
  uint16_t *delta16; /* nnz, DELTA16 */
  int32_t *col;      /* nnz, PLAIN */

  /* the last value refresh: the encoding before it, and 1 if it fell back to PLAIN from another
   * encoding (the new values no longer fit it, or a forced one no longer holds them) */
  mx_val_enc prev_val_enc;
  int fell_back;
} mx_cold_pack;

/* The statistics of a cold CSR C (nrows, ncols, rowptr, colidx, val; C need not be well formed
 * beyond 0 <= colidx < ncols and nondecreasing row pointers). MX_ERR_MEM if scratch cannot be
 * allocated. */
mx_status mx_cold_pack_stats_of(const mx_csr *C, mx_cold_pack_stats *st);

/* Pack C by request. On success *P owns its arrays; on failure *P is zeroed. */
mx_status mx_cold_pack_build(const mx_csr *C, const mx_pack_request *req, mx_cold_pack *P);

/* New values, same pattern: value p = val[src[p]] (src == NULL: val[p]), p < nnz. The value encoding
 * is chosen again by P->req.val; a forced encoding that no longer holds the values, like an AUTO
 * one whose values now pack worse than plain, gives PLAIN with P->fell_back = 1. The columns stay. */
mx_status mx_cold_pack_refresh(mx_cold_pack *P, const double *val, const int32_t *src);

/* Every value times alpha (what MatScale does to each entry): the dictionary or the column
 * constants are scaled, which gives each nonzero exactly alpha * a_ij. The dictionary may then hold
 * equal entries or lose its order (alpha <= 0): decoding stays exact; a refresh rebuilds it. */
void mx_cold_pack_scale(mx_cold_pack *P, double alpha);

/* y = C x + z (z == NULL: y = C x); y == z allowed. Row i is summed left to right from z[i] (or 0)
 * exactly as the plain cold kernel of mx_spmv.c, so every y[i] is bitwise equal to it. */
void mx_cold_pack_spmv(const mx_cold_pack *P, const double *x, const double *z, double *y);

/* Back to plain CSR (caller's arrays: nrows+1, nnz, nnz): the cold CSR P was built from. */
void mx_cold_pack_expand(const mx_cold_pack *P, int32_t *rowptr, int32_t *col, double *val);

/* Bytes of the packed SpMV arrays: row bytes + value bytes + column bytes (the plain CSR is
 * mx_csr_bytes(nrows, nnz)). */
size_t mx_cold_pack_bytes(const mx_cold_pack *P);

/* The fraction of a product a pack is assumed to save before its guard times it (the plan engine's
 * pack lever): gain, or MX_PACK_GAIN_IN_L2 where it is lower and the plain cold CSR of nrows rows and
 * cold_nnz nonzeros, with x (ncols) and y (nrows) in 8-byte entries, takes at most half of an L2
 * of l2_bytes (0: unknown, gain kept). Such a matrix is read from L2 by a solve's products, so the
 * bytes a pack saves are not DRAM traffic saved (measured: docs/performance.md, "Plan engine
 * costs"); a pack that pays there is still kept by its guard, later. */
#define MX_PACK_GAIN_IN_L2 0.02
double mx_pack_assumed_gain(double gain, int32_t nrows, int32_t ncols, int64_t cold_nnz, size_t l2_bytes);

/* Short names for -mat_view: "plain", "dict0", "dict8", "dict16", "colconst"; "plain", "delta8",
 * "delta16"; "plain", "off16" ("?" for anything else). */
const char *mx_val_enc_name(int e);
const char *mx_idx_enc_name(int e);
const char *mx_row_enc_name(int e);

void mx_cold_pack_free(mx_cold_pack *P);

/* Row pointer i <= nrows (kernels and checks). */
static inline int32_t mx_pack_rowptr(const mx_cold_pack *P, int64_t i) {
  if (P->row_enc == MX_ROW_OFF16) return P->row_base[i / MX_PACK_RCHUNK] + (int32_t)P->row_off[i];
  return P->rowptr[i];
}

/* Decoders of one nonzero (kernels and checks). */
static inline int32_t mx_pack_col(const mx_cold_pack *P, int64_t p) {
  if (P->idx_enc == MX_IDX_DELTA8) return P->seg_base[p / MX_PACK_SEG] + (int32_t)P->delta8[p];
  if (P->idx_enc == MX_IDX_DELTA16) return P->seg_base[p / MX_PACK_SEG] + (int32_t)P->delta16[p];
  return P->col[p];
}
static inline double mx_pack_val(const mx_cold_pack *P, int64_t p, int32_t c) {
  switch (P->val_enc) {
    case MX_VAL_DICT0: return P->dict[0];
    case MX_VAL_DICT8: return P->dict[P->code8[p]];
    case MX_VAL_DICT16: return P->dict[P->code16[p]];
    case MX_VAL_COLCONST: return P->dict[c];
    default: return P->val[p];
  }
}

#ifdef __cplusplus
}
#endif
#endif
