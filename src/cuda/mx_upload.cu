/* mx_upload.cu - host-to-device copies of large pageable arrays through pinned staging buffers.
 *
 * A cudaMemcpy from pageable memory is staged by the driver on one CPU thread, at a few GB/s: most of
 * aijcusparse's setup and of ours (docs/performance.md, "Behind the source's constants").
 * Here the copy is split over T host threads; each owns two pinned slots and one stream and runs
 * the classic double buffer: memcpy a slot's worth of the host array into the free slot, queue its
 * DMA, go on with the other slot while it runs. The DMA engine and T memcpy streams overlap.
 *
 * Invariants: the staging pool (T x 2 pinned slots of kSlotBytes) is made on the first staged copy
 * and kept for the process (mx_h2d_release frees it); one staged copy runs at a time
 * (pool_lock); a worker reuses a slot only after the event recorded behind that slot's DMA. */
#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include "mx_device_impl.h"
#include "mx_upload.h"

namespace {

/* One staging slot: 1 MiB. Pinning is slow and is paid by the first upload of a process, which is
 * what a one-shot solve sees: larger slots upload faster after the first but make the first slower
 * (docs/performance.md, "Behind the source's constants"). */
constexpr size_t kSlotBytes = (size_t)1 << 20;
constexpr size_t kStagedMin = (size_t)16 << 20;  /* below this, one plain cudaMemcpyAsync per piece */
constexpr int kMaxThreads = 16;

struct worker_pool {
  int threads = 0; /* workers the pool holds (0: not made) */
  char *slot[kMaxThreads][2] = {};
  cudaStream_t stream[kMaxThreads] = {};
  cudaEvent_t done[kMaxThreads][2] = {};
};

std::mutex pool_lock;
worker_pool pool;
int upload_threads = 4; /* mx_device_set_upload_threads; 1 = the driver's own pageable copy */

void pool_free(worker_pool &P) {
  for (int t = 0; t < P.threads; ++t) {
    for (int s = 0; s < 2; ++s) {
      if (P.slot[t][s]) cudaFreeHost(P.slot[t][s]);
      if (P.done[t][s]) cudaEventDestroy(P.done[t][s]);
    }
    if (P.stream[t]) cudaStreamDestroy(P.stream[t]);
  }
  P = worker_pool{};
}

/* P.threads workers' slots, streams and events (P holds nothing yet). */
int pool_fill(worker_pool &P) {
  for (int t = 0; t < P.threads; ++t) {
    MX_CUDA_TRY(cudaStreamCreateWithFlags(&P.stream[t], cudaStreamNonBlocking));
    for (int s = 0; s < 2; ++s) {
      MX_CUDA_TRY(cudaHostAlloc((void **)&P.slot[t][s], kSlotBytes, cudaHostAllocDefault));
      MX_CUDA_TRY(cudaEventCreateWithFlags(&P.done[t][s], cudaEventDisableTiming));
    }
  }
  return 0;
}

/* Make (or keep) a pool of exactly `threads` workers; a failure leaves no pool (threads 0). */
int pool_make(worker_pool &P, int threads) {
  if (P.threads == threads) return 0;
  pool_free(P);
  P.threads = threads;
  if (!pool_fill(P)) return 0;
  pool_free(P);
  return 1;
}

/* One worker's share: bytes [lo, hi) of the pieces laid end to end. Returns "" or what failed. */
std::string copy_range(const mx_h2d_piece *pieces, int npieces, size_t lo, size_t hi, int device, int t) {
  if (cudaSetDevice(device) != cudaSuccess) return "cudaSetDevice in an upload thread";
  size_t base = 0;
  int chunk = 0;
  for (int p = 0; p < npieces && base < hi; base += pieces[p].bytes, ++p) {
    const size_t beg = std::max(lo, base), end = std::min(hi, base + pieces[p].bytes);
    for (size_t at = beg; at < end; at += kSlotBytes, ++chunk) {
      const size_t len = std::min(kSlotBytes, end - at);
      const int s = chunk & 1;
      if (chunk >= 2 && cudaEventSynchronize(pool.done[t][s]) != cudaSuccess) return "cudaEventSynchronize on a staging slot";
      memcpy(pool.slot[t][s], (const char *)pieces[p].src + (at - base), len);
      if (cudaMemcpyAsync((char *)pieces[p].dst + (at - base), pool.slot[t][s], len, cudaMemcpyHostToDevice, pool.stream[t]) != cudaSuccess)
        return "cudaMemcpyAsync from a staging slot";
      if (cudaEventRecord(pool.done[t][s], pool.stream[t]) != cudaSuccess) return "cudaEventRecord on a staging slot";
    }
  }
  return cudaStreamSynchronize(pool.stream[t]) == cudaSuccess ? "" : "cudaStreamSynchronize of an upload stream";
}

int copy_plain(const mx_h2d_piece *pieces, int npieces, cudaStream_t stream, const char *what) {
  for (int p = 0; p < npieces; ++p)
    if (pieces[p].bytes && mx_cuda_check(cudaMemcpyAsync(pieces[p].dst, pieces[p].src, pieces[p].bytes, cudaMemcpyHostToDevice, stream), what)) return 1;
  return mx_cuda_check(cudaStreamSynchronize(stream), what);
}

int copy_staged(const mx_h2d_piece *pieces, int npieces, size_t total, int threads, cudaStream_t stream, const char *what) {
  std::lock_guard<std::mutex> hold(pool_lock);
  int device;
  MX_CUDA_TRY(cudaGetDevice(&device));
  if (pool_make(pool, threads)) return mx_fail("%s: making the pinned staging pool: %s", what, mx_device_last_error());
  mx_trace_step("upload: pinned staging pool");
  /* what the caller queued on stream (a MatMult still reading the old values) goes first */
  MX_CUDA_TRY(cudaStreamSynchronize(stream));
  std::vector<std::string> err((size_t)threads);
  std::vector<std::thread> team;
  const size_t share = (total + (size_t)threads - 1) / (size_t)threads;
  for (int t = 1; t < threads; ++t)
    team.emplace_back([&, t] { err[(size_t)t] = copy_range(pieces, npieces, std::min(total, share * t), std::min(total, share * (t + 1)), device, t); });
  err[0] = copy_range(pieces, npieces, 0, std::min(total, share), device, 0);
  for (auto &w : team) w.join();
  for (const auto &e : err)
    if (!e.empty()) return mx_fail("%s: %s failed", what, e.c_str());
  return 0;
}

} // namespace

int mx_h2d_copy(const mx_h2d_piece *pieces, int npieces, cudaStream_t stream, const char *what) {
  size_t total = 0;
  for (int p = 0; p < npieces; ++p) total += pieces[p].bytes;
  const int threads = upload_threads;
  if (threads <= 1 || total < kStagedMin) return copy_plain(pieces, npieces, stream, what);
  return copy_staged(pieces, npieces, total, threads, stream, what);
}

extern "C" int mx_device_set_upload_threads(int threads) {
  if (threads < 1 || threads > kMaxThreads) return mx_fail("mx_device_set_upload_threads: %d threads, need 1..%d", threads, kMaxThreads);
  upload_threads = threads;
  return 0;
}

void mx_h2d_release(void) {
  std::lock_guard<std::mutex> hold(pool_lock);
  pool_free(pool);
}
