/* mx_warm.cu - a process's first-use costs of the default plan's GPU code, paid off the critical
 * path (mx_device.h: mx_device_warm_start / mx_device_warm_wait).
 *
 * CUDA loads a kernel's code at its first launch (lazy module loading, the runtime's default): a
 * process's first default build and its first products pay that for every kernel they launch, several
 * times the work of a build of a 1M-nonzero matrix (docs/performance.md, "Setup"). The warm-up is a
 * host thread that builds a tiny matrix on the caller's device with the default plan's request (crux
 * (0,0), automatic mode, cold kernel and x-hot cache), runs its products (y = A x, y = A x + z) and
 * frees it: the kernels and library calls of a default matrix's setup (MatConvert + the first
 * MatMult), on a matrix too small to cost anything but their loading. It runs while the caller does
 * host work (MatConvert's copy of the matrix, or the user's assembly). It does no more than the setup
 * needs, because the build waits for all of it (loading the later steps' code here too, features and
 * compression, made small matrices' setups slower: docs/performance.md, "Setup").
 *
 * Rules: one warm-up per process (a second start does nothing); mx_device_build and
 * mx_device_upload wait for it, so no two threads ever run the device layer at once; its errors are
 * its own (thread-local last error), never the caller's: a failed warm-up only leaves the loading to
 * the first build. The process waits for it at exit (atexit, registered after the CUDA runtime's own
 * teardown, so it runs first). mx_device_set_warmup(0) turns it off (-mat_matxtract_warmup 0). */
#include <stdlib.h>
#include <mutex>
#include <thread>
#include <vector>
#include "mx_device_impl.h"

namespace {

std::mutex warm_lock;
std::thread warm_thread;
bool warm_started = false;
bool warm_enabled = true;

/* a 300 x 300 matrix of 1-20 nonzeros per row (two segments of the segment kernel) */
struct warm_matrix {
  std::vector<int32_t> rowptr, col;
  std::vector<double> val;
  warm_matrix() {
    const int n = 300;
    rowptr.push_back(0);
    for (int r = 0; r < n; ++r) {
      const int len = 1 + (r * 7) % 20;
      for (int k = 0; k < len; ++k) {
        col.push_back((r + 13 * k) % n);
        val.push_back(1.0 + 0.25 * k);
      }
      rowptr.push_back((int32_t)col.size());
    }
  }
};

void warm_products(mx_device *D, int n) {
  double *x = nullptr, *y = nullptr;
  if (cudaMalloc((void **)&x, n * sizeof(double)) != cudaSuccess) return;
  if (cudaMalloc((void **)&y, n * sizeof(double)) == cudaSuccess && cudaMemset(x, 0, n * sizeof(double)) == cudaSuccess) {
    (void)mx_device_spmv(D, x, nullptr, y, nullptr);
    (void)mx_device_spmv(D, x, y, y, nullptr);
  }
  cudaFree(y);
  cudaFree(x);
}

void warm_body(int device) {
  if (cudaSetDevice(device) != cudaSuccess) return;
  const warm_matrix M;
  const mx_csr A = {(int32_t)M.rowptr.size() - 1, (int32_t)M.rowptr.size() - 1, M.rowptr.data(), M.col.data(), M.val.data()};
  mx_format shell;
  mx_device *D = nullptr;
  const mx_crux c = {0.0, 0.0};
  if (mx_device_build_unwarmed(&A, c, MX_MODE_AUTO, MX_COLD_AUTO, MX_XHOT_AUTO, &shell, &D) == 0) {
    warm_products(D, A.nrows);
    mx_device_free(D);
  }
  (void)cudaDeviceSynchronize();
  (void)cudaGetLastError(); /* this thread's error state only */
}

void warm_join_at_exit() { mx_device_warm_wait(); }

} // namespace

extern "C" void mx_device_warm_start(void) {
  std::lock_guard<std::mutex> guard(warm_lock);
  if (warm_started) return;
  if (!warm_enabled) return;
  warm_started = true;
  int device = 0;
  if (mx_device_count() == 0 || cudaGetDevice(&device) != cudaSuccess) return;
  try {
    warm_thread = std::thread(warm_body, device);
  } catch (...) { /* no thread: the first build pays the loading */
    return;
  }
  atexit(warm_join_at_exit);
}

extern "C" void mx_device_set_warmup(int on) {
  std::lock_guard<std::mutex> guard(warm_lock);
  warm_enabled = on != 0;
}

extern "C" void mx_device_warm_wait(void) {
  std::lock_guard<std::mutex> guard(warm_lock);
  if (warm_thread.joinable()) warm_thread.join();
}
