/* cusparse_check.h - SP(call): a cuSPARSE call whose failure prints where and why and exits 2 (the
 * benchmarks' CK for cuSPARSE). */
#ifndef MX_CUSPARSE_CHECK_H
#define MX_CUSPARSE_CHECK_H

#include <cusparse.h>
#include <stdio.h>
#include <stdlib.h>

#define SP(call)                                                                                             \
  do {                                                                                                       \
    cusparseStatus_t s_ = (call);                                                                            \
    if (s_ != CUSPARSE_STATUS_SUCCESS) {                                                                     \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cusparseGetErrorString(s_));              \
      exit(2);                                                                                               \
    }                                                                                                        \
  } while (0)

#endif
