/* event_timing.cuh - how the benchmarks time GPU work (../shared/docs/BENCHMARKING.md): the
 * median/min/max of calls each bracketed by two CUDA events on one stream, after warm-up calls, and
 * the device-to-device copy bandwidth every bandwidth fraction is relative to. Header-only; the
 * includer provides CK (tests/common/cuda_check.h). */
#ifndef MX_EVENT_TIMING_CUH
#define MX_EVENT_TIMING_CUH

#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

struct Timing {
  double med = 0, mn = 0, mx = 0; /* microseconds */
  double host = 0;                /* host wall time per call of the timed calls, us: near med, the GPU waited for the host */
};

/* median/min/max of reps calls of f(i), each between two events on stream s, after warmup calls and,
 * with warm_ms > 0, more rounds of them until warm_ms of wall time have passed since the first: a
 * GPU left idle by host work (a reference check, a matrix read) lowers its clocks, and a count of
 * short calls alone can end before they are back up. */
static Timing mx_time_calls(cudaStream_t s, const std::function<void(int)> &f, int warmup, int reps, double warm_ms = 0.0) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto since_ms = [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); };
  for (int i = 0; i < warmup; ++i) f(i);
  CK(cudaStreamSynchronize(s));
  while (since_ms() < warm_ms) {
    for (int i = 0; i < std::max(warmup, 1); ++i) f(i);
    CK(cudaStreamSynchronize(s));
  }
  std::vector<cudaEvent_t> ev(2 * (size_t)reps);
  for (auto &e : ev) CK(cudaEventCreate(&e));
  const double h0 = since_ms();
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(ev[2 * i], s));
    f(i);
    CK(cudaEventRecord(ev[2 * i + 1], s));
  }
  const double host_ms = since_ms() - h0;
  CK(cudaStreamSynchronize(s));
  std::vector<float> t((size_t)reps);
  for (int i = 0; i < reps; ++i) CK(cudaEventElapsedTime(&t[i], ev[2 * i], ev[2 * i + 1]));
  for (auto &e : ev) CK(cudaEventDestroy(e));
  std::sort(t.begin(), t.end());
  Timing r;
  r.med = 1e3 * (reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]));
  r.mn = 1e3 * t.front();
  r.mx = 1e3 * t.back();
  r.host = 1e3 * host_ms / std::max(reps, 1);
  return r;
}

/* bytes read + written per second by a 1 GiB device-to-device copy on stream s (median of 20) */
static double mx_copy_bandwidth(cudaStream_t s) {
  const size_t n = (size_t)1 << 30;
  void *a, *b;
  CK(cudaMalloc(&a, n));
  CK(cudaMalloc(&b, n));
  CK(cudaMemset(a, 1, n));
  const Timing t = mx_time_calls(s, [&](int) { CK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, s)); }, 3, 20);
  CK(cudaFree(a));
  CK(cudaFree(b));
  return 2.0 * n / (t.med * 1e-6);
}

#endif
