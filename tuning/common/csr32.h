/* csr32.h - an mx_io_csr (the readers' and generators' 64-bit row pointers) moved into a benchmark's
 * own CSR with 32-bit row pointers (what the format builders take). Header-only, C++; the CSR type C
 * has nrows, ncols and std::vector rowptr (int32_t), col (int32_t), val (double); mx_csr32_gen makes
 * one from a generator spec. */
#ifndef MX_CSR32_H
#define MX_CSR32_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern "C" {
#include "io/mx_io.h"
}

/* A = B, then B freed; false (a "skip NAME" message, B freed) when B's nonzeros exceed 32 bits */
template <class C>
static bool mx_csr32_take(mx_io_csr *B, C *A, const char *name) {
  if (B->nnz > INT32_MAX - 1) {
    fprintf(stderr, "skip %s: nnz %lld exceeds 32 bits\n", name, (long long)B->nnz);
    mx_io_csr_free(B);
    return false;
  }
  A->nrows = B->nrows;
  A->ncols = B->ncols;
  A->rowptr.resize((size_t)B->nrows + 1);
  for (int32_t i = 0; i <= B->nrows; ++i) A->rowptr[i] = (int32_t)B->rowptr[i];
  A->col.assign(B->colidx, B->colidx + B->nnz);
  A->val.assign(B->val, B->val + B->nnz);
  mx_io_csr_free(B);
  return true;
}

/* A = the generated matrix spec (mx_gen, seed 0); false (a "skip NAME: why" message) when it cannot
 * be made or its nonzeros exceed 32 bits */
template <class C>
static bool mx_csr32_gen(const char *spec, C *A, const char *name) {
  mx_io_csr B;
  char err[512];
  memset(&B, 0, sizeof B);
  if (mx_gen(spec, 0, &B, err, sizeof err)) {
    fprintf(stderr, "skip %s: %s\n", name, err);
    return false;
  }
  return mx_csr32_take(&B, A, name);
}

#endif
