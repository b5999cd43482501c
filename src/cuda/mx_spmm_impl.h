/* mx_spmm_impl.h - the SpMM's launches (mx_spmm.cu) that its ways and timed choice
 * (mx_spmm_ways.cu) run. Device pointers, queued on stream s; 0, or 1 with the error recorded. */
#ifndef MX_SPMM_IMPL_H
#define MX_SPMM_IMPL_H
#include "mx_device_impl.h"

/* Lanes per cold row: the smallest power of two whose lanes cover the mean cold row length in one
 * unrolled step, in [2, 32]. */
int mx_spmm_lanes(const mx_device *D);
/* D's long cold rows in pieces and the columns' footprint, made once (D->spmm_long). */
int mx_spmm_long_prepare(mx_device *D);
/* whether cols columns' footprints of B (D's column spread) fit half the L2: the launch groups' rule */
bool mx_spmm_cols_fit_l2(const mx_device *D, int cols);
/* whether the padded panels split k columns otherwise than the panels (k mod 64 above 8, not a power of two) */
bool mx_spmm_padding_differs(int k);
/* C = the cold part of A times k columns of B read in place (column-major), rows and long rows' pieces */
int mx_spmm_cold_launch(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s);
/* C = the cold part (and an SE hot part, +=) panel by panel of B copied row-major; padded: the last
 * columns in one panel of the next power of two */
int mx_spmm_panels(const mx_device *D, int k, bool padded, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s);
/* whether D's cold part has a pair kernel (mx_spmm_pair.cu): a segment plan whose cold CSR holds
 * original columns (no x-hot codes), or a merge plan; the plain arrays or a pack in use; no hub split */
bool mx_spmm_pairs_run(const mx_device *D);
/* whether the pairs also run D's hot part (an SE one, by the SpMV's SE kernel on pairs); else a hot
 * part is the caller's (mx_spmm_hot_launch) */
bool mx_spmm_pairs_hot(const mx_device *D);
/* C = A times k columns of B (k even), two at a time by the SpMV's kernels on pairs (a pair of
 * columns of B copied row-major per launch): the cold part, each column bitwise the cold SpMV's, and
 * where mx_spmm_pairs_hot an SE hot part (+=), each column then bitwise the SpMV's */
int mx_spmm_pair_product(const mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s);
/* whether the pairs can read B's columns in place (no copy): a segment plan whose pair needs no
 * column scale (no column-constant pack) and no SE hot part on the pairs */
bool mx_spmm_pairs_in_place_run(const mx_device *D);
/* C = the cold part of A times k columns of B (k even), two at a time by the segment pair kernel
 * reading both columns of B in place (two 8-byte gathers a nonzero, no copy): the same products and
 * sums as mx_spmm_pair_product's, each column bitwise the cold SpMV's */
int mx_spmm_pair_product_in_place(const mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s);
/* C += the hot part (DU on the tensor cores, SE on the CUDA cores) times k columns of B in place */
int mx_spmm_hot_launch(const mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s);

#endif
