/* mx_features.h - sparsity features of a CSR block (paper Table 2 in full, plus density and
 * balance measures), computed in O(nnz + nrows + ncols). They feed the crux predictor. */
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
#define MX_NFEATURES 80

typedef struct {
  double v[MX_NFEATURES];
} mx_features;

const char *mx_feature_name(int i);

/* Index of a named feature, or -1. */
int mx_feature_index(const char *name);

mx_status mx_features_compute(const mx_csr *A, mx_features *f);

#ifdef __cplusplus
}
#endif
#endif
