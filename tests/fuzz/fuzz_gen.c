/* fuzz_gen.c - libFuzzer harness for the generator (mx_gen): the spec strings that matxtract-gen
 * and the examples' -gen take. Any input (up to its first NUL, at most 255 bytes): no crash, no
 * leak, no undefined behaviour; a refused spec leaves the output zeroed and says why in one line
 * that names the spec. Accepted: the CSR passes mx_io_csr_check, mx_gen_estimate bounds its
 * nonzeros and bytes, and the same spec and seed give the same arrays again. The memory cap keeps
 * every accepted spec small enough to generate in well under a second. */
#include "fuzz_common.h"
#include "fuzz_csr_equal.h"
#include "io/mx_io_internal.h"

#include <string.h>

#define FUZZ_GEN_MEM_CAP (UINT64_C(8) << 20)

/* the refused spec: output cleared, a one-line message naming the spec */
static void check_refused(const mx_io_csr *A, const char *err)
{
  if (A->rowptr || A->colidx || A->val || A->nnz) fuzz_fail("a refused spec left a matrix behind");
  if (!err[0] || strchr(err, '\n')) fuzz_fail("a refused spec gave no message, or one of several lines");
  if (strncmp(err, "spec '", 6)) fuzz_fail("the message does not begin with the spec");
}

/* the accepted spec: a valid CSR within the estimate, the same arrays a second time */
static void check_accepted(const char *spec, const mx_io_csr *A)
{
  char err[512];
  if (mx_io_csr_check(A, err, sizeof err)) fuzz_fail(err);
  int64_t est_nnz = 0;
  double est_bytes = 0;
  if (mx_gen_estimate(spec, &est_nnz, &est_bytes, err, sizeof err)) fuzz_fail("estimate refused an accepted spec");
  if (est_nnz < A->nnz) fuzz_fail("estimated fewer nonzeros than generated");
  if (est_bytes < 12.0 * (double)A->nnz + 8.0 * ((double)A->nrows + 1)) fuzz_fail("estimated fewer bytes than the CSR");
  mx_io_csr B;
  if (mx_gen(spec, 0, &B, err, sizeof err)) fuzz_fail("a spec accepted once was refused the second time");
  if (!fuzz_csr_equal(A, &B)) fuzz_fail("the same spec gave other arrays");
  mx_io_csr_free(&B);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char spec[256], err[512];
  size_t n = size < sizeof spec - 1 ? size : sizeof spec - 1;
  memcpy(spec, data, n);
  spec[n] = 0;
  err[0] = 0;
  mx_io_set_mem_cap(FUZZ_GEN_MEM_CAP);
  mx_io_csr A;
  if (mx_gen(spec, 0, &A, err, sizeof err)) check_refused(&A, err);
  else {
    check_accepted(spec, &A);
    mx_io_csr_free(&A);
  }
  return 0;
}
