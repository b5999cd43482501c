/* mx_format.h - the MatXtract hot/cold format of one local CSR block (pure C99, no PETSc, no CUDA).
 *
 * A = H + C where
 *   H (hot)  = nonzeros in the selected rows x selected columns of the crux (tau_c, tau_r),
 *   C (cold) = every other nonzero, kept as CSR over the ORIGINAL rows.
 * Both keep ORIGINAL column indices, and every hot row keeps its ORIGINAL row number, so
 * y = A x reads x and writes y in place: no permuted vector is ever made.
 *
 * Hot rows are sorted by descending hot-row length (ties by row index) and cut into chunks of
 * MX_CHUNK_ROWS = 8 rows (the m dimension of the FP64 mma.m8n8k4). The last chunk is padded with
 * rows whose hot_row entry is -1. Inside a chunk only columns holding a nonzero are kept (first
 * cascade), ordered by column index; a column that holds duplicate entries (same row, same column)
 * is kept as many times as its largest number of copies in one row, so DU columns of a chunk may
 * repeat a column index and every (row, block column) cell holds at most one nonzero. The second
 * cascade stores every chunk either as
 *   DU (dense unfolding): 8x4 blocks, each a 32-bit bitmap (bit r*4+c <=> row r, block column c),
 *      4 original column indices (-1 = padding column) and the packed nonzeros in bit order, or
 *   SE (sparse encoding): ELL per chunk, width = longest row of the chunk, slot (k, r) of chunk q
 *      at se_ptr[q] + k*8 + r (column-major so 8 consecutive threads read consecutive slots);
 *      padding slots have column -1 and value 0.
 * The mode is one per matrix (all chunks DU or all SE), chosen by the exact byte cost (auto) or
 * forced (du|se).
 *
 * Invariants (checked by mx_format_check):
 *   0 <= tau_r <= tau_c <= 1; every nonzero of the input is in exactly one of H and C;
 *   all indices are 32-bit; hot_row[] lists distinct rows; value slots map back to the input
 *   through cold_src/hot_src (the gather map used to refresh values without a rebuild).
 *   A borrowed cold part (mx_format_build_borrow, H empty) IS the input CSR: cold_src is NULL
 *   (the identity map) and the cold arrays belong to the caller.
 */
#ifndef MX_FORMAT_H
#define MX_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MX_CHUNK_ROWS 8 /* rows per hot chunk = m of mma.m8n8k4.f64 */
#define MX_BLOCK_COLS 4 /* columns per DU block = k of mma.m8n8k4.f64 */

typedef enum { MX_OK = 0, MX_ERR_ARG = 1, MX_ERR_MEM = 2, MX_ERR_OVERFLOW = 3 } mx_status;
/* "ok", "bad argument", "out of memory", "a count overflows int32" (unknown values: "unknown status") */
const char *mx_status_name(mx_status s);

typedef enum { MX_HOT_NONE = 0, MX_HOT_DU = 1, MX_HOT_SE = 2 } mx_hot_mode;

typedef enum { MX_MODE_AUTO = 0, MX_MODE_DU = 1, MX_MODE_SE = 2 } mx_mode_request;

/* A read-only CSR view (rowptr has nrows+1 entries, column indices in [0, ncols)). Column indices
 * inside a row need not be sorted; duplicates are allowed and kept as separate nonzeros. */
typedef struct {
  int32_t nrows, ncols;
  const int32_t *rowptr; /* nrows+1 */
  const int32_t *colidx; /* rowptr[nrows] */
  const double *val;     /* rowptr[nrows] */
} mx_csr;

typedef struct {
  double tau_c, tau_r;
} mx_crux;

typedef struct {
  int32_t nrows, ncols, nnz; /* of the whole block */
  mx_crux crux;              /* as requested (after clamping tau_r <= tau_c) */

  /* hot selection */
  int32_t hot_ncols;   /* columns selected by tau_c */
  int32_t hot_nrows;   /* rows selected by tau_r (rows with >= 1 hot nonzero) */
  int32_t hot_nnz;     /* nonzeros in H */
  int32_t nchunks;     /* ceil(hot_nrows / 8) */
  int32_t *hot_row;    /* nchunks*8: original row of each hot row slot, -1 for padding */
  mx_hot_mode mode;    /* MX_HOT_NONE iff hot_nnz == 0 */

  /* DU: blocks of chunk q are du_chunkptr[q] .. du_chunkptr[q+1]-1 */
  int32_t du_nblocks;
  int32_t *du_chunkptr; /* nchunks+1 */
  uint32_t *du_bitmap;  /* du_nblocks */
  int32_t *du_col;      /* du_nblocks*4, original columns, -1 = padding column */
  int32_t *du_valptr;   /* du_nblocks+1, offset of the block's first value in du_val */
  double *du_val;       /* hot_nnz, bit order inside each block */

  /* SE: chunk q occupies slots se_ptr[q] .. se_ptr[q+1]-1, width (se_ptr[q+1]-se_ptr[q])/8 */
  int32_t se_nslots;
  int32_t *se_ptr; /* nchunks+1 */
  int32_t *se_col; /* se_nslots, original columns, -1 = padding */
  double *se_val;  /* se_nslots, 0 for padding */

  /* cold: CSR over the original rows, entries in input order within a row */
  int32_t cold_nnz;
  int32_t *cold_rowptr; /* nrows+1 */
  int32_t *cold_col;    /* cold_nnz */
  double *cold_val;     /* cold_nnz */

  /* 1: cold_rowptr/cold_col/cold_val are the input's own arrays (mx_format_build_borrow with H
   * empty): never written or freed by the format, cold_src is NULL (identity). 0: owned copies. */
  int cold_borrowed;

  /* 1: at least half of the cold nonzeros continue a diagonal of the row above (stencils, banded
   * FEM; mx_cold_follows_diagonals, set once by the build): the CPU SpMM reads B column-major */
  int cold_diagonals;

  /* gather map: value slot -> index into the input's val[] (-1 for padding slots) */
  int32_t *cold_src; /* cold_nnz; NULL iff cold_borrowed */
  int32_t *hot_src;  /* hot_nnz (DU, into du_val) or se_nslots (SE, into se_val) */
} mx_format;

/* Build the format of A for crux c and hot mode request. On success *F owns its arrays. */
mx_status mx_format_build(const mx_csr *A, mx_crux c, mx_mode_request mode, mx_format *F);

/* As mx_format_build, except when the crux selects no hot nonzero (always at crux (0,0)): then the
 * cold CSR is not copied, F borrows A's rowptr/colidx/val (cold_borrowed = 1, cold_src = NULL), and
 * A's arrays must stay alive and unchanged in pattern for F's lifetime. Saves a copy of the whole
 * matrix (20 bytes per nonzero written) at the default crux. */
mx_status mx_format_build_borrow(const mx_csr *A, mx_crux c, mx_mode_request mode, mx_format *F);

/* Refresh every stored value from val[] (same pattern as at build time), via the gather map. A
 * borrowed cold part takes val[] itself (cold_val = val: the caller keeps val alive, as A's before). */
void mx_format_refresh_values(mx_format *F, const double *val);

/* Free all arrays of F and zero it. Safe on a zeroed struct. */
void mx_format_free(mx_format *F);

/* Check the structural invariants listed above; returns MX_OK or MX_ERR_ARG (MX_ERR_MEM if its
 * O(nrows + nnz) scratch cannot be allocated). */
mx_status mx_format_check(const mx_format *F);

/* Bytes held by the format's SpMV arrays (gather map excluded), and by plain CSR of the same block
 * (4*(nrows+1) + 12*nnz). */
size_t mx_format_bytes(const mx_format *F);
size_t mx_csr_bytes(int32_t nrows, int32_t nnz);

/* The crux as every builder uses it: c checked (no NaN, both in [0,1]) and tau_r clamped to <= tau_c
 * into *clamped; *target_c = ceil(tau_c*nnz), *target_r = ceil(tau_r*nnz) (exact int64, in [0, nnz]):
 * the nonzeros the column and row prefixes must cover. MX_ERR_ARG if c is invalid. */
mx_status mx_crux_targets(mx_crux c, int32_t nnz, mx_crux *clamped, int64_t *target_c, int64_t *target_r);

/* The hot mode of a hot region with these counts: forced (du|se), or auto = DU iff its exact bytes
 * are fewer than SE's (paper 4.2.4). A mode whose counts overflow int32 is never taken by auto;
 * forced, it is MX_ERR_OVERFLOW. (The host and the GPU builder both decide through this.) */
mx_status mx_hot_mode_choose(mx_mode_request req, int64_t nchunks, int64_t du_nblocks, int64_t se_nslots,
                             int64_t hot_nnz, mx_hot_mode *mode);

/* Bytes each hot mode would take for this hot region (exact, from the built chunks; hot_row counted
 * in both, gather map excluded; both 0 when there is no hot region). */
void mx_format_hot_costs(const mx_format *F, size_t *du_bytes, size_t *se_bytes);

/* Expand back to CSR: rowptr (nrows+1), colidx and val (nnz) allocated by the caller. Rows come
 * out with cold entries first, then hot entries; the multiset of (row, col, val) equals the input. */
void mx_format_to_csr(const mx_format *F, int32_t *rowptr, int32_t *colidx, double *val);

/* CPU kernels (the oracle for the GPU kernels and the no-GPU path). x, y, z never alias unless
 * stated: y may equal z. */
void mx_spmv(const mx_format *F, const double *x, double *y);                       /* y = A x     */
void mx_spmv_add(const mx_format *F, const double *x, const double *z, double *y);  /* y = A x + z */
void mx_spmv_t(const mx_format *F, const double *x, double *y);                     /* y = A'x     */
void mx_spmv_t_add(const mx_format *F, const double *x, const double *z, double *y);/* y = A'x + z */
/* k columns at once (column-major, leading dimensions ldb, ldc >= the rows of B, C): C = A B and
 * C = A' B, column c bit for bit mx_spmv / mx_spmv_t of column c; the padding rows of B are not
 * read nor those of C written. MX_OK, or MX_ERR_MEM (a work panel of 8 columns of B or C could not
 * be allocated; C not written). */
mx_status mx_spmm(const mx_format *F, int32_t k, const double *B, int64_t ldb, double *C, int64_t ldc);
mx_status mx_spmm_t(const mx_format *F, int32_t k, const double *B, int64_t ldb, double *C, int64_t ldc);

#ifdef __cplusplus
}
#endif
#endif
