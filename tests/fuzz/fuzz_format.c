/* fuzz_format.c - libFuzzer harness for the format builder on small random CSR.
 * The input decodes to a CSR (up to 63 x 63, entries in input order: unsorted rows and duplicates
 * allowed, as mx_csr permits) with values k/4 (|k| <= 128) and a crux. For the cruxes (0,0), (1,1),
 * (0.5,0.25) and the decoded one, in every hot mode and with mx_format_build_borrow, the format
 * must build, pass mx_format_check, hold every nonzero once, and give exactly the plain CSR
 * products y = A x, y = A x + z (also with y == z) and y = A'x, before and after a value refresh.
 * Values and x are small dyadic numbers, so every sum is exact in any order: equality is bitwise. */
#include "fuzz_common.h"
#include "core/mx_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_DIM 64

typedef struct {
  mx_csr A;
  int32_t *rowptr, *colidx;
  double *val, *val2; /* val2: the refreshed values */
  mx_crux crux;       /* decoded from the input */
} fuzz_matrix;

/* bytes -> CSR: [nrows%64] [ncols%64] [tau_c] [tau_r/tau_c] then (row, col, value) triples */
static void decode(const uint8_t *d, size_t n, fuzz_matrix *M)
{
  memset(M, 0, sizeof *M);
  int32_t nr = n > 0 ? d[0] % FUZZ_MAX_DIM : 0, nc = n > 1 ? d[1] % FUZZ_MAX_DIM : 0;
  double tc = n > 2 ? d[2] / 255.0 : 0.0, tr = n > 3 ? tc * (d[3] / 255.0) : 0.0;
  size_t ntrip = n > 4 && nr && nc ? (n - 4) / 3 : 0;
  const uint8_t *t = d + 4;
  M->crux = (mx_crux){tc, tr};
  M->rowptr = calloc((size_t)nr + 2, sizeof(int32_t));
  M->colidx = malloc((ntrip + 1) * sizeof(int32_t));
  M->val = malloc((ntrip + 1) * sizeof(double));
  M->val2 = malloc((ntrip + 1) * sizeof(double));
  if (!M->rowptr || !M->colidx || !M->val || !M->val2) fuzz_fail("out of memory decoding");
  for (size_t e = 0; e < ntrip; e++) M->rowptr[t[3 * e] % nr + 2]++;
  for (int32_t i = 0; i < nr; i++) M->rowptr[i + 2] += M->rowptr[i + 1];
  for (size_t e = 0; e < ntrip; e++) { /* rowptr[i+1] is row i's cursor; stable: input order kept */
    int32_t k = M->rowptr[t[3 * e] % nr + 1]++;
    M->colidx[k] = t[3 * e + 1] % nc;
    M->val[k] = (double)(int8_t)t[3 * e + 2] / 4.0;
    M->val2[k] = 0.5 - M->val[k];
  }
  M->A = (mx_csr){nr, nc, M->rowptr, M->colidx, M->val};
}

static void matrix_free(fuzz_matrix *M)
{
  free(M->rowptr);
  free(M->colidx);
  free(M->val);
  free(M->val2);
}

/* y = A x (trans 0) or y = A'x (trans 1) with values val, by plain CSR loops */
static void csr_product(const mx_csr *A, const double *val, int trans, const double *x, double *y)
{
  memset(y, 0, (size_t)(trans ? A->ncols : A->nrows) * sizeof(double));
  for (int32_t i = 0; i < A->nrows; i++)
    for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
      if (trans) y[A->colidx[k]] += val[k] * x[i];
      else y[i] += val[k] * x[A->colidx[k]];
    }
}

static void require_equal(const double *a, const double *b, int32_t n, const char *what)
{
  if (n && memcmp(a, b, (size_t)n * sizeof(double))) fuzz_fail(what);
}

/* every product of F against the plain CSR products with values val */
static void check_products(const mx_format *F, const mx_csr *A, const double *val)
{
  double x[FUZZ_MAX_DIM], z[FUZZ_MAX_DIM], y[FUZZ_MAX_DIM], ref[FUZZ_MAX_DIM];
  for (int i = 0; i < FUZZ_MAX_DIM; i++) {
    x[i] = (double)(i % 7 - 3);
    z[i] = (double)(i % 5) * 0.25;
  }
  csr_product(A, val, 0, x, ref);
  mx_spmv(F, x, y);
  require_equal(y, ref, A->nrows, "mx_spmv differs from the CSR product");
  for (int32_t i = 0; i < A->nrows; i++) ref[i] += z[i];
  mx_spmv_add(F, x, z, y);
  require_equal(y, ref, A->nrows, "mx_spmv_add differs from the CSR product + z");
  memcpy(y, z, sizeof y);
  mx_spmv_add(F, x, y, y);
  require_equal(y, ref, A->nrows, "mx_spmv_add with y == z differs from the CSR product + z");
  csr_product(A, val, 1, x, ref);
  mx_spmv_t(F, x, y);
  require_equal(y, ref, A->ncols, "mx_spmv_t differs from the CSR transpose product");
}

/* build at crux c in mode m (borrowed or owned), check the structure and every product, refresh
 * the values and check the products again */
static void check_build(fuzz_matrix *M, mx_crux c, mx_mode_request m, int borrow)
{
  mx_format F;
  char msg[160];
  mx_status st = borrow ? mx_format_build_borrow(&M->A, c, m, &F) : mx_format_build(&M->A, c, m, &F);
  snprintf(msg, sizeof msg, "build at crux (%g, %g) mode %d borrow %d: status %d", c.tau_c, c.tau_r, (int)m, borrow, (int)st);
  if (st != MX_OK) fuzz_fail(msg);
  if (mx_format_check(&F) != MX_OK) fuzz_fail("mx_format_check refused a built format");
  if ((int64_t)F.hot_nnz + F.cold_nnz != M->A.rowptr[M->A.nrows]) fuzz_fail("hot + cold nonzeros != nnz");
  check_products(&F, &M->A, M->val);
  mx_format_refresh_values(&F, M->val2);
  check_products(&F, &M->A, M->val2);
  mx_format_free(&F);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_matrix M;
  decode(data, size, &M);
  const mx_crux cruxes[4] = {{0, 0}, {1, 1}, {0.5, 0.25}, M.crux};
  for (int k = 0; k < 4; k++)
    for (mx_mode_request m = MX_MODE_AUTO; m <= MX_MODE_SE; m++) check_build(&M, cruxes[k], m, 0);
  check_build(&M, cruxes[0], MX_MODE_AUTO, 1);
  check_build(&M, M.crux, MX_MODE_AUTO, 1);
  matrix_free(&M);
  return 0;
}
