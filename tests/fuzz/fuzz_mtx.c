/* fuzz_mtx.c - libFuzzer harness for the Matrix Market reader (mx_mtx_read_flags).
 * Any input: no crash, no leak, no undefined behaviour; an error leaves the output zeroed.
 * Accepted input: the CSR passes mx_io_csr_check, and without non-finite values it survives a
 * write + read round trip bit for bit. The input's size parity picks -mtx_allow_nonfinite. */
#include "fuzz_common.h"
#include "fuzz_csr_equal.h"
#include "io/mx_io_internal.h"

/* write A, read it back, and require the same matrix */
static void check_round_trip(const mx_io_csr *A)
{
  char err[512];
  mx_io_csr B;
  const char *path = fuzz_scratch_path2();
  if (mx_mtx_write(path, A, err, sizeof err)) fuzz_fail(err);
  if (mx_mtx_read(path, &B, err, sizeof err)) fuzz_fail(err);
  if (!fuzz_csr_equal(A, &B)) fuzz_fail("Matrix Market write + read changed the matrix");
  mx_io_csr_free(&B);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char err[512];
  mx_io_csr A;
  mx_io_set_mem_cap(FUZZ_MEM_CAP);
  unsigned flags = (size & 1) ? MX_MTX_ALLOW_NONFINITE : 0u;
  if (mx_mtx_read_flags(fuzz_write_scratch(data, size), flags, &A, err, sizeof err)) {
    if (A.rowptr || A.colidx || A.val || A.nnz) fuzz_fail("a refused file left a matrix behind");
    if (!err[0]) fuzz_fail("a refused file gave no message");
    return 0;
  }
  if (mx_io_csr_check(&A, err, sizeof err)) fuzz_fail(err);
  if (!flags) check_round_trip(&A);
  mx_io_csr_free(&A);
  return 0;
}
