/* mx_cold_rowpat.h - the third cascade's row-pattern form of a cold CSR (pure C99, no PETSc, no
 * CUDA): each row stored as the id of its pattern, a pattern being a row's whole content relative to
 * the row: its length, each nonzero's column minus the row index, each nonzero's value.
 *
 * Where a matrix repeats a few such patterns (stencils and finite-difference matrices: lap3d's
 * interior rows all read (-n^2, -n, -1, 0, 1, n, n^2) with values (-1, -1, -1, 6, -1, -1, -1), its
 * boundary rows a few dozen patterns more), a row costs 1 or 2 bytes instead of its columns, values
 * and row pointer (lap3d: 1 byte instead of 7 x 3.4), and the product reads little beyond x and y.
 * Pattern ids are given in order of first use (row 0's pattern is 0, the next new pattern 1, ...),
 * and a pattern's entries are those of its first row, in that row's order: the host encoder here and
 * the GPU encoder (src/cuda/mx_cold_rowpat.cu) produce the same bytes. Values compare by BIT PATTERN
 * (-0.0 != 0.0, every NaN payload its own value), so decoding is exact.
 *
 * The form holds a matrix only where every row has at most MX_ROWPAT_MAX_LEN nonzeros and the
 * patterns hold at most MX_ROWPAT_MAX_ENTRIES entries in all (they are read through the GPU's L1:
 * 4096 x 12 bytes = 48 KB): otherwise MX_ERR_ARG and the packed form (mx_cold_pack.h) remains.
 *
 * Summation order: the CPU kernel here sums each row left to right starting from z[i] (or 0), as the
 * plain CPU cold kernel (mx_spmv.c) and mx_cold_pack_spmv do: y bitwise equal to theirs. The GPU
 * kernel sums in the plain GPU segment kernel's order (src/cuda/mx_cold_rowpat.cu says how), so its y
 * is bitwise that kernel's. */
#ifndef MX_COLD_ROWPAT_H
#define MX_COLD_ROWPAT_H

#include <stddef.h>
#include <stdint.h>
#include "mx_format.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MX_ROWPAT_MAX_LEN 64         /* longest row the form holds (the GPU sums it in one thread) */
#define MX_ROWPAT_MAX_ENTRIES 4096   /* most entries of all patterns together (L1-resident on the GPU) */

/* A cold CSR in row-pattern form. Owns every array. */
typedef struct {
  int32_t nrows, ncols, nnz;
  int32_t npat;     /* distinct patterns (0 only when nrows = 0) */
  int32_t nent;     /* entries of all patterns: pat_ptr[npat] */
  int id_bytes;     /* 1 when npat <= 256, else 2 */
  uint8_t *id8;     /* nrows, id_bytes == 1: row i's pattern */
  uint16_t *id16;   /* nrows, id_bytes == 2 */
  int32_t *pat_ptr; /* npat + 1: pattern p's entries are [pat_ptr[p], pat_ptr[p+1]) */
  int32_t *pat_off; /* nent: column minus row index */
  double *pat_val;  /* nent: value */
} mx_cold_rowpat;

/* Build the form of C (rows may be unsorted: a pattern keeps a row's order; C must satisfy
 * 0 <= colidx < ncols; rowptr[0] != 0 or a decreasing row pointer is MX_ERR_ARG). MX_ERR_ARG where the
 * form cannot hold C (a row longer than MX_ROWPAT_MAX_LEN, more than MX_ROWPAT_MAX_ENTRIES pattern
 * entries), MX_ERR_MEM; on failure *R is zeroed. npat <= MX_ROWPAT_MAX_ENTRIES + 1 (only the empty
 * pattern holds no entry), so 16-bit ids always suffice. nrows = 0: npat = nent = 0, pat_ptr = {0}. */
mx_status mx_cold_rowpat_build(const mx_csr *C, mx_cold_rowpat *R);

/* Rows read by mx_rowpat_cannot_hold: a few hundred microseconds on a host core. */
#define MX_ROWPAT_PROOF_ROWS 4096

/* 1 when `samples` rows of C, evenly spread (all of them when C has no more), prove that the form
 * cannot hold C: one of them is longer than MX_ROWPAT_MAX_LEN, or their distinct patterns alone
 * hold more than MX_ROWPAT_MAX_ENTRIES entries; else 0 (only building the form tells). Sound: a
 * pattern is told apart from another by a 64-bit hash of its content, and rows whose hashes collide
 * count once, so a collision can only hide a proof. 0 also when the scratch cannot be allocated. */
int mx_rowpat_cannot_hold(const mx_csr *C, int32_t samples);

/* Row i's pattern id. */
static inline int32_t mx_rowpat_id(const mx_cold_rowpat *R, int64_t i) {
  return R->id_bytes == 1 ? (int32_t)R->id8[i] : (int32_t)R->id16[i];
}

/* Bytes the product reads of the form: ids (id_bytes * nrows) + pattern pointers (4 * (npat + 1))
 * + entries (12 * nent). */
size_t mx_cold_rowpat_bytes(const mx_cold_rowpat *R);
/* The same from the counts alone (the GPU encoder's choice uses it). */
size_t mx_rowpat_bytes_of(int32_t nrows, int32_t npat, int32_t nent);

/* 1 iff AUTO keeps the form of these counts: the cold region has a nonzero (an empty one gains
 * nothing) and the form takes fewer bytes than any pack AUTO could choose (mx_pack_bytes_floor). */
int mx_rowpat_pays(int32_t nrows, int64_t nnz, int32_t npat, int32_t nent);

/* y = C x + z (z == NULL: y = C x); y == z allowed. Row i summed left to right starting from z[i]
 * (or 0), s += v * x[c] as mx_cold_pack_spmv: bitwise the plain CPU cold kernel's y. */
void mx_cold_rowpat_spmv(const mx_cold_rowpat *R, const double *x, const double *z, double *y);

/* Back to plain CSR (caller's arrays: nrows+1, nnz, nnz): the cold CSR R was built from. */
void mx_cold_rowpat_expand(const mx_cold_rowpat *R, int32_t *rowptr, int32_t *col, double *val);

/* Every value times alpha (MatScale): each pattern value v becomes alpha * v, which is exactly what
 * scaling each nonzero gives (patterns may then coincide: decoding stays exact). */
void mx_cold_rowpat_scale(mx_cold_rowpat *R, double alpha);

void mx_cold_rowpat_free(mx_cold_rowpat *R);

#ifdef __cplusplus
}
#endif

#endif
