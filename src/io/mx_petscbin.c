/* mx_petscbin.c - PETSc binary matrix files (MatView/MatLoad layout, 32-bit PetscInt), without PETSc.
 *
 * Layout, all big-endian: int32 MAT_FILE_CLASSID = 1211216, int32 rows, int32 cols, int32 nnz,
 * int32 row lengths[rows], int32 column indices[nnz] (0-based, row by row), float64 values[nnz].
 * (Same layout as PETSc's PetscBinaryRead.m / MatLoad_SeqAIJ_Binary read back.) */
#include "io/mx_io_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MX_BIN_CHUNK (1u << 16) /* items per buffered write/read */

static void put_be32(unsigned char *p, uint32_t v)
{
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}
static void put_be64(unsigned char *p, uint64_t v)
{
  put_be32(p, (uint32_t)(v >> 32));
  put_be32(p + 4, (uint32_t)v);
}
static uint32_t get_be32(const unsigned char *p)
{
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}
static uint64_t get_be64(const unsigned char *p) { return ((uint64_t)get_be32(p) << 32) | get_be32(p + 4); }

int mx_petsc_write(const char *path, const mx_io_csr *A, char *err, size_t errlen)
{
  if (!path) return mx_io_errf(err, errlen, "(null): no file name");
  char cerr[200];
  if (mx_io_csr_check(A, cerr, sizeof(cerr))) return mx_io_errf(err, errlen, "%s: not written: %s", path, cerr);
  if (A->nnz > INT32_MAX)
    return mx_io_errf(err, errlen, "%s: not written: nnz %lld does not fit the int32 PETSc binary header", path,
                      (long long)A->nnz);
  FILE *f = fopen(path, "wb");
  if (!f) return mx_io_errf(err, errlen, "%s: cannot open for writing: %s", path, strerror(errno));
  unsigned char *buf = malloc((size_t)MX_BIN_CHUNK * 8);
  int bad = !buf, e = ENOMEM;
  if (!bad) {
    put_be32(buf, MX_PETSC_MAT_FILE_CLASSID);
    put_be32(buf + 4, (uint32_t)A->nrows);
    put_be32(buf + 8, (uint32_t)A->ncols);
    put_be32(buf + 12, (uint32_t)A->nnz);
    bad = fwrite(buf, 1, 16, f) != 16;
  }
  /* three sections, each written in chunks: row lengths, column indices, values */
  for (int sec = 0; sec < 3 && !bad; sec++) {
    int64_t total = sec == 0 ? A->nrows : A->nnz;
    size_t w = sec == 2 ? 8 : 4;
    for (int64_t k0 = 0; k0 < total && !bad; k0 += MX_BIN_CHUNK) {
      int64_t k1 = total - k0 < MX_BIN_CHUNK ? total : k0 + MX_BIN_CHUNK;
      for (int64_t k = k0; k < k1; k++) {
        unsigned char *p = buf + (size_t)(k - k0) * w;
        if (sec == 0) put_be32(p, (uint32_t)(A->rowptr[k + 1] - A->rowptr[k]));
        else if (sec == 1) put_be32(p, (uint32_t)A->colidx[k]);
        else {
          uint64_t u;
          memcpy(&u, &A->val[k], 8);
          put_be64(p, u);
        }
      }
      size_t bytes = (size_t)(k1 - k0) * w;
      bad = fwrite(buf, 1, bytes, f) != bytes;
    }
  }
  if (bad && buf) e = errno;
  free(buf);
  if (fclose(f) && !bad) bad = 1, e = errno;
  if (bad) {
    remove(path);
    return mx_io_errf(err, errlen, "%s: write failed: %s", path, strerror(e));
  }
  return 0;
}

/* read n items of w bytes into buf; 0 ok */
static int read_exact(FILE *f, void *buf, size_t bytes) { return fread(buf, 1, bytes, f) != bytes; }

/* size of the open file f in bytes (position restored to the start), or -1 if it cannot be told */
static long long file_size(FILE *f)
{
  long long n = -1;
  if (!fseek(f, 0, SEEK_END)) n = ftell(f);
  return fseek(f, 0, SEEK_SET) ? -1 : n;
}

int mx_petsc_read(const char *path, mx_io_csr *A, char *err, size_t errlen)
{
  if (!A) return mx_io_errf(err, errlen, "%s: NULL output matrix", path ? path : "(null)");
  memset(A, 0, sizeof(*A));
  if (!path) return mx_io_errf(err, errlen, "(null): no file name");
  FILE *f = fopen(path, "rb");
  if (!f) return mx_io_errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
  unsigned char h[16];
  unsigned char *buf = NULL;
  int64_t *rp = NULL;
  int32_t *col = NULL;
  double *val = NULL;
  int rc = 1;
  if (read_exact(f, h, 16)) {
    mx_io_errf(err, errlen, "%s: file shorter than the 16-byte PETSc header", path);
    goto done;
  }
  int32_t id = (int32_t)get_be32(h), M = (int32_t)get_be32(h + 4), N = (int32_t)get_be32(h + 8),
          nz = (int32_t)get_be32(h + 12);
  if (id != MX_PETSC_MAT_FILE_CLASSID) {
    mx_io_errf(err, errlen, "%s: not a PETSc binary matrix (class id %d, expected %d)", path, (int)id,
               MX_PETSC_MAT_FILE_CLASSID);
    goto done;
  }
  if (M < 0 || N < 0 || nz < 0) {
    mx_io_errf(err, errlen, "%s: negative size in header (%d x %d, nnz %d)", path, (int)M, (int)N, (int)nz);
    goto done;
  }
  /* the header's sizes must fit in the file before they decide any allocation: a short or corrupt
   * file claiming 2^31 nonzeros is refused here instead of allocating 24 GB */
  long long need = 16 + 4 * (long long)M + 12 * (long long)nz, have = file_size(f);
  if (have >= 0 && have < need) {
    mx_io_errf(err, errlen, "%s: file has %lld bytes, its header (%d x %d, %d nonzeros) needs %lld", path, have, (int)M,
               (int)N, (int)nz, need);
    goto done;
  }
  char why[200];
  if (!mx_mem_fits(8.0 * ((double)M + 1) + 12.0 * (double)nz + 8.0 * MX_BIN_CHUNK, why, sizeof why)) {
    mx_io_errf(err, errlen, "%s: %d x %d with %d nonzeros: %s", path, (int)M, (int)N, (int)nz, why);
    goto done;
  }
  if (fseek(f, 16, SEEK_SET)) {
    mx_io_errf(err, errlen, "%s: cannot seek past the header: %s", path, strerror(errno));
    goto done;
  }
  buf = malloc((size_t)MX_BIN_CHUNK * 8);
  rp = mx_io_malloc((size_t)M + 1, sizeof(int64_t));
  col = mx_io_malloc((size_t)nz, sizeof(int32_t));
  val = mx_io_malloc((size_t)nz, sizeof(double));
  if (!buf || !rp || !col || !val) {
    mx_io_errf(err, errlen, "%s: out of memory for %d x %d with %d nonzeros", path, (int)M, (int)N, (int)nz);
    goto done;
  }
  rp[0] = 0;
  for (int sec = 0; sec < 3; sec++) {
    int64_t total = sec == 0 ? M : nz;
    size_t w = sec == 2 ? 8 : 4;
    for (int64_t k0 = 0; k0 < total; k0 += MX_BIN_CHUNK) {
      int64_t k1 = total - k0 < MX_BIN_CHUNK ? total : k0 + MX_BIN_CHUNK;
      if (read_exact(f, buf, (size_t)(k1 - k0) * w)) {
        mx_io_errf(err, errlen, "%s: file ends inside the %s", path,
                   sec == 0 ? "row lengths" : sec == 1 ? "column indices" : "values");
        goto done;
      }
      for (int64_t k = k0; k < k1; k++) {
        const unsigned char *p = buf + (size_t)(k - k0) * w;
        if (sec == 0) {
          int32_t len = (int32_t)get_be32(p);
          if (len < 0 || len > N) {
            mx_io_errf(err, errlen, "%s: row %lld has length %d (columns: %d)", path, (long long)k, (int)len, (int)N);
            goto done;
          }
          rp[k + 1] = rp[k] + len;
        } else if (sec == 1) {
          int32_t c = (int32_t)get_be32(p);
          if (c < 0 || c >= N) {
            mx_io_errf(err, errlen, "%s: column index %d at nonzero %lld outside 0..%d", path, (int)c, (long long)k,
                       (int)N - 1);
            goto done;
          }
          col[k] = c;
        } else {
          uint64_t u = get_be64(p);
          memcpy(&val[k], &u, 8);
        }
      }
    }
    if (sec == 0 && rp[M] != nz) {
      mx_io_errf(err, errlen, "%s: row lengths add up to %lld, header says %d nonzeros", path, (long long)rp[M], (int)nz);
      goto done;
    }
  }
  A->nrows = M;
  A->ncols = N;
  A->nnz = mx_io_csr_sort_dedup(M, rp, col, val);
  A->rowptr = rp;
  A->colidx = col;
  A->val = val;
  rp = NULL;
  col = NULL;
  val = NULL;
  rc = 0;
done:
  free(buf);
  free(rp);
  free(col);
  free(val);
  fclose(f);
  return rc;
}
