/* cuda_check.h - CK(call) for test and tool programs (not the library): on a CUDA error print the
 * file, line, call and CUDA's message, and exit with CK_EXIT_CODE (define it before including;
 * default 2). The library reports errors through mx_fail/mx_device_last_error instead. */
#ifndef MX_CUDA_CHECK_H
#define MX_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef CK_EXIT_CODE
#define CK_EXIT_CODE 2
#endif

#define CK(call)                                                                                   \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));        \
      exit(CK_EXIT_CODE);                                                                          \
    }                                                                                              \
  } while (0)

#endif
