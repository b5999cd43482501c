/* mx_hot_pack.h - the third cascade on the SE hot region (pure C99, no PETSc, no CUDA): the values of
 * a format's SE slots held as ONE value (MX_VAL_DICT0: an unweighted graph's ones) or one value PER
 * COLUMN (MX_VAL_COLCONST: a PageRank transition matrix, a_ij = 1/outdeg(j)), so that the SE kernel
 * reads each slot's column only (4 bytes instead of 12). The GPU holds the same choice for its own
 * SE arrays (src/cuda/mx_hot_pack.cu, by mx_hot_values_choose).
 *
 * Values compare by BIT PATTERN (-0.0 != 0.0, every NaN payload its own value); padding slots
 * (column -1) are not values. A decoded value is bit-identical to the stored one, and the kernels
 * multiply and add it exactly as the plain ones, so results are bitwise equal to them. */
#ifndef MX_HOT_PACK_H
#define MX_HOT_PACK_H

#include <stddef.h>
#include <stdint.h>
#include "mx_cold_pack.h" /* mx_val_enc */
#include "mx_format.h"
#include "mx_cold_rowpat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The SE values' encoding from what their slots hold (nslots slots, ncols columns):
 * one = every slot holding a value (column >= 0) holds one bit pattern (and there is one),
 * colconst = each column's slots hold one bit pattern, cold_codes = x-hot codes sit in the cold CSR
 * (the GPU's x-hot buffer then cannot hold the scaled x). DICT0 if one; else COLCONST if colconst,
 * !cold_codes and its 24 bytes per column (s_j; per product x read and xs = s .* x written, then
 * gathered where x was) move fewer than plain values' 8 per slot; else PLAIN. */
mx_val_enc mx_hot_values_choose(int one, int colconst, int cold_codes, int32_t ncols, int64_t nslots);

/* A format's SE values, packed. Owns s. */
typedef struct {
  mx_val_enc enc; /* PLAIN (F's se_val is read), DICT0 or COLCONST */
  double one;     /* DICT0: every hot value */
  int32_t ncols;
  double *s;      /* COLCONST: ncols, s_j (0.0 for a column without a hot slot) */
} mx_hot_pack;

/* H for F's SE slots by mx_hot_values_choose (cold_codes 0: the CPU kernel reads x itself); H->ncols
 * = F->ncols. F->mode != MX_HOT_SE or no hot slot: PLAIN, nothing allocated. MX_ERR_MEM if scratch or
 * s cannot be allocated, MX_ERR_ARG if F or H is NULL (then *H, if any, is PLAIN and owns nothing). */
mx_status mx_hot_pack_build(const mx_format *F, mx_hot_pack *H);

/* y[hot rows] += H x for F's hot part with the values of H: bitwise the plain hot kernel's
 * (mx_spmv's hot half). F must be the format H was built from (or one with the same SE values). */
void mx_hot_pack_add(const mx_format *F, const mx_hot_pack *H, const double *x, double *y);

/* Bytes the SE kernel moves for nslots slots of ncols columns with values in encoding e: 4 per slot
 * + 8 (DICT0) or 24 per column (COLCONST), or 12 per slot (PLAIN). The GPU reports the same. */
size_t mx_hot_values_bytes(mx_val_enc e, int32_t ncols, int64_t nslots);

/* Bytes the SE kernel moves for its slots: 4 per slot + 8 (DICT0) or 24 per column (COLCONST), or
 * 12 per slot (PLAIN); 0 without an SE hot region. */
size_t mx_hot_pack_bytes(const mx_format *F, const mx_hot_pack *H);

void mx_hot_pack_free(mx_hot_pack *H);

/* y = A x + z (z == NULL: y = A x; y == z allowed) for F with its cold part read from the row-pattern
 * form R, else the pack P, else F's cold CSR (R, P NULL when absent), and its hot part from H, else
 * F's SE/DU values (H NULL or PLAIN): bitwise equal to mx_spmv / mx_spmv_add of F. */
void mx_spmv_compressed(const mx_format *F, const mx_cold_rowpat *R, const mx_cold_pack *P, const mx_hot_pack *H,
                        const double *x, const double *z, double *y);

#ifdef __cplusplus
}
#endif

#endif
