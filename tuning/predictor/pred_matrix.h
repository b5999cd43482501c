/* pred_matrix.h - one matrix for the predictor tools (CPU tool and GPU label runner): loaded from a
 * generator spec or a file (.mtx = Matrix Market, anything else = PETSc binary), viewed as the
 * core's 32-bit mx_csr; and the feature vector printed as one JSON object. */
#ifndef PRED_MATRIX_H
#define PRED_MATRIX_H

#include <stdint.h>
#include <stdio.h>

#include "core/mx_features.h"
#include "io/mx_io.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  mx_io_csr io;      /* owned arrays */
  int32_t *rowptr32; /* nrows+1, the 32-bit copy that A points at */
  mx_csr A;
} pred_matrix;

/* Exactly one of gen_spec and path is non-NULL. seed: the generator's (0 = the family default).
 * 0 on success, else 1 with a message in err (nnz beyond 32 bits is refused). */
int pred_matrix_load(const char *gen_spec, const char *path, uint64_t seed, pred_matrix *M, char *err, size_t errlen);
void pred_matrix_free(pred_matrix *M);

/* {"nrows": ..., ...} with every mx_feature_name in order, 17 significant digits, one line. */
void pred_print_features_json(FILE *f, const mx_features *x);

#ifdef __cplusplus
}
#endif
#endif
