/* test_io_petscbin.c - PETSc binary writer: byte-exact file for a tiny matrix (computed by hand from the
 * MatView/MatLoad layout), read back, generated round trip, and refused inputs. */
#include "io/mx_io.h"
#include "mx_test.h"

#include <stdlib.h>
#include <string.h>

static unsigned char *slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc((size_t)n + 1);
  *len = fread(b, 1, (size_t)n, f);
  fclose(f);
  return b;
}

static void spit(const char *path, const unsigned char *b, size_t len)
{
  FILE *f = fopen(path, "wb");
  fwrite(b, 1, len, f);
  fclose(f);
}

static int same_csr(const mx_io_csr *A, const mx_io_csr *B)
{
  return A->nrows == B->nrows && A->ncols == B->ncols && A->nnz == B->nnz &&
         !memcmp(A->rowptr, B->rowptr, ((size_t)A->nrows + 1) * sizeof(int64_t)) &&
         !memcmp(A->colidx, B->colidx, (size_t)A->nnz * sizeof(int32_t)) &&
         !memcmp(A->val, B->val, (size_t)A->nnz * sizeof(double));
}

/* A = [1 0 -2.5; 0 0.5 0] (2 x 3, 3 nonzeros) */
static const unsigned char expected[] = {
  0x00, 0x12, 0x7B, 0x50,                         /* MAT_FILE_CLASSID 1211216 = 0x00127B50 */
  0x00, 0x00, 0x00, 0x02,                         /* rows */
  0x00, 0x00, 0x00, 0x03,                         /* cols */
  0x00, 0x00, 0x00, 0x03,                         /* nnz */
  0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, /* row lengths 2, 1 */
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, /* columns 0, 2, 1 */
  0x3F, 0xF0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /*  1.0 */
  0xC0, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* -2.5 */
  0x3F, 0xE0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /*  0.5 */
};

static void test_tiny_bytes(void)
{
  int64_t rp[] = {0, 2, 3};
  int32_t ci[] = {0, 2, 1};
  double v[] = {1.0, -2.5, 0.5};
  mx_io_csr A = {2, 3, 3, rp, ci, v}, B;
  char err[512];
  const char *path = MX_TEST_TMPDIR "/tiny.petsc";
  CHECK(mx_petsc_write(path, &A, err, sizeof(err)) == 0, "%s", err);
  size_t len = 0;
  unsigned char *got = slurp(path, &len);
  CHECK(got && len == sizeof(expected), "file is %zu bytes, expected %zu", len, sizeof(expected));
  if (got && len == sizeof(expected))
    for (size_t i = 0; i < len; i++) CHECK(got[i] == expected[i], "byte %zu: 0x%02X, expected 0x%02X", i, got[i], expected[i]);
  free(got);
  CHECK(mx_petsc_read(path, &B, err, sizeof(err)) == 0, "%s", err);
  CHECK(same_csr(&A, &B), "tiny read back differs");
  mx_io_csr_free(&B);
}

static void test_round_trip(void)
{
  const char *specs[] = {"kron:12:8:v", "bipartite:500:2000:7", "lap3d:9", "rgg:1"};
  char err[512];
  for (int t = 0; t < 4; t++) {
    mx_io_csr A, B;
    CHECK(mx_gen(specs[t], 3, &A, err, sizeof(err)) == 0, "%s", err);
    const char *path = MX_TEST_TMPDIR "/rt.petsc";
    CHECK(mx_petsc_write(path, &A, err, sizeof(err)) == 0, "%s", err);
    size_t len = 0;
    unsigned char *b = slurp(path, &len);
    CHECK(len == 16 + 4 * (size_t)A.nrows + 12 * (size_t)A.nnz, "%s: file size %zu", specs[t], len);
    free(b);
    CHECK(mx_petsc_read(path, &B, err, sizeof(err)) == 0, "%s", err);
    CHECK(same_csr(&A, &B), "%s: round trip differs", specs[t]);
    mx_io_csr_free(&A);
    mx_io_csr_free(&B);
  }
}

static void test_refused(void)
{
  char err[512];
  mx_io_csr A;
  const char *path = MX_TEST_TMPDIR "/bad.petsc";
  unsigned char b[sizeof(expected)];
  /* wrong class id */
  memcpy(b, expected, sizeof(b));
  b[3] = 0x51;
  spit(path, b, sizeof(b));
  CHECK(mx_petsc_read(path, &A, err, sizeof(err)) != 0 && strstr(err, "class id") && strstr(err, "bad.petsc"), "%s", err);
  /* truncated in the values: refused from the file size, before any allocation */
  spit(path, expected, sizeof(expected) - 3);
  CHECK(mx_petsc_read(path, &A, err, sizeof(err)) != 0 && strstr(err, "needs"), "%s", err);
  /* a header claiming 2^31-1 rows and nonzeros in a 16-byte file (fuzz find: the reader allocated
   * 24 GB before reading a byte) */
  memcpy(b, expected, 16);
  memset(b + 4, 0x7f, 4);
  memset(b + 12, 0x7f, 4);
  spit(path, b, 16);
  CHECK(mx_petsc_read(path, &A, err, sizeof(err)) != 0 && strstr(err, "file has 16 bytes") && strstr(err, "needs"), "%s", err);
  /* truncated header */
  spit(path, expected, 10);
  CHECK(mx_petsc_read(path, &A, err, sizeof(err)) != 0 && strstr(err, "header"), "%s", err);
  /* row lengths do not add up to nnz */
  memcpy(b, expected, sizeof(b));
  b[19] = 1;
  spit(path, b, sizeof(b));
  CHECK(mx_petsc_read(path, &A, err, sizeof(err)) != 0 && strstr(err, "add up"), "%s", err);
  /* column out of range */
  memcpy(b, expected, sizeof(b));
  b[31] = 7;
  spit(path, b, sizeof(b));
  CHECK(mx_petsc_read(path, &A, err, sizeof(err)) != 0 && strstr(err, "column"), "%s", err);
  CHECK(A.rowptr == NULL, "output not cleared");
  /* writer: invalid CSR, bad path */
  int64_t rp[] = {0, 2, 3};
  int32_t ci[] = {2, 0, 1}; /* unsorted row */
  double v[] = {1, 2, 3};
  mx_io_csr C = {2, 3, 3, rp, ci, v};
  CHECK(mx_petsc_write(path, &C, err, sizeof(err)) != 0 && strstr(err, "increasing"), "%s", err);
  ci[0] = 0;
  ci[1] = 2;
  CHECK(mx_petsc_write(MX_TEST_TMPDIR "/no/dir/x.petsc", &C, err, sizeof(err)) != 0 && strstr(err, "x.petsc"), "%s", err);
}

int main(void)
{
  test_tiny_bytes();
  test_round_trip();
  test_refused();
  TEST_DONE("test_io_petscbin");
}
