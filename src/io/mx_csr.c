/* mx_csr.c - the owned CSR of mx_io.h: free, check, and the sort/merge step every producer ends with. */
#include "io/mx_io_internal.h"

#include <stdlib.h>
#include <string.h>

int mx_io_errf(char *err, size_t errlen, const char *fmt, ...)
{
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return 1;
}

void *mx_io_malloc(size_t count, size_t size)
{
  if (size && count > SIZE_MAX / size) return NULL;
  return malloc(count && size ? count * size : 1);
}

void *mx_io_calloc(size_t count, size_t size)
{
  if (size && count > SIZE_MAX / size) return NULL;
  return calloc(count ? count : 1, size ? size : 1);
}

void mx_io_csr_free(mx_io_csr *A)
{
  if (!A) return;
  free(A->rowptr);
  free(A->colidx);
  free(A->val);
  memset(A, 0, sizeof(*A));
}

/* Invariants: rowptr[0] = 0, nondecreasing, rowptr[nrows] = nnz; 0 <= col < ncols, strictly
 * increasing within each row (sorted, no duplicates). */
int mx_io_csr_check(const mx_io_csr *A, char *err, size_t errlen)
{
  if (!A) return mx_io_errf(err, errlen, "csr: NULL matrix");
  if (A->nrows < 0 || A->ncols < 0 || A->nnz < 0)
    return mx_io_errf(err, errlen, "csr: negative size (%d x %d, nnz %lld)", (int)A->nrows, (int)A->ncols,
                      (long long)A->nnz);
  if (!A->rowptr) return mx_io_errf(err, errlen, "csr: rowptr is NULL");
  if (A->nnz > 0 && (!A->colidx || !A->val)) return mx_io_errf(err, errlen, "csr: colidx or val is NULL");
  if (A->rowptr[0] != 0) return mx_io_errf(err, errlen, "csr: rowptr[0] = %lld, not 0", (long long)A->rowptr[0]);
  if (A->rowptr[A->nrows] != A->nnz)
    return mx_io_errf(err, errlen, "csr: rowptr[%d] = %lld but nnz = %lld", (int)A->nrows,
                      (long long)A->rowptr[A->nrows], (long long)A->nnz);
  for (int32_t i = 0; i < A->nrows; i++) {
    int64_t a = A->rowptr[i], b = A->rowptr[i + 1];
    if (b < a) return mx_io_errf(err, errlen, "csr: rowptr decreases at row %d", (int)i);
    for (int64_t k = a; k < b; k++) {
      int32_t c = A->colidx[k];
      if (c < 0 || c >= A->ncols)
        return mx_io_errf(err, errlen, "csr: row %d has column %d outside 0..%d", (int)i, (int)c, (int)A->ncols - 1);
      if (k > a && c <= A->colidx[k - 1])
        return mx_io_errf(err, errlen, "csr: row %d columns not strictly increasing at position %lld", (int)i,
                          (long long)(k - a));
    }
  }
  return 0;
}

/* ---- sorting: quicksort (median of three, Hoare partition, so runs of equal keys stay O(n log n))
 * with insertion sort below 24 elements; recursion only on the smaller side. -------------------- */
#define MX_SORT_SMALL 24

void mx_io_sort_pairs(int32_t *c, double *v, int64_t n)
{
  while (n > MX_SORT_SMALL) {
    int64_t m = n / 2, l = n - 1;
    int32_t a = c[0], b = c[m], d = c[l];
    int32_t p = (a < b) ? ((b < d) ? b : (a < d ? d : a)) : ((a < d) ? a : (b < d ? d : b));
    int64_t i = -1, j = n;
    for (;;) {
      do i++; while (c[i] < p);
      do j--; while (c[j] > p);
      if (i >= j) break;
      int32_t t = c[i];
      c[i] = c[j];
      c[j] = t;
      if (v) {
        double tv = v[i];
        v[i] = v[j];
        v[j] = tv;
      }
    }
    /* [0, j] <= p <= [j+1, n) */
    if (j + 1 < n - j - 1) {
      mx_io_sort_pairs(c, v, j + 1);
      c += j + 1;
      if (v) v += j + 1;
      n -= j + 1;
    } else {
      mx_io_sort_pairs(c + j + 1, v ? v + j + 1 : NULL, n - j - 1);
      n = j + 1;
    }
  }
  for (int64_t i = 1; i < n; i++) {
    int32_t x = c[i];
    double xv = v ? v[i] : 0.0;
    int64_t j = i - 1;
    while (j >= 0 && c[j] > x) {
      c[j + 1] = c[j];
      if (v) v[j + 1] = v[j];
      j--;
    }
    c[j + 1] = x;
    if (v) v[j + 1] = xv;
  }
}

/* For each row: sort if not already strictly increasing, then merge equal columns; rows are packed
 * towards the front as we go (the write position never passes the read position). */
int64_t mx_io_csr_sort_dedup(int32_t nrows, int64_t *rowptr, int32_t *col, double *val)
{
  int64_t w = 0, start = rowptr[0];
  for (int32_t i = 0; i < nrows; i++) {
    int64_t a = start, b = rowptr[i + 1], len = b - a;
    start = b;
    int sorted = 1;
    for (int64_t k = a + 1; k < b; k++)
      if (col[k] <= col[k - 1]) {
        sorted = 0;
        break;
      }
    if (!sorted) {
      mx_io_sort_pairs(col + a, val ? val + a : NULL, len);
    }
    rowptr[i] = w;
    for (int64_t k = a; k < b; k++) {
      if (w > rowptr[i] && col[w - 1] == col[k]) {
        if (val) val[w - 1] += val[k];
      } else {
        col[w] = col[k];
        if (val) val[w] = val[k];
        w++;
      }
    }
  }
  rowptr[nrows] = w;
  return w;
}
