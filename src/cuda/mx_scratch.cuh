/* mx_scratch.cuh - temporary device arrays of one setup step (the GPU builder, the x-hot setup):
 * taken from the stream-ordered scratch pool on the step's stream (or by cudaMalloc while the
 * process has no pool and the step may not make it) and freed the same way when the step ends
 * (never handed to D: D's arrays are cudaMalloc'd), their bytes counted with D's own for the
 * peak that -mat_view reports; and CUB calls with their temporary storage taken from the same
 * scratch. */
#ifndef MX_SCRATCH_CUH
#define MX_SCRATCH_CUH

#include <vector>
#include "mx_device_impl.h"

struct mx_scratch_array {
  void *p;
  size_t bytes;
  bool from_pool; /* freed as it was taken: cudaFreeAsync, or cudaFree */
};

struct mx_scratch {
  cudaStream_t stream; /* the step's stream: every use of the scratch is ordered on it */
  /* whether this step may make the process's scratch pool: only steps of many arrays (a build with a
   * hot region, ~40) repay the pool's first allocation (mx_scratch_pool.cu); the others use the pool
   * once it exists, else cudaMalloc */
  bool make_pool = false;
  std::vector<mx_scratch_array> ptrs;
  size_t bytes = 0;
  void *cub = nullptr; /* CUB temporary storage, grown on demand */
  size_t cub_bytes = 0;
  explicit mx_scratch(cudaStream_t s = 0) : stream(s) {}
  mx_scratch(const mx_scratch &) = delete;
  mx_scratch &operator=(const mx_scratch &) = delete;
  ~mx_scratch() {
    for (auto &a : ptrs) mx_scratch_free(a.p, stream, a.from_pool);
  }
};

/* D->build_peak_bytes = max(itself, D's bytes + the scratch's) */
static inline void mx_note_peak(mx_device *D, const mx_scratch &W) {
  if (D->bytes + W.bytes > D->build_peak_bytes) D->build_peak_bytes = D->bytes + W.bytes;
}

/* *p = count T's of scratch (at least one, so that the pointer is never NULL). */
template <typename T>
static int mx_scratch_alloc(mx_device *D, mx_scratch &W, T **p, size_t count, const char *what) {
  *p = nullptr;
  const size_t bytes = (count ? count : 1) * sizeof(T);
  bool from_pool = false;
  if (mx_scratch_malloc((void **)p, bytes, W.stream, W.make_pool, &from_pool, what)) return 1;
  W.ptrs.push_back({(void *)*p, bytes, from_pool});
  W.bytes += bytes;
  mx_note_peak(D, W);
  return 0;
}

/* Run a CUB device algorithm: size query, storage from the scratch, run. call(tmp, bytes) must be
 * the same CUB call both times (a lambda capturing its arguments). */
template <typename Call>
static int mx_cub_run(mx_device *D, mx_scratch &W, const char *what, Call call) {
  size_t need = 0;
  if (mx_cuda_check(call(nullptr, need), what)) return 1;
  if (need > W.cub_bytes) {
    char *p;
    if (mx_scratch_alloc(D, W, &p, need, "alloc CUB temporary storage")) return 1;
    W.cub = p;
    W.cub_bytes = need;
  }
  size_t have = W.cub_bytes;
  return mx_cuda_check(call(W.cub, have), what);
}

#endif
