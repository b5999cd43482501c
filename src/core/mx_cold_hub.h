/* mx_cold_hub.h - the hub split of a cold CSR (pure C99, no PETSc, no CUDA): a layout for power-law
 * graphs, where a few thousand "hub" columns hold half of the nonzeros.
 *
 * C = rest + hub. The hub columns are the K most used columns of C (most nonzeros first, ties by
 * column index; never an empty column). hub holds every nonzero in them, rest every other nonzero (a
 * CSR over all rows, each row's nonzeros in input order). The product is y = rest x (any cold kernel),
 * then y += hub x: on the GPU the K hub x values sit in shared memory, so the hub nonzeros, which cost
 * the CSR kernels one L1/L2 wavefront per lane, cost one shared-memory read (measured:
 * docs/performance.md, "Hub split").
 *
 * hub is stored for that kernel. A nonzero is a 16-bit hub rank (rank K: padding, x value 0). Rows
 * with more than row_max hub nonzeros ("split rows"; row_max = mx_hub_row_max(hubscale != NULL)) are
 * cut into pieces of row_max in order (the last one shorter). The rows and pieces ("pseudo-rows"),
 * sorted by length (descending; equal lengths in row order, a row's pieces in order), are stored 32
 * to a slice (sliced ELLPACK), padded to slice_len[s], the slice's first (longest) pseudo-row:
 * element j of the slice's pseudo-row l at MX_HUB_SLOT(slice_off[s], slice_len[s], j, l).
 * slice_row[32 s + l] is the row (y += the pseudo-row's sum), ~p for piece p (its sum goes to part
 * slot p), or INT32_MIN for the last slice's missing lanes.
 * Split row i's parts are slots split_first[i] .. split_first[i+1]-1, in order.
 * Values: where every hub column's nonzeros share one value (bit for bit, not NaN; PageRank transition
 * matrices, unweighted graphs) the value is hubscale[rank] and slice_val is NULL: the product x_j s_j
 * is the same bits as s_j x_j. Otherwise slice_val holds each nonzero's value (padding 0).
 *
 * Summation order (the GPU kernel's, src/cuda/mx_cold_hub.cu; the CPU kernel here repeats it, so
 * the two are bitwise equal): a pseudo-row sums its products in order starting from 0 (padding adds
 * 0.0, which never changes such a sum); y[row] += sum. A split row's parts: lane l of 32 sums parts
 * l, l+32, ... in order, then d = 16, 8, 4, 2, 1: s_l = s_l + s_(l xor d); y[row] += s_0. */
#ifndef MX_COLD_HUB_H
#define MX_COLD_HUB_H

#include <stddef.h>
#include <stdint.h>
#include "mx_format.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MX_HUB_SLICE 32      /* pseudo-rows per slice: a warp's lanes */
/* Longest pseudo-row (a lane sums it alone): MX_HUB_ROW_MAX where the hub nonzeros carry values,
 * MX_HUB_ROW_MAX_FOLDED where they fold into column constants (no values read: longer lanes cost
 * less than more split rows' parts; docs/performance.md, "Hub split"). mx_hub_row_max picks it. */
#define MX_HUB_ROW_MAX 64
#define MX_HUB_ROW_MAX_FOLDED 128
#define mx_hub_row_max(folded) ((folded) ? MX_HUB_ROW_MAX_FOLDED : MX_HUB_ROW_MAX)
#define MX_HUB_MAX_COLS 28000 /* hub x values (+ the padding's 0) in one GPU block's shared memory: 224 KB */
/* Slot of element j of pseudo-row (lane) l in a slice at off of length len: the first len & ~3
 * elements in groups of 4, a lane's 4 in 4 consecutive slots (group g of the slice at off + 128 g,
 * lane l's at + 4 l: one 8-byte load of 4 ranks, two 16-byte loads of 4 values on the GPU); the
 * last len % 4 elements one per lane (off + 32 j + l). off is a multiple of 32, so every group is
 * 8-byte aligned in the ranks and 32-byte aligned in the values. */
#define MX_HUB_SLOT(off, len, j, l) \
  ((j) < ((len) & ~3) ? (off) + 128 * ((j) >> 2) + 4 * (l) + ((j) & 3) : (off) + 32 * (j) + (l))

/* The hub split of a cold CSR. Owns every array. */
typedef struct {
  int32_t nrows, ncols;
  int32_t K;              /* hub columns (0: hub is empty, rest is C) */
  int64_t nnz;            /* hub nonzeros */
  int32_t *hubcol;        /* K: rank -> column */
  double *hubscale;       /* K: the hub columns' constant values, or NULL (slice_val holds them) */
  int32_t row_max;        /* longest pseudo-row: mx_hub_row_max(hubscale != NULL) */
  int32_t nslices;
  int32_t *slice_off;     /* nslices + 1 */
  int32_t *slice_len;     /* nslices */
  int32_t *slice_row;     /* 32 nslices */
  uint16_t *slice_rank;   /* slice_off[nslices] */
  double *slice_val;      /* slice_off[nslices], or NULL */
  int32_t nsplit, nparts;
  int32_t *split_row;     /* nsplit */
  int32_t *split_first;   /* nsplit + 1 */
  int32_t *rest_rowptr;   /* nrows + 1 */
  int32_t *rest_col;      /* rest_rowptr[nrows] */
  double *rest_val;       /* rest_rowptr[nrows] */
} mx_cold_hub;

/* Split C by its K most used columns (K above the nonempty columns: all of them; K >
 * MX_HUB_MAX_COLS is MX_ERR_ARG). MX_ERR_ARG on malformed input (rowptr[0] != 0, a decreasing row
 * pointer, a column outside [0, ncols), K < 0), MX_ERR_OVERFLOW above INT32_MAX - 2048 nonzeros
 * (the padded slots must stay 32-bit), MX_ERR_MEM; on failure *H is zeroed. */
mx_status mx_cold_hub_build(const mx_csr *C, int32_t K, mx_cold_hub *H);

void mx_cold_hub_free(mx_cold_hub *H);

/* The rest as a CSR view (H keeps the arrays). */
mx_csr mx_cold_hub_rest(const mx_cold_hub *H);

/* y += hub x, in the order above (bitwise the GPU kernel's); MX_ERR_MEM (y untouched) if the part
 * slots cannot be allocated. */
mx_status mx_cold_hub_spmv_add(const mx_cold_hub *H, const double *x, double *y);

/* The default rule (-mat_matxtract_hub auto). The split pays where the hub part is large and its rows
 * are long: the hub kernel has a fixed cost (a block-wide copy of the hub x values per SM, three
 * launches) and a cost per hub row (its y update). The thresholds admit the graphs that gained
 * over the whole-matrix product at K = MX_HUB_MAX_COLS and none of those that did not (measured over
 * the corpus graphs: docs/performance.md, "Hub split"). */
#define MX_HUB_AUTO_MIN_NNZ 4000000 /* hub nonzeros */
#define MX_HUB_AUTO_MIN_ROW 16      /* hub nonzeros per row that has any, on average */

/* *hub_nnz = C's nonzeros in its K most used columns (the columns mx_cold_hub_build picks), *hub_rows
 * = its rows that have any. MX_ERR_ARG (malformed input, as mx_cold_hub_build, or a NULL output),
 * MX_ERR_OVERFLOW, MX_ERR_MEM; on failure both are 0. */
mx_status mx_cold_hub_stats(const mx_csr *C, int32_t K, int64_t *hub_nnz, int64_t *hub_rows);

/* 1 when a split of these statistics is worth building by default: at least MX_HUB_AUTO_MIN_NNZ hub
 * nonzeros and MX_HUB_AUTO_MIN_ROW per hub row. */
int mx_hub_pays(int64_t hub_nnz, int64_t hub_rows);

/* Bytes the hub product reads of H (ranks, values, slice and split arrays, hub columns and scales);
 * the rest's are its cold kernel's. */
size_t mx_cold_hub_bytes(const mx_cold_hub *H);

#ifdef __cplusplus
}
#endif

#endif
