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
 * A process's first pool costs 8-11 ms on the H100 host (cudaMemPoolCreate and its first memory:
 * lap3d:100's first build, MX_TRACE_SETUP, tuning/results/h100/setup-trace-2026-11-23f), so the
 * build starts making it on a host thread (mx_scratch_pool_prepare_async) while it uploads the
 * matrix; every use of the pools first joins that thread. */
#include <mutex>
#include <thread>
#include "mx_device_impl.h"

namespace {

constexpr size_t kKeepBytes = (size_t)256 << 20;
/* what mx_scratch_pool_prepare_async has the pool map first (a small build's whole scratch) */
constexpr size_t kPrepareBytes = (size_t)32 << 20;
constexpr int kMaxDevices = 64;

std::mutex pools_lock;
cudaMemPool_t pools[kMaxDevices];
bool made[kMaxDevices]; /* pools[d] was tried (NULL: the device has no memory pools) */

/* The host thread of mx_scratch_pool_prepare_async while it may run: joined before any pool use,
 * and at exit (a build that failed in its upload leaves it unjoined). */
struct joined_at_exit {
  std::thread t;
  ~joined_at_exit() {
    if (t.joinable()) t.join();
  }
};
std::mutex preparing_lock;
joined_at_exit preparing;

void wait_prepared() {
  std::lock_guard<std::mutex> guard(preparing_lock);
  if (preparing.t.joinable()) preparing.t.join();
}

/* Make device dev's pool unless tried (pools_lock held): cudaSuccess, or the failing call's error
 * with *what naming it (nothing recorded: the caller reports or ignores it). */
cudaError_t make_pool(int dev, const char **what) {
  if (made[dev]) return cudaSuccess;
  int supported = 0;
  cudaError_t e = cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, dev);
  *what = "scratch pool: cudaDeviceGetAttribute";
  if (e == cudaSuccess && supported) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    e = cudaMemPoolCreate(&pools[dev], &props);
    *what = "scratch pool: cudaMemPoolCreate";
    if (e == cudaSuccess) {
      uint64_t keep = kKeepBytes;
      e = cudaMemPoolSetAttribute(pools[dev], cudaMemPoolAttrReleaseThreshold, &keep);
      *what = "scratch pool: release threshold";
      if (e != cudaSuccess) cudaMemPoolDestroy(pools[dev]);
    }
    if (e != cudaSuccess) pools[dev] = nullptr;
  }
  made[dev] = e == cudaSuccess;
  return e;
}

/* The pool of the current device (NULL: none, use cudaMalloc); 0 or 1 with the error recorded. */
int current_pool(cudaMemPool_t *pool) {
  int dev = 0;
  MX_CUDA_TRY(cudaGetDevice(&dev));
  if (dev < 0 || dev >= kMaxDevices) return mx_fail("scratch pool: device %d beyond the %d supported", dev, kMaxDevices);
  wait_prepared();
  std::lock_guard<std::mutex> guard(pools_lock);
  const char *what = "";
  if (mx_cuda_check(make_pool(dev, &what), what)) return 1;
  *pool = pools[dev];
  return 0;
}

/* On the preparing thread: make device dev's pool and have it map its first memory (an allocation
 * freed at once stays in the pool, under the release threshold). Errors are left to the build's
 * own first allocation to meet and report. */
void prepare(int dev) {
  if (cudaSetDevice(dev) != cudaSuccess) return;
  cudaMemPool_t pool;
  {
    std::lock_guard<std::mutex> guard(pools_lock);
    const char *what;
    if (make_pool(dev, &what) != cudaSuccess || !pools[dev]) return;
    pool = pools[dev];
  }
  void *p = nullptr;
  if (cudaMallocFromPoolAsync(&p, kPrepareBytes, pool, cudaStreamPerThread) != cudaSuccess) return;
  cudaFreeAsync(p, cudaStreamPerThread);
  cudaStreamSynchronize(cudaStreamPerThread);
}

} // namespace

int mx_scratch_malloc(void **p, size_t bytes, cudaStream_t stream, const char *what) {
  *p = nullptr;
  cudaMemPool_t pool;
  if (current_pool(&pool)) return 1;
  if (!pool) return mx_cuda_alloc(p, bytes, what);
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

void mx_scratch_free(void *p, cudaStream_t stream) {
  int dev = 0;
  cudaMemPool_t pool = nullptr;
  if (cudaGetDevice(&dev) == cudaSuccess && dev >= 0 && dev < kMaxDevices) {
    std::lock_guard<std::mutex> guard(pools_lock);
    pool = pools[dev];
  }
  if (pool) cudaFreeAsync(p, stream);
  else cudaFree(p);
}

void mx_scratch_pool_prepare_async(void) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return;
  {
    std::lock_guard<std::mutex> guard(pools_lock);
    if (made[dev]) return;
  }
  std::lock_guard<std::mutex> guard(preparing_lock);
  if (preparing.t.joinable()) return;
  try {
    preparing.t = std::thread(prepare, dev);
  } catch (...) { /* no thread: the first allocation makes the pool */
  }
}

void mx_scratch_pools_release(void) {
  wait_prepared();
  std::lock_guard<std::mutex> guard(pools_lock);
  for (int d = 0; d < kMaxDevices; ++d) {
    if (pools[d]) cudaMemPoolDestroy(pools[d]); /* frees still queued complete first (the driver waits) */
    pools[d] = nullptr;
    made[d] = false;
  }
}
