/* test_io_mtx.c - Matrix Market reader/writer: every shipped malformed file is refused with
 * "FILE:LINE: ...", every shipped real file reads with the right size, nnz and known values, a set
 * of hand-made bad and tricky inputs, number parsing against strtod, and write/read round trips. */
#include "io/mx_io.h"
#include "mx_test.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static char tmp_path[1024];

static const char *write_tmp(const char *name, const char *text, size_t len)
{
  snprintf(tmp_path, sizeof(tmp_path), "%s/%s", MX_TEST_TMPDIR, name);
  FILE *f = fopen(tmp_path, "wb");
  if (!f) {
    perror(tmp_path);
    exit(2);
  }
  fwrite(text, 1, len, f);
  fclose(f);
  return tmp_path;
}

/* value of A(i,j) or NAN if not stored */
static double entry(const mx_io_csr *A, int32_t i, int32_t j)
{
  for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
    if (A->colidx[k] == j) return A->val[k];
  return NAN;
}

/* 1 if A equals its transpose times sign (same pattern, a_ji = sign * a_ij) */
static int is_symmetric(const mx_io_csr *A, double sign)
{
  if (A->nrows != A->ncols) return 0;
  for (int32_t i = 0; i < A->nrows; i++)
    for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
      double t = entry(A, A->colidx[k], i);
      if (isnan(t) && !isnan(A->val[k])) return 0;
      if (!isnan(t) && t != sign * A->val[k]) return 0;
    }
  return 1;
}

/* "PATH:LINE: " with LINE a number: the message names the file and a line */
static int names_file_and_line(const char *err, const char *path, long *line)
{
  size_t n = strlen(path);
  if (strncmp(err, path, n) || err[n] != ':' || !isdigit((unsigned char)err[n + 1])) return 0;
  char *end;
  *line = strtol(err + n + 1, &end, 10);
  return end[0] == ':' && end[1] == ' ' && end[2];
}

static void test_malformed_dir(void)
{
  char dir[1024], path[2048], err[512];
  snprintf(dir, sizeof(dir), "%s/malformed", MX_MATRICES_DIR);
  DIR *d = opendir(dir);
  CHECK(d != NULL, "cannot open %s", dir);
  if (!d) return;
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    mx_io_csr A;
    int rc = mx_mtx_read(path, &A, err, sizeof(err));
    long line = 0;
    CHECK(rc != 0, "%s was accepted", e->d_name);
    CHECK(rc == 0 || names_file_and_line(err, path, &line), "%s: message '%s' lacks FILE:LINE", e->d_name, err);
    CHECK(rc == 0 || (line >= 1 && !strchr(err, '\n')), "%s: bad line %ld or multi-line message '%s'", e->d_name, line, err);
    CHECK(A.rowptr == NULL && A.colidx == NULL && A.val == NULL, "%s: output not empty after error", e->d_name);
    if (rc == 0) mx_io_csr_free(&A);
    printf("  refused %-28s %s\n", e->d_name, err + strlen(dir) + 1);
    count++;
  }
  closedir(d);
  CHECK(count >= 12, "only %d malformed files found", count);
}

typedef struct {
  const char *name;
  int32_t m, n;
  int64_t nnz;
  int sym; /* 1 symmetric, -1 skew, 0 general */
} real_info;

/* expected sizes: symmetric files counted as 2*entries - diagonal entries */
static const real_info reals[] = {
  {"LFAT5.mtx", 14, 14, 46, 1},        {"bcsstk13.mtx", 2003, 2003, 83883, 1},
  {"cryg2500.mtx", 2500, 2500, 12349, 0}, {"full_symmetric.mtx", 4, 4, 16, 1},
  {"jagmesh7.mtx", 1138, 1138, 7450, 1},  {"karate.mtx", 34, 34, 156, 1},
  {"ldbc-directed-example.mtx", 10, 10, 17, 0}, {"lp_afiro.mtx", 27, 51, 102, 0},
  {"olm1000.mtx", 1000, 1000, 3996, 0},   {"pushpull.mtx", 4000, 4000, 196305, 1},
  {"skew_fp64.mtx", 6, 6, 20, -1},       {"test_FW_2003.mtx", 2003, 2003, 23973, 0},
  {"west0067.mtx", 67, 67, 294, 0},       {"zenios.mtx", 2873, 2873, 27191, 1},
};

static void test_real_dir(void)
{
  char dir[1024], path[2048], err[512];
  snprintf(dir, sizeof(dir), "%s/real", MX_MATRICES_DIR);
  DIR *d = opendir(dir);
  CHECK(d != NULL, "cannot open %s", dir);
  if (!d) return;
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    const real_info *ri = NULL;
    for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
      if (!strcmp(reals[i].name, e->d_name)) ri = &reals[i];
    mx_io_csr A;
    /* skew_fp64 holds an 'inf' on purpose: refused by default, read with MX_MTX_ALLOW_NONFINITE */
    int nonfinite = !strcmp(e->d_name, "skew_fp64.mtx");
    int rc = mx_mtx_read_flags(path, nonfinite ? MX_MTX_ALLOW_NONFINITE : 0, &A, err, sizeof(err));
    CHECK(rc == 0, "%s: %s", e->d_name, err);
    if (rc) continue;
    count++;
    CHECK(mx_io_csr_check(&A, err, sizeof(err)) == 0, "%s: %s", e->d_name, err);
    CHECK(ri != NULL, "%s: not in the table of expected sizes (add it)", e->d_name);
    if (ri) {
      CHECK(A.nrows == ri->m && A.ncols == ri->n && A.nnz == ri->nnz, "%s: %d x %d nnz %lld, expected %d x %d nnz %lld",
            e->d_name, A.nrows, A.ncols, (long long)A.nnz, ri->m, ri->n, (long long)ri->nnz);
      if (ri->sym) CHECK(is_symmetric(&A, ri->sym), "%s: not %s after expansion", e->d_name, ri->sym > 0 ? "symmetric" : "skew");
    }
    mx_io_csr_free(&A);
  }
  closedir(d);
  CHECK(count == (int)(sizeof(reals) / sizeof(reals[0])), "read %d real files, expected %d", count,
        (int)(sizeof(reals) / sizeof(reals[0])));
}

static void test_real_values(void)
{
  char path[2048], err[512];
  mx_io_csr A;
  snprintf(path, sizeof(path), "%s/real/bcsstk13.mtx", MX_MATRICES_DIR);
  CHECK(mx_mtx_read(path, &A, err, sizeof(err)) == 0, "%s", err);
  CHECK(entry(&A, 0, 0) == 277281165.183, "bcsstk13 a(0,0) = %.17g", entry(&A, 0, 0));
  mx_io_csr_free(&A);

  snprintf(path, sizeof(path), "%s/real/lp_afiro.mtx", MX_MATRICES_DIR);
  CHECK(mx_mtx_read(path, &A, err, sizeof(err)) == 0, "%s", err);
  CHECK(entry(&A, 2, 0) == 1.0, "lp_afiro a(2,0) = %g", entry(&A, 2, 0)); /* "3 1 1" */
  mx_io_csr_free(&A);

  /* array symmetric, column-major lower triangle */
  snprintf(path, sizeof(path), "%s/real/full_symmetric.mtx", MX_MATRICES_DIR);
  CHECK(mx_mtx_read(path, &A, err, sizeof(err)) == 0, "%s", err);
  CHECK(entry(&A, 0, 0) == 10.762188911437988, "a(0,0) = %.17g", entry(&A, 0, 0));
  CHECK(entry(&A, 1, 0) == 18.18952178955078 && entry(&A, 0, 1) == 18.18952178955078, "a(1,0)/a(0,1)");
  CHECK(entry(&A, 3, 0) == 22.269603729248047 && entry(&A, 0, 3) == 22.269603729248047, "a(3,0)/a(0,3)");
  CHECK(entry(&A, 1, 1) == 7.084949970245361, "a(1,1) = %.17g", entry(&A, 1, 1));
  CHECK(entry(&A, 3, 2) == 19.899736404418945, "a(3,2) = %.17g", entry(&A, 3, 2));
  CHECK(entry(&A, 3, 3) == 3.9635860919952393, "a(3,3) = %.17g", entry(&A, 3, 3));
  mx_io_csr_free(&A);

  snprintf(path, sizeof(path), "%s/real/karate.mtx", MX_MATRICES_DIR);
  CHECK(mx_mtx_read(path, &A, err, sizeof(err)) == 0, "%s", err);
  int ones = 1;
  for (int64_t k = 0; k < A.nnz; k++) ones &= A.val[k] == 1.0;
  CHECK(ones, "karate (pattern) values are not all 1");
  CHECK(!isnan(entry(&A, 1, 0)) && !isnan(entry(&A, 0, 1)), "karate edge 2-1 missing");
  mx_io_csr_free(&A);

  snprintf(path, sizeof(path), "%s/real/skew_fp64.mtx", MX_MATRICES_DIR);
  CHECK(mx_mtx_read(path, &A, err, sizeof(err)) != 0, "skew_fp64 (contains inf) accepted by default");
  long line = 0;
  CHECK(names_file_and_line(err, path, &line) && line == 4 && strstr(err, "finite"), "skew_fp64 message: %s", err);
  CHECK(mx_mtx_read_flags(path, MX_MTX_ALLOW_NONFINITE, &A, err, sizeof(err)) == 0, "%s", err);
  CHECK(entry(&A, 3, 0) == -.12565458736262625 && entry(&A, 0, 3) == .12565458736262625, "skew a(3,0)/a(0,3)");
  CHECK(entry(&A, 4, 0) == INFINITY && entry(&A, 0, 4) == -INFINITY, "skew inf entries");
  CHECK(isnan(entry(&A, 0, 0)), "skew matrix has a diagonal entry");
  mx_io_csr_free(&A);
}

/* hand-made bad inputs: each must fail on the given line with a message containing the keyword */
typedef struct {
  const char *text;
  long line;
  const char *keyword;
} bad_case;

static const bad_case bads[] = {
  {"", 1, "empty"},
  {"%%MatrixMarket matrix coordinate real general\n", 1, "size line"},
  {"%%MatrixMarket matrix coordinate real general\n% only comments\n%\n", 3, "size line"},
  {"%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n", 1, "4 words"},
  {"%%MatrixMarket matrix coordinate real general extra\n1 1 1\n1 1 1\n", 1, "extra"},
  {"%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n", 1, "banner"},
  {"%%MatrixMarket vector coordinate real general\n1 1 1\n1 1 1\n", 1, "vector"},
  {"%%MatrixMarket matrix sparse real general\n1 1 1\n1 1 1\n", 1, "sparse"},
  {"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1, "complex"},
  {"%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", 1, "hermitian"},
  {"%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n2 1\n", 1, "skew"},
  {"%%MatrixMarket matrix array pattern general\n1 1\n1\n", 1, "array pattern"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n", 3, "ends early"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n2 2 2\n", 4, "more entries"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n% comment\n\n2 2 2\n", 6, "more entries"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n0 1 1\n", 3, "out of range"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1\n", 3, "out of range"},
  {"%%MatrixMarket matrix coordinate real general\n3 4 1\n1 5 1\n", 3, "out of range"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n-1 1 1\n", 3, "row index"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1.5 1 1\n", 3, "row index"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 x 1\n", 3, "column index"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 99999999999999999999999 1\n", 3, "column index"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1\n", 3, "missing column"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1\n", 3, "missing value"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1.5x\n", 3, "not a number"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 abc\n", 3, "not a number"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1e\n", 3, "not a number"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 .\n", 3, "not a number"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 --1\n", 3, "not a number"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1..2\n", 3, "not a number"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 0x10\n", 3, "not a number"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 nan\n", 3, "finite"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 -Inf\n", 3, "finite"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1e999\n", 3, "finite"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1.0 7\n", 3, "unexpected"},
  {"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n", 3, "unexpected"},
  {"%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n", 3, "integer"},
  {"%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n", 3, "diagonal"},
  {"%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n2 2 1\n", 2, "square"},
  {"%%MatrixMarket matrix coordinate real general\n-3 3 1\n", 2, "negative"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 -1\n", 2, "negative"},
  {"%%MatrixMarket matrix coordinate real general\n3000000000 3 1\n", 2, "int32"},
  {"%%MatrixMarket matrix coordinate real general\n3 2147483648 1\n", 2, "int32"},
  {"%%MatrixMarket matrix coordinate real general\n3 x 1\n", 2, "not an integer"},
  {"%%MatrixMarket matrix coordinate real general\n3 3\n", 2, "3 numbers"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 1 4\n", 2, "extra"},
  {"%%MatrixMarket matrix coordinate real general\n3 3 99999999999\n1 1 1\n", 3, "ends early"},
  {"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 5, "ends early"},
  {"%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n", 5, "more entries"},
  {"%%MatrixMarket matrix array real general\n2 1\n1 2\n2\n", 3, "unexpected"},
  {"%%MatrixMarket matrix array real symmetric\n2 3\n1\n", 2, "square"},
  {"%%MatrixMarket matrix coordinate real general\n%%GraphBLAS type gunk\n1 1 1\n1 1 1\n", 2, "GraphBLAS"},
  {"%%MatrixMarket matrix coordinate real general\n%%GraphBLAS type uint8_t\n1 1 1\n1 1 -1\n", 4, "unsigned"},
};

static void test_bad_inputs(void)
{
  char err[512];
  for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
    char name[64];
    snprintf(name, sizeof(name), "bad_%02d.mtx", (int)i);
    const char *path = write_tmp(name, bads[i].text, strlen(bads[i].text));
    mx_io_csr A;
    int rc = mx_mtx_read(path, &A, err, sizeof(err));
    long line = -1;
    CHECK(rc != 0, "case %d accepted: %s", (int)i, bads[i].text);
    if (!rc) {
      mx_io_csr_free(&A);
      continue;
    }
    CHECK(names_file_and_line(err, path, &line) && line == bads[i].line, "case %d: want line %ld, got '%s'", (int)i,
          bads[i].line, err);
    CHECK(strstr(err, bads[i].keyword) != NULL, "case %d: '%s' lacks '%s'", (int)i, err, bads[i].keyword);
    CHECK(A.rowptr == NULL, "case %d: output not cleared", (int)i);
  }
  /* a NUL byte (binary data) */
  static const char nul[] = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\0 5\n";
  const char *path = write_tmp("bad_nul.mtx", nul, sizeof(nul) - 1);
  mx_io_csr A;
  long line = 0;
  CHECK(mx_mtx_read(path, &A, err, sizeof(err)) != 0 && names_file_and_line(err, path, &line) && line == 3 &&
          strstr(err, "NUL"),
        "NUL byte: '%s'", err);
  /* missing file */
  CHECK(mx_mtx_read(MX_TEST_TMPDIR "/does/not/exist.mtx", &A, err, sizeof(err)) != 0 && strstr(err, "exist.mtx"),
        "missing file: '%s'", err);
  /* a tiny err buffer is not overrun and still terminated */
  char small[8];
  CHECK(mx_mtx_read(MX_TEST_TMPDIR "/does/not/exist.mtx", &A, small, sizeof(small)) != 0 && strlen(small) < 8, "small buffer");
  CHECK(mx_mtx_read(MX_TEST_TMPDIR "/does/not/exist.mtx", &A, NULL, 0) != 0, "NULL err buffer");
}

/* valid but unusual inputs */
static void test_tricky_inputs(void)
{
  char err[512];
  mx_io_csr A;
  /* CRLF, tabs, comments and blank lines among entries, no final newline, duplicates, unsorted rows,
   * exponents and signs, an explicit zero (kept) */
  static const char t1[] = "%%matrixmarket MATRIX Coordinate REAL General\r\n% comment\r\n\r\n  3 4 7\r\n"
                           "3 4 1.5E+02\r\n1 2 -.5\r\n% inside\r\n\r\n1 1\t+3\r\n1 2 0.25\r\n2 3 0\r\n3 1 1e-3\r\n1 4 -2";
  const char *path = write_tmp("ok_1.mtx", t1, sizeof(t1) - 1);
  int rc = mx_mtx_read(path, &A, err, sizeof(err));
  CHECK(rc == 0, "%s", err);
  if (!rc) {
    CHECK(A.nrows == 3 && A.ncols == 4 && A.nnz == 6, "%d x %d nnz %lld", A.nrows, A.ncols, (long long)A.nnz);
    CHECK(mx_io_csr_check(&A, err, sizeof(err)) == 0, "%s", err);
    CHECK(entry(&A, 0, 1) == -0.25, "duplicates summed: %g", entry(&A, 0, 1));
    CHECK(entry(&A, 0, 0) == 3 && entry(&A, 0, 3) == -2 && entry(&A, 2, 3) == 150 && entry(&A, 2, 0) == 1e-3, "values");
    CHECK(entry(&A, 1, 2) == 0, "explicit zero kept");
    mx_io_csr_free(&A);
  }
  /* symmetric given in the upper triangle and integer field */
  static const char t2[] = "%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n1 3 -7\n2 2 4\n2 3 5\n";
  path = write_tmp("ok_2.mtx", t2, sizeof(t2) - 1);
  rc = mx_mtx_read(path, &A, err, sizeof(err));
  CHECK(rc == 0, "%s", err);
  if (!rc) {
    CHECK(A.nnz == 5 && entry(&A, 2, 0) == -7 && entry(&A, 0, 2) == -7 && entry(&A, 1, 1) == 4 && entry(&A, 2, 1) == 5,
          "upper-triangle symmetric");
    mx_io_csr_free(&A);
  }
  /* empty matrices */
  static const char t3[] = "%%MatrixMarket matrix coordinate real general\n0 0 0\n";
  path = write_tmp("ok_3.mtx", t3, sizeof(t3) - 1);
  rc = mx_mtx_read(path, &A, err, sizeof(err));
  CHECK(rc == 0 && A.nrows == 0 && A.nnz == 0 && A.rowptr && A.rowptr[0] == 0, "0 x 0: %s", rc ? err : "");
  if (!rc) mx_io_csr_free(&A);
  static const char t4[] = "%%MatrixMarket matrix coordinate pattern general\n5 3 0\n";
  path = write_tmp("ok_4.mtx", t4, sizeof(t4) - 1);
  rc = mx_mtx_read(path, &A, err, sizeof(err));
  CHECK(rc == 0 && A.nrows == 5 && A.ncols == 3 && A.nnz == 0 && A.rowptr[5] == 0, "5 x 3 empty: %s", rc ? err : "");
  if (!rc) mx_io_csr_free(&A);
  /* skew array: strictly lower part, column-major */
  static const char t5[] = "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n";
  path = write_tmp("ok_5.mtx", t5, sizeof(t5) - 1);
  rc = mx_mtx_read(path, &A, err, sizeof(err));
  CHECK(rc == 0, "%s", err);
  if (!rc) {
    CHECK(A.nnz == 6 && entry(&A, 1, 0) == 1 && entry(&A, 0, 1) == -1 && entry(&A, 2, 0) == 2 && entry(&A, 2, 1) == 3 &&
            entry(&A, 1, 2) == -3,
          "skew array");
    mx_io_csr_free(&A);
  }
  /* array general rectangular: column-major */
  static const char t6[] = "%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n";
  path = write_tmp("ok_6.mtx", t6, sizeof(t6) - 1);
  rc = mx_mtx_read(path, &A, err, sizeof(err));
  CHECK(rc == 0, "%s", err);
  if (!rc) {
    CHECK(A.nnz == 6 && entry(&A, 0, 0) == 1 && entry(&A, 1, 0) == 2 && entry(&A, 0, 1) == 3 && entry(&A, 1, 2) == 6,
          "array general");
    mx_io_csr_free(&A);
  }
}

/* the reader's number parsing must agree bit for bit with strtod */
static void test_number_parsing(void)
{
  enum { NV = 20000 };
  static const char *fmts[] = {"%.17g", "%.15g", "%.6e", "%.3f", "%.20e", "%.1f", "%g"};
  size_t cap = (size_t)NV * 40 + 256, len = 0;
  char *text = malloc(cap);
  double *want = malloc(NV * sizeof(double));
  len += (size_t)snprintf(text, cap, "%%%%MatrixMarket matrix coordinate real general\n%d 1 %d\n", NV, NV);
  uint64_t x = 12345;
  for (int i = 0; i < NV; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    double mant = (double)(x >> 11) * 0x1.0p-53;
    int e10 = (int)((x >> 3) % 80) - 40;
    double v = (i & 1 ? -1 : 1) * mant * pow(10.0, e10);
    if (i % 97 == 0) v = (double)(i * 7);
    if (i % 101 == 0) v = 0.1 * i;
    char num[64];
    snprintf(num, sizeof(num), fmts[i % 7], v);
    if (i == 5) strcpy(num, "0.1000000000000000055511151231257827021181583404541015625");
    if (i == 7) strcpy(num, "000000000000000000000000000000000123.5e-2");
    if (i == 9) strcpy(num, "1234567890123456789012345678901234567890");
    if (i == 11) strcpy(num, "4.9406564584124654e-324");
    if (i == 13) strcpy(num, "1.7976931348623157e308");
    if (i == 15) strcpy(num, "9007199254740993");
    if (i == 17) strcpy(num, "-0");
    want[i] = strtod(num, NULL);
    len += (size_t)snprintf(text + len, cap - len, "%d 1 %s\n", i + 1, num);
  }
  const char *path = write_tmp("numbers.mtx", text, len);
  mx_io_csr A;
  char err[512];
  int rc = mx_mtx_read(path, &A, err, sizeof(err));
  CHECK(rc == 0, "%s", err);
  if (!rc) {
    int bad = 0;
    for (int i = 0; i < NV && bad < 5; i++)
      if (memcmp(&A.val[i], &want[i], sizeof(double))) {
        bad++;
        CHECK(0, "entry %d: got %.17g, strtod %.17g", i + 1, A.val[i], want[i]);
      }
    mx_io_csr_free(&A);
  }
  free(text);
  free(want);
}

static int same_csr(const mx_io_csr *A, const mx_io_csr *B)
{
  return A->nrows == B->nrows && A->ncols == B->ncols && A->nnz == B->nnz &&
         !memcmp(A->rowptr, B->rowptr, ((size_t)A->nrows + 1) * sizeof(int64_t)) &&
         !memcmp(A->colidx, B->colidx, (size_t)A->nnz * sizeof(int32_t)) &&
         !memcmp(A->val, B->val, (size_t)A->nnz * sizeof(double));
}

static void test_round_trip(void)
{
  char path[2048], err[512];
  const char *names[] = {"bcsstk13.mtx", "lp_afiro.mtx", "west0067.mtx", "pushpull.mtx"};
  for (int t = 0; t < 4; t++) {
    mx_io_csr A, B;
    snprintf(path, sizeof(path), "%s/real/%s", MX_MATRICES_DIR, names[t]);
    CHECK(mx_mtx_read(path, &A, err, sizeof(err)) == 0, "%s", err);
    snprintf(path, sizeof(path), "%s/rt_%s", MX_TEST_TMPDIR, names[t]);
    CHECK(mx_mtx_write(path, &A, err, sizeof(err)) == 0, "%s", err);
    CHECK(mx_mtx_read(path, &B, err, sizeof(err)) == 0, "%s", err);
    CHECK(same_csr(&A, &B), "%s: round trip differs", names[t]);
    mx_io_csr_free(&A);
    mx_io_csr_free(&B);
  }
  /* generated, random values in [-1,1), and special values */
  mx_io_csr A, B;
  CHECK(mx_gen("rand:3000:7", 5, &A, err, sizeof(err)) == 0, "%s", err);
  A.val[0] = -0.0;
  A.val[1] = 1e-310;
  A.val[2] = -1.7976931348623157e308;
  A.val[3] = 123456789012.0;
  snprintf(path, sizeof(path), "%s/rt_rand.mtx", MX_TEST_TMPDIR);
  CHECK(mx_mtx_write(path, &A, err, sizeof(err)) == 0, "%s", err);
  CHECK(mx_mtx_read(path, &B, err, sizeof(err)) == 0, "%s", err);
  CHECK(same_csr(&A, &B), "rand round trip differs");
  mx_io_csr_free(&A);
  mx_io_csr_free(&B);
  /* writer refuses an invalid CSR and an unwritable path */
  CHECK(mx_gen("lap2d:4", 0, &A, err, sizeof(err)) == 0, "%s", err);
  A.colidx[3] = 99;
  CHECK(mx_mtx_write(path, &A, err, sizeof(err)) != 0 && strstr(err, "column"), "invalid CSR written: %s", err);
  A.colidx[3] = 0;
  mx_gen("lap2d:4", 0, &B, err, sizeof(err));
  CHECK(mx_mtx_write(MX_TEST_TMPDIR "/no/such/dir/x.mtx", &B, err, sizeof(err)) != 0 && strstr(err, "x.mtx"),
        "unwritable path: %s", err);
  mx_io_csr_free(&A);
  mx_io_csr_free(&B);
}

int main(void)
{
  test_malformed_dir();
  test_real_dir();
  test_real_values();
  test_bad_inputs();
  test_tricky_inputs();
  test_number_parsing();
  test_round_trip();
  TEST_DONE("test_io_mtx");
}
