/* mx_features.h - sparsity features of a CSR block (paper Table 2 in full, plus density and
 * balance measures) and two measures of how its values repeat, computed in O(nnz + nrows + ncols). They feed
 * the crux predictor. */
#ifndef MX_FEATURES_H
#define MX_FEATURES_H

#include "mx_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The feature vector is a fixed array; mx_feature_name(i) gives the stable name of entry i (the
 * column name used by tuning/ and by the embedded model). MX_NFEATURES is the length. The exact
 * definition of every entry (e.g. pratio = max / max(min, 1), nearest-rank percentiles, what an
 * empty dimension gives) is the comment at the top of mx_features.c. */
#define MX_NFEATURES 82

typedef struct {
  double v[MX_NFEATURES];
} mx_features;

const char *mx_feature_name(int i);

/* Index of a named feature, or -1. */
int mx_feature_index(const char *name);

mx_status mx_features_compute(const mx_csr *A, mx_features *f);

/* A length histogram as its non-empty bins: len[b] ascending and distinct, cnt[b] > 0 items of
 * length len[b], b = 0..nbins-1 (nbins = 0 iff there are no items). A power-law graph's lengths take
 * a few thousand values up to 10^5 and more: its histogram is walked bin by bin, not length by length. */
typedef struct {
  const int32_t *len;
  const int64_t *cnt;
  int32_t nbins;
} mx_length_bins;

/* The exact integer counts every feature is computed from: whoever counts them (this file's CPU
 * pass, the GPU in src/cuda/mx_features_gpu.cu) gets the same features bit for bit.
 *   rows            the row lengths' bins (their counts sum to nrows, len * cnt to nnz);
 *   cols            likewise for columns;
 *   diag, upper     entries with j = i, with j > i;
 *   band_max/sum    max and sum of |i - j| over entries;
 *   nonempty_rows   rows with an entry; span_sum: sum over them of (max col - min col + 1);
 *   long32_nnz      entries in rows longer than 32; adj_sum: sum of |l_i - l_{i+1}| (original order);
 *   ell8_cells      sum over 8-row groups of the original order of 8 * (the group's longest row);
 *   chunk8_distinct sum over 8-row groups of the original order of the group's distinct columns;
 *   chunk8_sorted_distinct the same with rows sorted by length, descending, ties by index;
 *   row_first_eq    entries whose value equals (==) the value of their row's first entry;
 *   col_first_eq    entries whose value equals the value of their column's first entry (the one
 *                   at the smallest position of the CSR arrays). */
typedef struct {
  int32_t nrows, ncols, nnz;
  mx_length_bins rows, cols;
  int64_t diag, upper, band_max, band_sum, nonempty_rows, span_sum, long32_nnz, adj_sum, ell8_cells;
  int64_t chunk8_distinct, chunk8_sorted_distinct;
  int64_t row_first_eq, col_first_eq;
} mx_feature_counts;

/* f from the counts (MX_ERR_ARG on NULL or inconsistent arguments: bins not ascending, an empty bin,
 * counts that do not add up to nrows / ncols, lengths that do not add up to nnz, value counts outside
 * [0, nnz]). */
mx_status mx_features_from_counts(const mx_feature_counts *c, mx_features *f);

#ifdef __cplusplus
}
#endif
#endif
