/* pred_matrix.c - load a matrix for the predictor tools and print its features as JSON. */
#include "pred_matrix.h"

#include <stdlib.h>
#include <string.h>

static int ends_with(const char *s, const char *suffix) {
  const size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

int pred_matrix_load(const char *gen_spec, const char *path, uint64_t seed, pred_matrix *M, char *err, size_t errlen) {
  memset(M, 0, sizeof(*M));
  int rc = gen_spec ? mx_gen(gen_spec, seed, &M->io, err, errlen)
                    : ends_with(path, ".mtx") ? mx_mtx_read(path, &M->io, err, errlen)
                                              : mx_petsc_read(path, &M->io, err, errlen);
  if (rc) return 1;
  if (M->io.nnz > INT32_MAX) {
    snprintf(err, errlen, "%s: nnz %lld exceeds 32 bits", gen_spec ? gen_spec : path, (long long)M->io.nnz);
    mx_io_csr_free(&M->io);
    return 1;
  }
  M->rowptr32 = malloc(((size_t)M->io.nrows + 1) * sizeof(int32_t));
  if (!M->rowptr32) {
    snprintf(err, errlen, "out of memory");
    mx_io_csr_free(&M->io);
    return 1;
  }
  for (int32_t i = 0; i <= M->io.nrows; i++) M->rowptr32[i] = (int32_t)M->io.rowptr[i];
  M->A = (mx_csr){M->io.nrows, M->io.ncols, M->rowptr32, M->io.colidx, M->io.val};
  return 0;
}

void pred_matrix_free(pred_matrix *M) {
  mx_io_csr_free(&M->io);
  free(M->rowptr32);
  memset(M, 0, sizeof(*M));
}

void pred_print_features_json(FILE *f, const mx_features *x) {
  fputc('{', f);
  for (int i = 0; i < MX_NFEATURES; i++) fprintf(f, "%s\"%s\": %.17g", i ? ", " : "", mx_feature_name(i), x->v[i]);
  fputs("}\n", f);
}
