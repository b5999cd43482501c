/* mx_workspace.cu - one kept workspace per device for short device jobs that a MatMult starts and a
 * later one collects (the predictor's feature passes, mx_features_gpu.cu).
 *
 * Why: such a job needs a stream, an event, device scratch and a pinned host buffer for its result.
 * Making and destroying them per job (cudaStreamCreate + cudaEventCreate + cudaMalloc, then cudaFree
 * + the destroys) cost more than half of what a prediction costs the host (docs/performance.md,
 * "Prediction"); a kept one costs nothing after a process's first job.
 *
 * Invariants: slot[d] holds at most one idle workspace of device d; mx_workspace_take hands it out
 * (or makes a new one when it is out or absent) and grows its buffers to what is asked (the pinned
 * one to at least kMinHostBytes: pinning is slow, so it is done once per process); a
 * workspace given back returns to its slot when the slot is empty, its device buffer freed first if
 * larger than kKeepBytes, else it is destroyed. The caller gives back only after every use queued
 * on its stream finished. mx_workspaces_release destroys the idle ones (before the CUDA context
 * goes). */
#include <algorithm>
#include <mutex>
#include <new>
#include "mx_device_impl.h"

namespace {

/* the most device bytes an idle workspace keeps: the feature passes of a matrix of up to ~4M
 * nonzeros; larger matrices allocate theirs per job, whose cudaMalloc + cudaFree is a small part of
 * their setup (docs/performance.md, "Behind the source's constants"). Destroying the whole workspace
 * instead (its pinned buffer, stream and event too) cost such a prediction more (docs/performance.md,
 * "Prediction"). */
constexpr size_t kKeepBytes = (size_t)64 << 20;
/* the pinned buffer's least size: what the feature passes of ~250M nonzeros read back */
constexpr size_t kMinHostBytes = (size_t)1 << 20;
constexpr int kMaxDevices = 64;

std::mutex slots_lock;
mx_workspace *slot[kMaxDevices];

void destroy(mx_workspace *w) {
  if (!w) return;
  if (w->dev_buf) cudaFree(w->dev_buf);
  if (w->host_buf) cudaFreeHost(w->host_buf);
  if (w->done) cudaEventDestroy(w->done);
  if (w->stream) cudaStreamDestroy(w->stream);
  delete w;
}

/* a new workspace of the current device dev: its stream and event, no buffers yet */
int make(int dev, mx_workspace **out) {
  *out = nullptr;
  mx_workspace *w = new (std::nothrow) mx_workspace();
  if (!w) return mx_fail("mx_workspace: out of host memory");
  w->dev = dev;
  if (mx_cuda_check(cudaStreamCreateWithFlags(&w->stream, cudaStreamNonBlocking), "mx_workspace: cudaStreamCreate") ||
      mx_cuda_check(cudaEventCreateWithFlags(&w->done, cudaEventDisableTiming), "mx_workspace: cudaEventCreate")) {
    destroy(w);
    return 1;
  }
  *out = w;
  return 0;
}

/* w's buffers at least dev_bytes and host_bytes (replaced when smaller: their contents are scratch) */
int grow(mx_workspace *w, size_t dev_bytes, size_t host_bytes) {
  if (dev_bytes > w->dev_bytes) {
    if (w->dev_buf) cudaFree(w->dev_buf);
    w->dev_buf = nullptr;
    w->dev_bytes = 0;
    if (mx_cuda_alloc(&w->dev_buf, dev_bytes, "mx_workspace: device scratch")) return 1;
    w->dev_bytes = dev_bytes;
  }
  if (host_bytes > w->host_bytes) {
    host_bytes = std::max(host_bytes, std::max(kMinHostBytes, 2 * w->host_bytes));
    if (w->host_buf) cudaFreeHost(w->host_buf);
    w->host_buf = nullptr;
    w->host_bytes = 0;
    const cudaError_t e = cudaHostAlloc(&w->host_buf, host_bytes, cudaHostAllocDefault);
    if (e != cudaSuccess) {
      w->host_buf = nullptr;
      return mx_alloc_failed(e, host_bytes, "cudaHostAlloc", "mx_workspace: pinned host buffer");
    }
    w->host_bytes = host_bytes;
  }
  return 0;
}

} // namespace

int mx_workspace_take(size_t dev_bytes, size_t host_bytes, mx_workspace **out) {
  *out = nullptr;
  int dev = 0;
  MX_CUDA_TRY(cudaGetDevice(&dev));
  if (dev < 0 || dev >= kMaxDevices) return mx_fail("mx_workspace: device %d beyond the %d supported", dev, kMaxDevices);
  mx_workspace *w;
  {
    std::lock_guard<std::mutex> guard(slots_lock);
    w = slot[dev];
    slot[dev] = nullptr;
  }
  if (!w && make(dev, &w)) return 1;
  if (grow(w, dev_bytes, host_bytes)) {
    mx_workspace_give(w); /* what it holds stays usable */
    return 1;
  }
  *out = w;
  return 0;
}

void mx_workspace_give(mx_workspace *w) {
  if (!w) return;
  if (w->dev_bytes > kKeepBytes) { /* not kept idle: the next job of that size allocates again */
    cudaFree(w->dev_buf);
    w->dev_buf = nullptr;
    w->dev_bytes = 0;
  }
  {
    std::lock_guard<std::mutex> guard(slots_lock);
    if (!slot[w->dev]) {
      slot[w->dev] = w;
      return;
    }
  }
  destroy(w);
}

void mx_workspaces_release(void) {
  std::lock_guard<std::mutex> guard(slots_lock);
  for (int d = 0; d < kMaxDevices; ++d) {
    destroy(slot[d]);
    slot[d] = nullptr;
  }
}
