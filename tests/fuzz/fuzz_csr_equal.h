/* fuzz_csr_equal.h - bitwise equality of two owned CSR matrices (sizes, pattern, value bits). */
#ifndef FUZZ_CSR_EQUAL_H
#define FUZZ_CSR_EQUAL_H

#include "io/mx_io.h"
#include <string.h>

/* 1 if A and B have the same sizes, rowptr, colidx and bit-identical values */
static inline int fuzz_csr_equal(const mx_io_csr *A, const mx_io_csr *B)
{
  if (A->nrows != B->nrows || A->ncols != B->ncols || A->nnz != B->nnz) return 0;
  size_t nnz = (size_t)A->nnz;
  return !memcmp(A->rowptr, B->rowptr, ((size_t)A->nrows + 1) * sizeof(int64_t)) &&
         (!nnz || (!memcmp(A->colidx, B->colidx, nnz * sizeof(int32_t)) && !memcmp(A->val, B->val, nnz * sizeof(double))));
}
#endif
