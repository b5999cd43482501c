/* test_core_real.c - the battery of test_util.h on one real Matrix Market file (argv[1]). */
#include "test_util.h"

int main(int argc, char **argv) {
  t_csr A;
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE.mtx\n", argv[0]);
    return 2;
  }
  if (t_read_mtx(argv[1], &A) != 0) {
    fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[1]);
    return 1;
  }
  CHECK(A.nnz > 0, "%s has no entries", argv[1]);
  t_battery(&A, argv[1]);
  printf("%s: %dx%d, %d entries\n", argv[1], A.nrows, A.ncols, A.nnz);
  t_csr_free(&A);
  return t_report("test_core_real");
}
