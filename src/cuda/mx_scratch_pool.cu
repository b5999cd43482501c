/* mx_scratch_pool.cu - the stream-ordered memory pool that the setup steps' scratch comes from.
 *
 * A GPU build of a few million nonzeros makes ~40 scratch arrays; with cudaMalloc/cudaFree each
 * costs tens of microseconds and every cudaFree synchronises the device (docs/performance.md,
 * "Setup"). CUDA's stream-ordered allocator (cudaMallocFromPoolAsync) hands out reserved memory
 * without a system call and frees without synchronising.
 *
 * Invariants: one pool per device, made on first use with release threshold kKeepBytes: after a
 * synchronisation the pool holds at most that much memory it does not hand out (a small build's
 * scratch is reused by the next setup step; a large build's is given back to the driver). Scratch
 * never leaves its step, so only mx_scratch_free (on the step's stream) frees pool memory. Devices
 * without memory pools get plain cudaMalloc/cudaFree. mx_scratch_pools_release destroys the pools.
 * The first allocation from a pool costs a process milliseconds, whatever the pool (created, capped,
 * or the device's default; once per process; PETSc's CUDA vectors do not pay it for us: they take no
 * memory from the device's pool), more than a default build's few scratch arrays cost with
 * cudaMalloc (docs/performance.md, "Behind the source's constants"): only a step that allows it
 * (mx_scratch.make_pool: a build with a hot region) makes the pool; the others use it once it
 * exists, else cudaMalloc. */
#include <mutex>
#include "mx_device_impl.h"

namespace {

constexpr size_t kKeepBytes = (size_t)256 << 20;
constexpr int kMaxDevices = 64;

std::mutex pools_lock;
cudaMemPool_t pools[kMaxDevices];
bool made[kMaxDevices]; /* pools[d] was tried (NULL: the device has no memory pools) */

/* The pool of the current device (NULL: none yet and not to be made, or the device has none: use
 * cudaMalloc); 0 or 1 with the error recorded. */
int current_pool(bool make, cudaMemPool_t *pool) {
  int dev = 0;
  MX_CUDA_TRY(cudaGetDevice(&dev));
  if (dev < 0 || dev >= kMaxDevices) return mx_fail("scratch pool: device %d beyond the %d supported", dev, kMaxDevices);
  std::lock_guard<std::mutex> guard(pools_lock);
  if (!made[dev] && !make) {
    *pool = nullptr;
    return 0;
  }
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
