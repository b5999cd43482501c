/* mx_cold_hub.cu - the hub split on the GPU (mx_cold_hub_dev.h): upload, staging, the sliced hub
 * kernel, the split-row fixup. The summation order is the one src/core/mx_cold_hub.h states. */
#include <limits.h>
#include <stdlib.h>
#include "mx_cold_hub_dev.h"
#include "mx_device_impl.h"

#define HUB_THREADS 1024 /* one block per SM: the hub x values fill its shared memory */
#define FULL_MASK 0xffffffffu

struct mx_hub_dev {
  int K, nslices, nsplit, grid;
  size_t smem; /* (K + 1) doubles: the hub x values, then the padding's 0 */
  int *hubcol, *slice_off, *slice_len, *slice_row, *split_row, *split_first;
  unsigned short *rank;
  double *hubscale, *val, *xhub, *part;
};

/* xhub[k] = x[hubcol[k]] (times hubscale[k]: the CPU kernel's xv * hubscale[r]) */
__global__ void mx_hub_stage_kernel(int K, const int *__restrict__ hubcol, const double *__restrict__ hubscale,
                                    const double *__restrict__ x, double *__restrict__ xhub) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < K) xhub[k] = hubscale ? __dmul_rn(x[hubcol[k]], hubscale[k]) : x[hubcol[k]];
}

/* A warp per slice (sl = global warp, + all warps, ...): lane l sums pseudo-row l of the slice in
 * order from 0 (padding: rank K, x value 0, value 0: the sum does not change) and adds it to y[row]
 * (a whole row: no other lane writes it) or writes it to part slot ~row (a piece). Products are
 * rounded before the sum (__dmul_rn: no fused multiply-add), as the CPU kernel's. */
template <bool HAS_VAL>
__global__ void __launch_bounds__(HUB_THREADS)
mx_hub_kernel(int nslices, const int *__restrict__ slice_off, const int *__restrict__ slice_len, const int *__restrict__ slice_row,
              const unsigned short *__restrict__ rank, const double *__restrict__ val, const double *__restrict__ xhub, int K,
              double *y, double *__restrict__ part) {
  extern __shared__ double s_x[];
  for (int i = threadIdx.x; i < K; i += HUB_THREADS) s_x[i] = xhub[i];
  if (threadIdx.x == 0) s_x[K] = 0.0;
  __syncthreads();
  const int lane = threadIdx.x & 31, nw = gridDim.x * (HUB_THREADS / 32);
  for (int sl = blockIdx.x * (HUB_THREADS / 32) + (int)(threadIdx.x >> 5); sl < nslices; sl += nw) {
    const int off = slice_off[sl] + lane, len = slice_len[sl];
    double s = 0.0;
    int j = 0;
    for (; j + 4 <= len; j += 4) { /* four rank loads in flight, then the sums in order */
      int rk[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) rk[u] = rank[off + 32 * (j + u)];
#pragma unroll
      for (int u = 0; u < 4; ++u) s += HAS_VAL ? __dmul_rn(val[off + 32 * (j + u)], s_x[rk[u]]) : s_x[rk[u]];
    }
    for (; j < len; ++j) s += HAS_VAL ? __dmul_rn(val[off + 32 * j], s_x[rank[off + 32 * j]]) : s_x[rank[off + 32 * j]];
    const int row = slice_row[sl * 32 + lane];
    if (row >= 0) y[row] += s;
    else if (row != INT_MIN) part[~row] = s;
  }
}

/* A warp per split row: lane l sums parts l, l + 32, ... in order, the xor butterfly adds the lane
 * sums (s_l + s_(l^d), d = 16 .. 1), lane 0 adds the total to y. */
__global__ void mx_hub_fixup_kernel(int nsplit, const int *__restrict__ split_row, const int *__restrict__ split_first,
                                    const double *__restrict__ part, double *y) {
  const int i = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (i >= nsplit) return; /* whole warps leave together: blockDim is a multiple of 32 */
  double s = 0.0;
  for (int q = split_first[i] + lane; q < split_first[i + 1]; q += 32) s += part[q];
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) s += __shfl_xor_sync(FULL_MASK, s, d);
  if (lane == 0) y[split_row[i]] += s;
}

template <class T>
static int upload_array(T **d, const T *h, size_t n, const char *what) {
  *d = nullptr;
  if (n == 0 || !h) return 0;
  if (mx_cuda_check(cudaMalloc(d, n * sizeof(T)), what)) return 1;
  return mx_cuda_check(cudaMemcpy(*d, h, n * sizeof(T), cudaMemcpyHostToDevice), what);
}

/* The grid: blocks per SM (shared memory permitting) times the SMs. The kernels' dynamic shared-memory
 * limit is a property of the function, shared by every split alive: it only ever grows (a split of
 * fewer hub columns uploaded later must not shrink it under a larger one's launches). */
static int hub_grid(const mx_hub_dev *d, int *grid) {
  static size_t smem_allowed = 0;
  int per_sm = 0, dev = 0, nsm = 0;
  if (d->smem > smem_allowed) {
    for (const void *f : {(const void *)mx_hub_kernel<true>, (const void *)mx_hub_kernel<false>})
      MX_CUDA_TRY(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)d->smem));
    smem_allowed = d->smem;
  }
  MX_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, mx_hub_kernel<false>, HUB_THREADS, d->smem));
  MX_CUDA_TRY(cudaGetDevice(&dev));
  MX_CUDA_TRY(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev));
  if (per_sm < 1) return mx_fail("hub kernel: %zu bytes of shared memory do not fit a block", d->smem);
  *grid = per_sm * nsm;
  return 0;
}

extern "C" int mx_hub_dev_upload(const mx_cold_hub *H, mx_hub_dev **out) {
  *out = nullptr;
  mx_hub_dev *d = (mx_hub_dev *)calloc(1, sizeof *d);
  if (!d) return mx_fail("hub upload: out of host memory");
  d->K = H->K, d->nslices = H->nslices, d->nsplit = H->nsplit;
  d->smem = sizeof(double) * ((size_t)H->K + 1);
  const size_t slots = H->nslices ? (size_t)H->slice_off[H->nslices] : 0;
  const int failed =
      upload_array(&d->hubcol, H->hubcol, (size_t)H->K, "hub columns") ||
      upload_array(&d->hubscale, H->hubscale, H->hubscale ? (size_t)H->K : 0, "hub scales") ||
      upload_array(&d->slice_off, H->slice_off, H->nslices ? (size_t)H->nslices + 1 : 0, "hub slice offsets") ||
      upload_array(&d->slice_len, H->slice_len, (size_t)H->nslices, "hub slice lengths") ||
      upload_array(&d->slice_row, H->slice_row, (size_t)H->nslices * 32, "hub slice rows") ||
      upload_array(&d->rank, (const unsigned short *)H->slice_rank, slots, "hub ranks") ||
      upload_array(&d->val, H->slice_val, H->slice_val ? slots : 0, "hub values") ||
      upload_array(&d->split_row, H->split_row, (size_t)H->nsplit, "hub split rows") ||
      upload_array(&d->split_first, H->split_first, H->nsplit ? (size_t)H->nsplit + 1 : 0, "hub split parts") ||
      (H->K > 0 && mx_cuda_check(cudaMalloc(&d->xhub, sizeof(double) * (size_t)H->K), "hub x buffer")) ||
      (H->nparts > 0 && mx_cuda_check(cudaMalloc(&d->part, sizeof(double) * (size_t)H->nparts), "hub part slots")) ||
      (H->nslices > 0 && hub_grid(d, &d->grid));
  if (failed) {
    mx_hub_dev_free(d);
    return 1;
  }
  *out = d;
  return 0;
}

extern "C" int mx_hub_dev_spmv_add(const mx_hub_dev *d, const double *x, double *y, void *stream) {
  if (d->nslices == 0) return 0;
  cudaStream_t s = (cudaStream_t)stream;
  mx_hub_stage_kernel<<<(d->K + 255) / 256, 256, 0, s>>>(d->K, d->hubcol, d->hubscale, x, d->xhub);
  MX_LAUNCH_CHECK("hub staging kernel");
  if (d->val)
    mx_hub_kernel<true><<<d->grid, HUB_THREADS, d->smem, s>>>(d->nslices, d->slice_off, d->slice_len, d->slice_row, d->rank, d->val,
                                                              d->xhub, d->K, y, d->part);
  else
    mx_hub_kernel<false><<<d->grid, HUB_THREADS, d->smem, s>>>(d->nslices, d->slice_off, d->slice_len, d->slice_row, d->rank,
                                                               nullptr, d->xhub, d->K, y, d->part);
  MX_LAUNCH_CHECK("hub kernel");
  if (d->nsplit) {
    mx_hub_fixup_kernel<<<(d->nsplit + 7) / 8, 256, 0, s>>>(d->nsplit, d->split_row, d->split_first, d->part, y);
    MX_LAUNCH_CHECK("hub fixup kernel");
  }
  return 0;
}

extern "C" void mx_hub_dev_free(mx_hub_dev *d) {
  if (!d) return;
  for (void *p : {(void *)d->hubcol, (void *)d->hubscale, (void *)d->slice_off, (void *)d->slice_len, (void *)d->slice_row,
                  (void *)d->rank, (void *)d->val, (void *)d->split_row, (void *)d->split_first, (void *)d->xhub, (void *)d->part})
    if (p) cudaFree(p);
  free(d);
}
