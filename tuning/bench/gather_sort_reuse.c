/* gather_sort_reuse - issue 42 probe (host only): the share of nonzeros whose x sector (4 columns)
 * another nonzero of the same tile of T consecutive nonzeros already gathered, for the whole matrix
 * or, with K > 0, for the hub split's rest (the columns outside the K most used).
 * Usage: gather-sort-reuse SPEC K T... */
#include <stdio.h>
#include <stdlib.h>
#include "io/mx_io.h"

static int by_count_desc(const void *a, const void *b) {
  const long long *x = a, *y = b;
  return (x[0] < y[0]) - (x[0] > y[0]);
}

int main(int argc, char **argv) {
  mx_io_csr A;
  char err[256];
  if (argc < 4 || mx_gen(argv[1], 0, &A, err, sizeof err)) return fprintf(stderr, "usage: SPEC K T...\n"), 1;
  const int K = atoi(argv[2]);
  long long *cc = malloc(16 * (size_t)A.ncols);
  char *hub = calloc((size_t)A.ncols, 1);
  int *c = malloc(sizeof(int) * (size_t)A.nnz), *stamp = malloc(sizeof(int) * ((size_t)A.ncols / 4 + 1));
  for (int j = 0; j < A.ncols; j++) cc[2 * j] = 0, cc[2 * j + 1] = j;
  for (long long p = 0; p < A.nnz; p++) cc[2 * A.colidx[p]]++;
  qsort(cc, (size_t)A.ncols, 16, by_count_desc);
  for (int r = 0; r < K && r < A.ncols; r++) hub[cc[2 * r + 1]] = 1;
  long long m = 0;
  for (long long p = 0; p < A.nnz; p++)
    if (!hub[A.colidx[p]]) c[m++] = A.colidx[p];
  for (int a = 3; a < argc; a++) {
    const long long T = atoll(argv[a]);
    long long dup = 0;
    int t = 0;
    for (int i = 0; i <= A.ncols / 4; i++) stamp[i] = -1;
    for (long long p = 0; p < m; p++) {
      if (p % T == 0) t++;
      if (stamp[c[p] >> 2] == t) dup++;
      else stamp[c[p] >> 2] = t;
    }
    printf("%s K=%d nnz %lld tile %lld: sector already gathered in the tile %.1f%%\n", argv[1], K, m, T, 100.0 * dup / m);
  }
  return 0;
}
