/* mx_hot_pack.c - the SE hot region's values packed (mx_hot_pack.h): the choice, the encoder (one
 * pass for one value, a second with a per-column table for column constants), the CPU kernel
 * y[hot rows] += H x, bytes, and the whole product with every compressed part. */
#include <stdlib.h>
#include <string.h>

#include "mx_hot_pack.h"
#include "mx_core_internal.h"

#if defined(__GNUC__)
#define MX_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define MX_ALWAYS_INLINE inline
#endif

/* The bit pattern of a[k], read from memory (never through a floating-point register). */
static inline uint64_t bits_at(const double *a, int64_t k) {
  uint64_t u;
  memcpy(&u, a + k, sizeof u);
  return u;
}

/* ---- the choice ---------------------------------------------------------------------------------- */

mx_val_enc mx_hot_values_choose(int one, int colconst, int cold_codes, int32_t ncols, int64_t nslots) {
  if (one) return MX_VAL_DICT0;
  if (colconst && !cold_codes && 24.0 * (double)ncols < 8.0 * (double)nslots) return MX_VAL_COLCONST;
  return MX_VAL_PLAIN;
}

/* ---- the encoder --------------------------------------------------------------------------------- */

/* The first slot of F holding a value (column >= 0), -1 if every slot is padding. */
static int64_t first_hot_slot(const mx_format *F) {
  for (int64_t k = 0; k < F->se_nslots; k++)
    if (F->se_col[k] >= 0) return k;
  return -1;
}

/* 1 iff every slot holding a value has the bit pattern of slot first's. */
static int one_value(const mx_format *F, int64_t first) {
  const uint64_t b = bits_at(F->se_val, first);
  for (int64_t k = first + 1; k < F->se_nslots; k++)
    if (F->se_col[k] >= 0 && bits_at(F->se_val, k) != b) return 0;
  return 1;
}

/* *s = the value of each column's slots (F->ncols doubles, bit for bit; 0.0 for a column without a
 * slot) and *colconst = 1 if every column's slots hold one bit pattern; else *s = NULL and
 * *colconst = 0. Invariant: seen[c] = 1 iff s[c] holds the first pattern met in column c. */
static mx_status column_constants(const mx_format *F, double **s, int *colconst) {
  const int32_t *col = F->se_col;
  double *t = calloc((size_t)F->ncols + 1, sizeof(double)); /* all bits 0: 0.0 */
  uint8_t *seen = calloc((size_t)F->ncols + 1, 1);
  *s = NULL, *colconst = 0;
  if (!t || !seen) {
    free(t), free(seen);
    return MX_ERR_MEM;
  }
  int same = 1;
  for (int64_t k = 0; k < F->se_nslots && same; k++) {
    const int32_t c = col[k];
    if (c < 0) continue;
    if (!seen[c]) memcpy(t + c, F->se_val + k, sizeof(double)), seen[c] = 1;
    else same = bits_at(t, c) == bits_at(F->se_val, k);
  }
  free(seen);
  if (same) *s = t, *colconst = 1;
  else free(t);
  return MX_OK;
}

/* One value settles DICT0 without a table; the table is built only where COLCONST can win (its 24
 * bytes per column under the plain 8 per slot), so a wide matrix with few hot slots allocates none. */
mx_status mx_hot_pack_build(const mx_format *F, mx_hot_pack *H) {
  if (!H) return MX_ERR_ARG;
  memset(H, 0, sizeof *H);
  H->enc = MX_VAL_PLAIN;
  if (!F) return MX_ERR_ARG;
  H->ncols = F->ncols;
  const int64_t first = F->mode == MX_HOT_SE ? first_hot_slot(F) : -1;
  if (first < 0) return MX_OK;
  const int one = one_value(F, first);
  int colconst = one;
  double *s = NULL;
  if (!one && mx_hot_values_choose(0, 1, 0, F->ncols, F->se_nslots) == MX_VAL_COLCONST) {
    const mx_status st = column_constants(F, &s, &colconst);
    if (st != MX_OK) return st;
  }
  H->enc = mx_hot_values_choose(one, colconst, 0, F->ncols, F->se_nslots);
  if (H->enc == MX_VAL_DICT0) memcpy(&H->one, F->se_val + first, sizeof(double));
  if (H->enc == MX_VAL_COLCONST) H->s = s, s = NULL;
  free(s);
  return MX_OK;
}

/* ---- kernel, bytes, free ------------------------------------------------------------------------- */

/* hot_add_se of mx_spmv.c with slot (k, r)'s value read as ve says (a literal in each call: one copy
 * per encoding): H->one (DICT0) or H->s[its column] (COLCONST). The same acc[r] += v * x[c] in the
 * same order and the same store, and v is bitwise se_val's, so y is bitwise mx_hot_add's. */
static MX_ALWAYS_INLINE void se_add_packed(const mx_format *F, const mx_hot_pack *H, mx_val_enc ve, const double *x, double *y) {
  const int32_t *sp = F->se_ptr, *col = F->se_col;
  const double one = H->one, *sv = H->s;
  for (int32_t q = 0; q < F->nchunks; q++) {
    double acc[MX_CHUNK_ROWS] = {0};
    for (int32_t s = sp[q]; s < sp[q + 1]; s += MX_CHUNK_ROWS)
      for (int r = 0; r < MX_CHUNK_ROWS; r++) {
        const int32_t c = col[s + r];
        if (c < 0) continue;
        const double v = ve == MX_VAL_DICT0 ? one : sv[c];
        acc[r] += v * x[c];
      }
    mx_chunk_store_add(F->hot_row + (int64_t)q * MX_CHUNK_ROWS, acc, y);
  }
}

void mx_hot_pack_add(const mx_format *F, const mx_hot_pack *H, const double *x, double *y) {
  const mx_val_enc e = H && F->mode == MX_HOT_SE ? H->enc : MX_VAL_PLAIN;
  if (e == MX_VAL_DICT0) se_add_packed(F, H, MX_VAL_DICT0, x, y);
  else if (e == MX_VAL_COLCONST) se_add_packed(F, H, MX_VAL_COLCONST, x, y);
  else mx_hot_add(F, x, y);
}

size_t mx_hot_values_bytes(mx_val_enc e, int32_t ncols, int64_t nslots) {
  const size_t n = (size_t)nslots;
  if (e == MX_VAL_DICT0) return 4 * n + 8;
  if (e == MX_VAL_COLCONST) return 4 * n + 24 * (size_t)ncols;
  return 12 * n;
}

size_t mx_hot_pack_bytes(const mx_format *F, const mx_hot_pack *H) {
  if (F->mode != MX_HOT_SE) return 0;
  return mx_hot_values_bytes(H ? H->enc : MX_VAL_PLAIN, F->ncols, F->se_nslots);
}

void mx_hot_pack_free(mx_hot_pack *H) {
  if (!H) return;
  free(H->s);
  memset(H, 0, sizeof *H);
}

/* ---- the whole product --------------------------------------------------------------------------- */

/* Every cold kernel writes y[i] = z[i] + row i's sum, and the hot kernel adds to it, in mx_spmv's
 * order: the cold part is bitwise whichever form holds it, the hot part bitwise the plain one. */
void mx_spmv_compressed(const mx_format *F, const mx_cold_rowpat *R, const mx_cold_pack *P, const mx_hot_pack *H,
                        const double *x, const double *z, double *y) {
  if (R) mx_cold_rowpat_spmv(R, x, z, y);
  else if (P) mx_cold_pack_spmv(P, x, z, y);
  else mx_cold_mult(F, x, z, y);
  mx_hot_pack_add(F, H, x, y);
}
