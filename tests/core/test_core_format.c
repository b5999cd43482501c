/* test_core_format.c - the battery of test_util.h (selection vs reference, check, round trip, the
 * four products, determinism, value refresh, costs) on random matrices of many shapes. */
#include "test_util.h"

int main(void) {
  /* m, n, nz, row_pw, col_pw, skip_row, skip_col, dense_rows, dense_cols, dup, seed */
  static const struct {
    const char *name;
    t_spec s;
  } cases[] = {
      {"0x0", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
      {"0x5", {0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 2}},
      {"5x0", {5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3}},
      {"1x1", {1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 4}},
      {"1x1 empty", {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 5}},
      {"1x1 dup", {1, 1, 1, 0, 0, 0, 0, 0, 0, 2.0, 6}},
      {"no nnz", {40, 30, 0, 0, 0, 0, 0, 0, 0, 0, 7}},
      {"uniform", {100, 100, 500, 0, 0, 0, 0, 0, 0, 0, 8}},
      {"7 rows", {7, 30, 60, 0, 0, 0, 0, 0, 0, 0, 9}},
      {"9 rows", {9, 30, 60, 0, 0, 0, 0, 0, 0, 0, 10}},
      {"15 rows", {15, 40, 90, 0, 0, 0, 0, 0, 0, 0, 11}},
      {"16 rows", {16, 40, 90, 0, 0, 0, 0, 0, 0, 0, 12}},
      {"17 rows", {17, 40, 90, 0, 0, 0, 0, 0, 0, 0, 13}},
      {"63 rows", {63, 64, 400, 2, 2, 0, 0, 0, 0, 0, 14}},
      {"65 rows", {65, 64, 400, 2, 2, 0, 0, 0, 0, 0, 15}},
      {"wide", {50, 300, 900, 0, 0, 0, 0, 0, 0, 0, 16}},
      {"tall", {300, 50, 900, 0, 0, 0, 0, 0, 0, 0, 17}},
      {"one row", {1, 100, 60, 0, 0, 0, 0, 0, 0, 0.2, 18}},
      {"one col", {100, 1, 60, 0, 0, 0, 0, 0, 0, 0.2, 19}},
      {"empty rows+cols", {200, 150, 1200, 0, 0, 3, 4, 0, 0, 0, 20}},
      {"dense rows", {120, 80, 300, 0, 0, 0, 0, 2, 0, 0, 21}},
      {"dense cols", {120, 80, 300, 0, 0, 0, 0, 0, 2, 0, 22}},
      {"dense both", {64, 64, 100, 0, 0, 5, 0, 1, 1, 0, 23}},
      {"full 8x4", {8, 4, 0, 0, 0, 0, 0, 8, 0, 0, 24}},
      {"power law", {2000, 2000, 20000, 3, 3, 0, 0, 0, 0, 0, 25}},
      {"power law rows", {1500, 700, 9000, 4, 0, 0, 0, 0, 0, 0, 26}},
      {"power law cols", {700, 1500, 9000, 0, 4, 0, 0, 0, 0, 0, 27}},
      {"duplicates", {100, 60, 800, 2, 2, 0, 0, 0, 0, 0.3, 28}},
      {"many duplicates", {20, 10, 100, 0, 0, 0, 0, 1, 1, 1.5, 29}},
      {"dense 33x17", {33, 17, 0, 0, 0, 0, 0, 33, 0, 0, 30}},
      {"power law big", {8191, 8193, 60000, 2.5, 2.5, 7, 0, 1, 1, 0.01, 31}},
  };
  int n = 0;
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
    t_csr A = t_random(&cases[t].s);
    t_battery(&A, cases[t].name);
    t_csr_free(&A);
    n++;
  }
  printf("%d matrices x %d cruxes x 3 modes\n", n, T_NGRID);
  return t_report("test_core_format");
}
