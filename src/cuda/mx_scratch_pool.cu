/* mx_scratch_pool.cu - the stream-ordered memory pool that the setup steps' scratch comes from.
 *
 * A GPU build of a few million nonzeros makes ~40 scratch arrays; with cudaMalloc/cudaFree each
 * costs tens of microseconds and every cudaFree synchronises the device: on the H100, rgg:18 at crux
 * (1,1) spent 1.0-1.2 ms freeing its scratch alone (MX_TRACE_SETUP, tuning/results/h100/
 * setup-trace-2026-11-23e). CUDA's stream-ordered allocator (cudaMallocFromPoolAsync) hands out
 * reserved memory without a system call and frees without synchronising.
 *
 * Invariants: one pool per device, made on first use with release threshold kKeepBytes: after a
 * synchronisation the pool holds at most that much memory it does not hand out (a small build's
 * scratch is reused by the next setup step; a large build's is given back to the driver). Scratch
 * never leaves its step, so only mx_scratch_free (on the step's stream) frees pool memory. Devices
 * without memory pools get plain cudaMalloc/cudaFree. mx_scratch_pools_release destroys the pools.
 * The first allocation from a pool costs a process 10-14 ms on the H100 host, whatever the pool
 * (created, capped at 1 GiB, or the device's default; cudaMalloc: 0.1 ms; tuning/bench/
 * pool_first_use.cu), more than a default build's few scratch arrays cost with cudaMalloc: only a
 * step that allows it (mx_scratch.make_pool: a build with a hot region) makes the pool; the others
 * use it once it exists, else the device's current pool once something in the process has taken
 * memory from it (warm_current_pool: in a PETSc run, its CUDA vectors), else cudaMalloc. Memory freed
 * into the current pool stays there as its owner's release threshold says. */
#include <mutex>
#include "mx_device_impl.h"

namespace {

constexpr size_t kKeepBytes = (size_t)256 << 20;
constexpr int kMaxDevices = 64;

std::mutex pools_lock;
cudaMemPool_t pools[kMaxDevices];
bool made[kMaxDevices]; /* pools[d] was tried (NULL: the device has no memory pools) */

/* The device's current pool (cudaMallocAsync's) if something in the process has already taken memory
 * from it, so that its first use is paid (PETSc's CUDA vectors come from it), else NULL. A step that may
 * not make our pool takes its scratch there rather than by cudaMalloc + cudaFree (0.2-0.4 ms, and the
 * free synchronises the device). Never ours to destroy: mx_scratch_pools_release leaves it alone. */
int warm_current_pool(int dev, cudaMemPool_t *pool) {
  cudaMemPool_t cur = nullptr;
  uint64_t high = 0;
  *pool = nullptr;
  int supported = 0;
  MX_CUDA_TRY(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, dev));
  if (!supported) return 0;
  MX_CUDA_TRY(cudaDeviceGetMemPool(&cur, dev));
  MX_CUDA_TRY(cudaMemPoolGetAttribute(cur, cudaMemPoolAttrReservedMemHigh, &high));
  if (high > 0) *pool = cur;
  return 0;
}

/* The pool of the current device (NULL: none yet and not to be made, or the device has none: use
 * cudaMalloc); 0 or 1 with the error recorded. */
int current_pool(bool make, cudaMemPool_t *pool) {
  int dev = 0;
  MX_CUDA_TRY(cudaGetDevice(&dev));
  if (dev < 0 || dev >= kMaxDevices) return mx_fail("scratch pool: device %d beyond the %d supported", dev, kMaxDevices);
  std::lock_guard<std::mutex> guard(pools_lock);
  if (!made[dev] && !make) return warm_current_pool(dev, pool);
  if (!made[dev]) {
    int supported = 0;
    MX_CUDA_TRY(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, dev));
    if (supported) {
      cudaMemPoolProps props = {};
      props.allocType = cudaMemAllocationTypePinned;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = dev;
      MX_CUDA_TRY(cudaMemPoolCreate(&pools[dev], &props));
      uint64_t keep = kKeepBytes;
      if (mx_cuda_check(cudaMemPoolSetAttribute(pools[dev], cudaMemPoolAttrReleaseThreshold, &keep), "scratch pool: release threshold")) {
        cudaMemPoolDestroy(pools[dev]);
        pools[dev] = nullptr;
        return 1;
      }
    }
    made[dev] = true;
  }
  *pool = pools[dev];
  return 0;
}

} // namespace

int mx_scratch_malloc(void **p, size_t bytes, cudaStream_t stream, bool make_pool, bool *from_pool, const char *what) {
  *p = nullptr;
  *from_pool = false;
  cudaMemPool_t pool;
  if (current_pool(make_pool, &pool)) return 1;
  if (!pool) return mx_cuda_alloc(p, bytes, what);
  *from_pool = true;
  const cudaError_t e = cudaMallocFromPoolAsync(p, bytes, pool, stream);
  if (e == cudaSuccess && mx_fault_injected()) {
    cudaFreeAsync(*p, stream);
    *p = nullptr;
    return mx_fail("%s: cudaMallocFromPoolAsync of %zu bytes: injected fault (MX_FAULT_INJECT)", what, bytes);
  }
  if (e == cudaSuccess) return 0;
  *p = nullptr;
  return mx_alloc_failed(e, bytes, "cudaMallocFromPoolAsync", what);
}

void mx_scratch_free(void *p, cudaStream_t stream, bool from_pool) {
  if (from_pool) cudaFreeAsync(p, stream);
  else cudaFree(p);
}

void mx_scratch_pools_release(void) {
  std::lock_guard<std::mutex> guard(pools_lock);
  for (int d = 0; d < kMaxDevices; ++d) {
    if (pools[d]) cudaMemPoolDestroy(pools[d]); /* frees still queued complete first (the driver waits) */
    pools[d] = nullptr;
    made[d] = false;
  }
}
