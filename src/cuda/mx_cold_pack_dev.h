/* mx_cold_pack_dev.h - the packed cold CSR on the device (internal to src/cuda).
 *
 * Built on the GPU from D's cold CSR (mx_cold_pack.cu) into the same bytes as the host encoder
 * mx_cold_pack_build: the packed parts live here, the plain parts (columns under MX_IDX_PLAIN,
 * values under MX_VAL_PLAIN) are D's own cold_col / cold_val, which stay on the device anyway (value
 * refresh, merge and cuSPARSE kernels, download). The segment cold kernel reads it when
 * mx_cold_pack_dev_active(D). */
#ifndef MX_COLD_PACK_DEV_H
#define MX_COLD_PACK_DEV_H

#include <stdint.h>
#include "mx_cold_decode.cuh"
#include "mx_device_impl.h"
extern "C" {
#include "../core/mx_cold_pack.h"
}

struct mx_cold_pack_dev {
  mx_pack_request req; /* as asked; a value refresh re-chooses the value encoding by req.val */
  mx_val_enc val_enc;
  mx_idx_enc idx_enc;
  mx_row_enc row_enc; /* OFF16: row_base + row_off; PLAIN: D's own cold_rowptr */
  int ndict;          /* DICT*: distinct values; COLCONST: ncols; else 0 */
  int nseg;           /* DELTA*: ceil(cold_nnz / 32); else 0 */
  double *dict;       /* ndict */
  double *xs;         /* COLCONST: ncols, x scaled by the column constants (mx_cold_pack_dev_x) */
  uint8_t *code8;     /* cold_nnz, DICT8 */
  uint16_t *code16;   /* cold_nnz, DICT16 */
  int *seg_base;      /* nseg */
  uint8_t *delta8;    /* cold_nnz, DELTA8 */
  uint16_t *delta16;  /* cold_nnz, DELTA16 */
  int nrchunk;        /* OFF16: ceil((nrows + 1) / MX_PACK_RCHUNK); else 0 */
  int *row_base;      /* nrchunk */
  uint16_t *row_off;  /* nrows + 1, OFF16 */
  mx_val_enc prev_val_enc; /* as mx_cold_pack: the last refresh's encoding before it ... */
  int fell_back;           /* ... and whether it fell back to plain */
};

/* 1 iff D has a pack with a packed value or column part: the segment and merge kernels then read it
 * (and its row pointers, packed or not). Packed row pointers alone never make a pack active: AUTO
 * packs them only beside a packed part, a refresh that falls back to plain values leaves them. */
static inline bool mx_cold_pack_dev_active(const mx_device *D) {
  return D->pack && (D->pack->val_enc != MX_VAL_PLAIN || D->pack->idx_enc != MX_IDX_PLAIN);
}

/* The x the packed cold kernels read: x itself, or under COLCONST xs = s .* x computed on stream s
 * (one product per column, __dmul_rn like the kernels' products). 0 or 1 with the error recorded. */
int mx_cold_pack_dev_x(const mx_device *D, const double *x, cudaStream_t s, const double **xk);

/* which packed segment kernel runs (tuning A/B of cold-pack-bench): 0 the blocks per SM and the
 * staging chosen per encoding (mx_cold_segment_pack.cuh), 1 all at 6, 2 all at 8; 3, 4, 5 other lane-group
 * rules (gk 2, 8, 32: other summation orders, timing only); 6 strided staging everywhere (thread t
 * stages nonzeros t + 256 j), 7 vectorized staging everywhere (thread t decodes nonzeros 8t..8t+7
 * by vector loads). The tests run 0-2, 6, 7: each bitwise the plain kernel's y. Returns the previous
 * one; other values change nothing. Not thread-safe (a process-wide switch). */
extern "C" int mx_cold_pack_set_variant(int v);
#define MX_PACK_VARIANTS 8

/* y = C x + z by the segment kernel on D's packed cold CSR (mx_cold_pack_dev_active(D) holds; the
 * variant above), on stream s (mx_cold_segment_pack.cu). 0 or 1 with the error recorded. */
int mx_cold_segment_packed_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s);
/* Its parts, x already scaled under COLCONST: the rule's kernel of value encoding VE (instantiated in
 * mx_cold_segment_pack_<encoding>.cu) and tuning variant v in 1..MX_PACK_VARIANTS-1
 * (mx_cold_segment_pack_ab.cu). */
template <int VE>
int mx_cold_segment_packed_rule(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s);
int mx_cold_segment_packed_variant(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s, int v);

/* whether the merge cold kernel reads the pack too (default 1; 0 makes it read the plain arrays:
 * cold-pack-bench's COLD_PACK_MERGE=1 A/B and the tests). Returns the previous setting. Not
 * thread-safe (a process-wide switch). */
extern "C" int mx_cold_pack_set_merge(int on);
bool mx_cold_pack_merge_on(void);
/* y = C x + z by the merge kernel on D's packed cold CSR (mx_cold_pack_dev_active(D) holds), on
 * stream s (mx_cold_merge_pack.cu). 0 or 1 with the error recorded. */
int mx_cold_merge_packed_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s);

/* The decoder of P's packed arrays for encodings VE, IE (the kernels read plain parts from D's own
 * cold_col / cold_val). */
template <int VE, int IE>
static inline mx_dec_pack<VE, IE> mx_pack_decoder(const mx_cold_pack_dev *P) {
  return mx_dec_pack<VE, IE>{P->seg_base, P->delta8, P->delta16, P->code8, P->code16, P->dict, P->row_base, P->row_off};
}

/* f.template run<VE, IE>() for P's value and column encodings (one instantiation per pair): how the
 * packed cold kernels pick their decoder mx_dec_pack<VE, IE>. */
template <int VE, class F>
static inline int mx_pack_dispatch_idx(const mx_cold_pack_dev *P, const F &f) {
  switch (P->idx_enc) {
    case MX_IDX_DELTA8: return f.template run<VE, MX_IDX_DELTA8>();
    case MX_IDX_DELTA16: return f.template run<VE, MX_IDX_DELTA16>();
    default: return f.template run<VE, MX_IDX_PLAIN>();
  }
}
template <class F>
static inline int mx_pack_dispatch(const mx_cold_pack_dev *P, const F &f) {
  switch (P->val_enc) {
    case MX_VAL_DICT0: return mx_pack_dispatch_idx<MX_VAL_DICT0>(P, f);
    case MX_VAL_DICT8: return mx_pack_dispatch_idx<MX_VAL_DICT8>(P, f);
    case MX_VAL_DICT16: return mx_pack_dispatch_idx<MX_VAL_DICT16>(P, f);
    case MX_VAL_COLCONST: return mx_pack_dispatch_idx<MX_VAL_COLCONST>(P, f);
    default: return mx_pack_dispatch_idx<MX_VAL_PLAIN>(P, f); /* plain values, packed columns */
  }
}

/* refresh and free: mx_cold_pack_dev_refresh, mx_cold_pack_dev_free in mx_device_impl.h */

#endif
