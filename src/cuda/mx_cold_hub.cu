/* mx_cold_hub.cu - the hub split on the GPU (mx_cold_hub_dev.h): upload, staging, the sliced hub
 * kernel, the split-row fixup. The summation order is the one src/core/mx_cold_hub.h states. */
#include <limits.h>
#include <stdlib.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/block/block_reduce.cuh>
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <vector>
#include "mx_cold_hub_dev.h"
#include "mx_device_impl.h"
#include "mx_kernel_common.cuh"

#define HUB_THREADS 1024 /* one block per SM: the hub x values fill its shared memory */
#define FULL_MASK 0xffffffffu

namespace cg = cooperative_groups;

struct mx_hub_dev {
  int K, nslices, nsplit, nparts, grid;
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
 * (a whole row: no other lane writes it, so its y value may be read before the sum) or writes it to
 * part slot ~row (a piece). Products are rounded before the sum (__dmul_rn: no fused multiply-add),
 * as the CPU kernel's. The hub x values come in by one asynchronous block copy; a slice's row and y
 * value are loaded before its sum, the next slice's offset and length during it (faster than loading
 * each when needed: docs/performance.md, "Hub split"). Launched early (mx_hub_dev_add_staged), the
 * block copies the staged values while the kernel before it runs, and waits for that kernel's end
 * before its first y or part access. */
template <bool HAS_VAL>
__global__ void __launch_bounds__(HUB_THREADS)
mx_hub_kernel(int nslices, const int *__restrict__ slice_off, const int *__restrict__ slice_len, const int *__restrict__ slice_row,
              const unsigned short *__restrict__ rank, const double *__restrict__ val, const double *__restrict__ xhub, int K,
              double *y, double *__restrict__ part) {
  extern __shared__ double s_x[];
  mx_pdl_trigger();
  cg::thread_block block = cg::this_thread_block();
  cg::memcpy_async(block, s_x, xhub, sizeof(double) * (size_t)K);
  if (threadIdx.x == 0) s_x[K] = 0.0;
  cg::wait(block);
  mx_pdl_wait(); /* y and part: the rest's kernels and the previous product's fixup */
  const int lane = threadIdx.x & 31, nw = gridDim.x * (HUB_THREADS / 32);
  int sl = blockIdx.x * (HUB_THREADS / 32) + (int)(threadIdx.x >> 5);
  int next_off = 0, next_len = 0;
  if (sl < nslices) next_off = slice_off[sl], next_len = slice_len[sl];
  for (; sl < nslices; sl += nw) {
    const int off = next_off, len = next_len, row = slice_row[sl * 32 + lane];
    const double y0 = row >= 0 ? y[row] : 0.0;
    if (sl + nw < nslices) next_off = slice_off[sl + nw], next_len = slice_len[sl + nw];
    double s = 0.0;
    int j = 0;
    for (; j + 4 <= len; j += 4) { /* a group (MX_HUB_SLOT): 4 ranks in one load, 4 values in two; the sums in order */
      const int at = off + 32 * j + 4 * lane; /* = MX_HUB_SLOT(off, len, j, lane) */
      const uint2 r4 = __ldg((const uint2 *)(rank + at));
      const int rk[4] = {(int)(r4.x & 0xffffu), (int)(r4.x >> 16), (int)(r4.y & 0xffffu), (int)(r4.y >> 16)};
      if (HAS_VAL) {
        const double2 v01 = __ldg((const double2 *)(val + at)), v23 = __ldg((const double2 *)(val + at + 2));
        s += __dmul_rn(v01.x, s_x[rk[0]]);
        s += __dmul_rn(v01.y, s_x[rk[1]]);
        s += __dmul_rn(v23.x, s_x[rk[2]]);
        s += __dmul_rn(v23.y, s_x[rk[3]]);
      } else {
#pragma unroll
        for (int u = 0; u < 4; ++u) s += s_x[rk[u]];
      }
    }
    for (; j < len; ++j) { /* the last len % 4, one per lane */
      const int at = off + 32 * j + lane;
      s += HAS_VAL ? __dmul_rn(val[at], s_x[rank[at]]) : s_x[rank[at]];
    }
    if (row >= 0) y[row] = y0 + s;
    else if (row != INT_MIN) part[~row] = s;
  }
}

/* HUB_FIXUP_LANES lanes per split row, each holding 32 / HUB_FIXUP_LANES of the order's 32 lane sums
 * (lane sum l = p + 8 c in lane p's s[c]): lane sum l adds parts l, l + 32, ... in order (its loads
 * of a round issued together), the butterfly's steps d = 16 and 8 add within a lane, d = 4, 2, 1
 * across its lanes; lane 0 of the group adds s_0 to y. The same operations as 32 lanes a row, on a
 * quarter of the warps (faster than a warp a row: docs/performance.md, "Hub split"). */
#define HUB_FIXUP_LANES 8
#define HUB_FIXUP_SUMS (32 / HUB_FIXUP_LANES)
__global__ void mx_hub_fixup_kernel(int nsplit, const int *__restrict__ split_row, const int *__restrict__ split_first,
                                    const double *__restrict__ part, double *y) {
  mx_pdl_wait(); /* launched early: the hub kernel's parts and y only after its end */
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int i = (int)(t / HUB_FIXUP_LANES), p = (int)(t % HUB_FIXUP_LANES);
  double s[HUB_FIXUP_SUMS];
#pragma unroll
  for (int c = 0; c < HUB_FIXUP_SUMS; ++c) s[c] = 0.0;
  if (i < nsplit) { /* no return before the shuffles: a warp's other groups need every lane */
    const int first = split_first[i], next = split_first[i + 1];
    for (int q0 = first; q0 < next; q0 += 32) {
      double v[HUB_FIXUP_SUMS];
#pragma unroll
      for (int c = 0; c < HUB_FIXUP_SUMS; ++c) v[c] = q0 + p + 8 * c < next ? part[q0 + p + 8 * c] : 0.0;
#pragma unroll
      for (int c = 0; c < HUB_FIXUP_SUMS; ++c)
        if (q0 + p + 8 * c < next) s[c] += v[c];
    }
  }
  double w = (s[0] + s[2]) + (s[1] + s[3]); /* d = 16 (l, l ^ 16: c, c ^ 2), then d = 8 (c, c ^ 1) for s_p */
#pragma unroll
  for (int d = HUB_FIXUP_LANES / 2; d > 0; d >>= 1) w += __shfl_xor_sync(FULL_MASK, w, d, HUB_FIXUP_LANES);
  if (p == 0 && i < nsplit) y[split_row[i]] += w;
}
static_assert(HUB_FIXUP_LANES == 8, "the in-lane butterfly steps (d = 16, 8) are written for 4 lane sums a lane");

/* ---- k columns (mx_hub_dev_spmm_add): slabs of W = 4 or 8 columns ------------------------------
 * The slab's hub x values as a row-major panel in global memory (L2), xp[r W + u] = B(hubcol[r],
 * j0 + u) (times hubscale[r]), 0 past the slab's columns and in the padding row K; the slices as the
 * SpMV's, each lane summing its pseudo-row for the slab's columns (one rank and value load per
 * nonzero for all of them, the panel row's 8 W bytes from L2), products rounded before the sum as
 * the SpMV's: each column's sum is bit for bit the SpMV's lane sum. A piece's sums go to
 * part[slot W + u], and a thread per (split row, column) adds them in slot order (not the SpMV's
 * butterfly: within rounding of it). A group of up to 4 columns takes the slab of 4 (its panel row
 * is one 32-byte sector, of 8 columns two), and a group of fewer than MX_HUB_SLAB_MIN_COLS columns
 * runs the SpMV per column (its x values in shared memory). */
#define HUB_SLAB 8 /* the widest slab */

static int hub_slab_width(int kb) { return kb <= 4 ? 4 : HUB_SLAB; }

template <int W>
__global__ void mx_hub_stage_slab_kernel(int K, int kb, const int *__restrict__ hubcol, const double *__restrict__ hubscale,
                                         const double *__restrict__ B, long long ldb, double *__restrict__ xp) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (long long)(K + 1) * W) return;
  const int r = (int)(i / W), u = (int)(i % W);
  double v = 0.0;
  if (r < K && u < kb) {
    const double b = B[(long long)u * ldb + hubcol[r]];
    v = hubscale ? __dmul_rn(b, hubscale[r]) : b;
  }
  xp[i] = v;
}

template <bool HAS_VAL, int W>
__global__ void __launch_bounds__(256)
mx_hub_slab_kernel(int nslices, const int *__restrict__ slice_off, const int *__restrict__ slice_len, const int *__restrict__ slice_row,
                   const unsigned short *__restrict__ rank, const double *__restrict__ val, const double2 *__restrict__ xp2, int kb,
                   double *C, long long ldc, double *__restrict__ part) {
  const long long sl = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (sl >= nslices) return; /* warp-uniform */
  const int lane = threadIdx.x & 31;
  const int off = slice_off[sl], len = slice_len[sl], row = slice_row[sl * 32 + lane];
  double2 acc[W / 2];
#pragma unroll
  for (int u = 0; u < W / 2; ++u) acc[u] = make_double2(0.0, 0.0);
  for (int j = 0; j < len; j += 4) { /* four ranks and values in flight, then the sums in order */
    const int n = min(4, len - j);
    int rk[4];
    double v[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int at = MX_HUB_SLOT(off, len, j + q, lane);
      rk[q] = q < n ? rank[at] : 0;
      v[q] = HAS_VAL && q < n ? val[at] : 1.0;
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      if (q >= n) break;
#pragma unroll
      for (int u = 0; u < W / 2; ++u) {
        const double2 b = __ldg(xp2 + (long long)rk[q] * (W / 2) + u);
        acc[u].x += HAS_VAL ? __dmul_rn(v[q], b.x) : b.x;
        acc[u].y += HAS_VAL ? __dmul_rn(v[q], b.y) : b.y;
      }
    }
  }
  if (row >= 0) {
#pragma unroll
    for (int u = 0; u < W / 2; ++u) {
      if (2 * u < kb) C[(long long)(2 * u) * ldc + row] += acc[u].x;
      if (2 * u + 1 < kb) C[(long long)(2 * u + 1) * ldc + row] += acc[u].y;
    }
  } else if (row != INT_MIN) {
#pragma unroll
    for (int u = 0; u < W / 2; ++u) {
      part[(long long)~row * W + 2 * u] = acc[u].x;
      part[(long long)~row * W + 2 * u + 1] = acc[u].y;
    }
  }
}

__global__ void mx_hub_slab_fixup_kernel(int nsplit, int kb, int w, const int *__restrict__ split_row, const int *__restrict__ split_first,
                                         const double *__restrict__ part, double *C, long long ldc) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (long long)nsplit * kb) return;
  const int r = (int)(i / kb), u = (int)(i % kb);
  double s = 0.0;
  for (int q = split_first[r]; q < split_first[r + 1]; ++q) s += part[(long long)q * w + u];
  C[(long long)u * ldc + split_row[r]] += s;
}

/* C(:, 0:kb) += the hub part times B(:, 0:kb) in one slab of W >= kb columns */
template <int W>
static int hub_slab_run(const mx_hub_dev *d, int kb, const double *B, long long ldb, double *C, long long ldc, double *xp, double *part,
                        cudaStream_t s) {
  const long long nstage = (long long)(d->K + 1) * W;
  mx_hub_stage_slab_kernel<W><<<(unsigned)((nstage + 255) / 256), 256, 0, s>>>(d->K, kb, d->hubcol, d->hubscale, B, ldb, xp);
  MX_LAUNCH_CHECK("hub slab staging kernel");
  const unsigned blocks = (unsigned)(((long long)d->nslices * 32 + 255) / 256);
  const double2 *xp2 = reinterpret_cast<const double2 *>(xp); /* a pool block: 16-byte aligned */
  if (d->val)
    mx_hub_slab_kernel<true, W><<<blocks, 256, 0, s>>>(d->nslices, d->slice_off, d->slice_len, d->slice_row, d->rank, d->val, xp2, kb, C, ldc, part);
  else
    mx_hub_slab_kernel<false, W><<<blocks, 256, 0, s>>>(d->nslices, d->slice_off, d->slice_len, d->slice_row, d->rank, nullptr, xp2, kb, C, ldc, part);
  MX_LAUNCH_CHECK("hub slab kernel");
  if (d->nsplit) {
    mx_hub_slab_fixup_kernel<<<(unsigned)(((long long)d->nsplit * kb + 255) / 256), 256, 0, s>>>(d->nsplit, kb, W, d->split_row,
                                                                                                 d->split_first, part, C, ldc);
    MX_LAUNCH_CHECK("hub slab fixup kernel");
  }
  return 0;
}

/* C(:, 0:kb) += the hub part times B(:, 0:kb), kb <= HUB_SLAB: per column below MX_HUB_SLAB_MIN_COLS
 * columns, else in the narrower slab that holds them */
static int hub_group_add(const mx_hub_dev *d, int kb, const double *B, long long ldb, double *C, long long ldc, double *xp, double *part,
                         cudaStream_t s) {
  if (kb < MX_HUB_SLAB_MIN_COLS) {
    for (int j = 0; j < kb; ++j)
      if (mx_hub_dev_spmv_add(d, B + (long long)j * ldb, C + (long long)j * ldc, s)) return 1;
    return 0;
  }
  if (hub_slab_width(kb) == 4) return hub_slab_run<4>(d, kb, B, ldb, C, ldc, xp, part, s);
  return hub_slab_run<HUB_SLAB>(d, kb, B, ldb, C, ldc, xp, part, s);
}

extern "C" int mx_hub_dev_spmm_add(const mx_hub_dev *d, int k, const double *B, long long ldb, double *C, long long ldc, void *stream) {
  if (d->nslices == 0 || k <= 0) return 0;
  cudaStream_t s = (cudaStream_t)stream;
  if (k < MX_HUB_SLAB_MIN_COLS) return hub_group_add(d, k, B, ldb, C, ldc, nullptr, nullptr, s); /* per column: no slab scratch */
  const int w = hub_slab_width(std::min(k, HUB_SLAB)); /* the widest slab the groups take */
  double *xp = nullptr, *part = nullptr;
  bool pooled_x = false, pooled_p = false;
  if (mx_scratch_malloc((void **)&xp, sizeof(double) * w * ((size_t)d->K + 1), s, true, &pooled_x, "hub SpMM: the slab's hub x values"))
    return 1;
  if (d->nparts > 0 &&
      mx_scratch_malloc((void **)&part, sizeof(double) * w * (size_t)d->nparts, s, true, &pooled_p, "hub SpMM: the pieces' sums")) {
    mx_scratch_free(xp, s, pooled_x);
    return 1;
  }
  int rc = 0;
  for (int j0 = 0; j0 < k && !rc; j0 += HUB_SLAB)
    rc = hub_group_add(d, std::min(k - j0, HUB_SLAB), B + (long long)j0 * ldb, ldb, C + (long long)j0 * ldc, ldc, xp, part, s);
  if (part) mx_scratch_free(part, s, pooled_p);
  mx_scratch_free(xp, s, pooled_x);
  return rc;
}

template <class T>
static int upload_array(T **d, const T *h, size_t n, const char *what) {
  *d = nullptr;
  if (n == 0 || !h) return 0;
  if (mx_cuda_check(cudaMalloc(d, n * sizeof(T)), what)) return 1;
  return mx_cuda_check(cudaMemcpy(*d, h, n * sizeof(T), cudaMemcpyHostToDevice), what);
}

/* The grid: blocks per SM (shared memory permitting) times the SMs. The kernels' dynamic shared-memory
 * limit is a property of the function on the current device, shared by every split alive there: it
 * only ever grows (a split of fewer hub columns uploaded later must not shrink it under a larger
 * one's launches). */
static int hub_grid(const mx_hub_dev *d, int *grid) {
  static size_t smem_allowed[64]; /* per device */
  int per_sm = 0, dev = 0, nsm = 0;
  MX_CUDA_TRY(cudaGetDevice(&dev));
  if (dev < 0 || dev >= 64) return mx_fail("hub kernel: device %d (at most 64)", dev);
  if (d->smem > smem_allowed[dev]) {
    for (const void *f : {(const void *)mx_hub_kernel<true>, (const void *)mx_hub_kernel<false>})
      MX_CUDA_TRY(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)d->smem));
    smem_allowed[dev] = d->smem;
  }
  MX_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, mx_hub_kernel<false>, HUB_THREADS, d->smem));
  MX_CUDA_TRY(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev));
  if (per_sm < 1) return mx_fail("hub kernel: %zu bytes of shared memory do not fit a block", d->smem);
  *grid = per_sm * nsm;
  return 0;
}

extern "C" int mx_hub_dev_upload(const mx_cold_hub *H, mx_hub_dev **out) {
  *out = nullptr;
  mx_hub_dev *d = (mx_hub_dev *)calloc(1, sizeof *d);
  if (!d) return mx_fail("hub upload: out of host memory");
  d->K = H->K, d->nslices = H->nslices, d->nsplit = H->nsplit, d->nparts = H->nparts;
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

extern "C" int mx_hub_dev_stage(const mx_hub_dev *d, const double *x, void *stream) {
  if (d->nslices == 0) return 0;
  mx_hub_stage_kernel<<<(d->K + 255) / 256, 256, 0, (cudaStream_t)stream>>>(d->K, d->hubcol, d->hubscale, x, d->xhub);
  MX_LAUNCH_CHECK("hub staging kernel");
  return 0;
}

extern "C" int mx_hub_dev_add_staged(const mx_hub_dev *d, double *y, void *stream, int after_rest) {
  if (d->nslices == 0) return 0;
  cudaStream_t s = (cudaStream_t)stream;
  const bool pdl = after_rest != 0;
  if (d->val)
    MX_CUDA_TRY(mx_launch_pdl(pdl, mx_hub_kernel<true>, dim3(d->grid), dim3(HUB_THREADS), d->smem, s, d->nslices, d->slice_off,
                              d->slice_len, d->slice_row, d->rank, d->val, d->xhub, d->K, y, d->part));
  else
    MX_CUDA_TRY(mx_launch_pdl(pdl, mx_hub_kernel<false>, dim3(d->grid), dim3(HUB_THREADS), d->smem, s, d->nslices, d->slice_off,
                              d->slice_len, d->slice_row, d->rank, (const double *)nullptr, d->xhub, d->K, y, d->part));
  if (d->nsplit)
    MX_CUDA_TRY(mx_launch_pdl(pdl, mx_hub_fixup_kernel, dim3((unsigned)(((long long)d->nsplit * HUB_FIXUP_LANES + 255) / 256)),
                              dim3(256), 0, s, d->nsplit, (const int *)d->split_row, (const int *)d->split_first,
                              (const double *)d->part, y));
  return 0;
}

extern "C" int mx_hub_dev_spmv_add(const mx_hub_dev *d, const double *x, double *y, void *stream) {
  return mx_hub_dev_stage(d, x, stream) || mx_hub_dev_add_staged(d, y, stream, 0);
}

extern "C" void mx_hub_dev_free(mx_hub_dev *d) {
  if (!d) return;
  for (void *p : {(void *)d->hubcol, (void *)d->hubscale, (void *)d->slice_off, (void *)d->slice_len, (void *)d->slice_row,
                  (void *)d->rank, (void *)d->val, (void *)d->split_row, (void *)d->split_first, (void *)d->xhub, (void *)d->part})
    if (p) cudaFree(p);
  free(d);
}

/* ---- the split built on the GPU (mx_hub_dev_build): the host builder's arrays, step for step ------- */

#define HUB_BUILD_THREADS 256
static inline int hub_blocks(int64_t n) { return (int)((n + HUB_BUILD_THREADS - 1) / HUB_BUILD_THREADS); }

__global__ void k_hub_count_cols(int nnz, const int *__restrict__ col, int *cnt) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < nnz) atomicAdd(&cnt[col[p]], 1);
}

__global__ void k_hub_iota(int n, int *a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = i;
}

__global__ void k_hub_fill(int64_t n, int v, int *a) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = v;
}

__global__ void k_hub_fill_u16(int64_t n, unsigned short v, unsigned short *a) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = v;
}

/* rank[col] = r and hubcol[r] = col for the first K of the columns sorted by count (rank preset -1) */
__global__ void k_hub_ranks(int K, const int *__restrict__ sorted_col, int *rank, int *hubcol) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < K) rank[sorted_col[r]] = r, hubcol[r] = sorted_col[r];
}

/* The row-wise build kernels run a warp per row: power-law rows (kron:21:16's longest holds ~10^5
 * nonzeros) would keep one thread per row looping serially long after the others finished. */
#define HUB_ROWS_PER_BLOCK (HUB_BUILD_THREADS / 32)
static inline int hub_row_blocks(int m) { return (m + HUB_ROWS_PER_BLOCK - 1) / HUB_ROWS_PER_BLOCK; }

/* the hub nonzeros of row i (rowptr[i] .. rowptr[i+1]-1), in every lane of the warp */
__device__ __forceinline__ int hub_row_count(int i, int lane, const int *__restrict__ rowptr, const int *__restrict__ col,
                                             const int *__restrict__ rank) {
  int h = 0;
  for (int p = rowptr[i] + lane; p < rowptr[i + 1]; p += 32) h += rank[col[p]] >= 0;
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) h += __shfl_xor_sync(FULL_MASK, h, d);
  return h;
}

/* per row (a warp each): rest and hub counts */
__global__ void k_hub_row_counts(int m, const int *__restrict__ rowptr, const int *__restrict__ col, const int *__restrict__ rank,
                                 int *rest_cnt, int *hub_cnt) {
  const int i = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (i >= m) return; /* warp-uniform */
  const int h = hub_row_count(i, lane, rowptr, col, rank);
  if (lane) return;
  rest_cnt[i] = rowptr[i + 1] - rowptr[i] - h, hub_cnt[i] = h;
}

/* per row: its pseudo-rows (pieces of row_max), split flag and parts */
__global__ void k_hub_pseudo_counts(int m, const int *__restrict__ hub_ptr, int row_max, int *p_cnt, int *split_cnt, int *part_cnt) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const int h = hub_ptr[i + 1] - hub_ptr[i], pieces = (h + row_max - 1) / row_max;
  p_cnt[i] = pieces, split_cnt[i] = h > row_max, part_cnt[i] = h > row_max ? pieces : 0;
}

/* per row (a warp each), in order: the rest's nonzeros and the hub's (rank, value). 32 nonzeros at a
 * time; a lane's place among its kind is the count of that kind in the lanes below it (ballot). */
__global__ void k_hub_scatter(int m, const int *__restrict__ rowptr, const int *__restrict__ col, const double *__restrict__ val,
                              const int *__restrict__ rank, const int *__restrict__ rest_ptr, const int *__restrict__ hub_ptr,
                              int *rest_col, double *rest_val, unsigned short *hub_rank, double *hub_val) {
  const int i = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (i >= m) return; /* warp-uniform */
  const unsigned below = (1u << lane) - 1u;
  const int end = rowptr[i + 1];
  int nr = rest_ptr[i], nh = hub_ptr[i];
  for (int base = rowptr[i]; base < end; base += 32) { /* warp-uniform trips */
    const int p = base + lane, c = p < end ? col[p] : 0, r = p < end ? rank[c] : -1;
    const unsigned hubs = __ballot_sync(FULL_MASK, p < end && r >= 0), rests = __ballot_sync(FULL_MASK, p < end && r < 0);
    if (p < end && r >= 0) {
      const int q = nh + __popc(hubs & below);
      hub_rank[q] = (unsigned short)r;
      hub_val[q] = val[p];
    } else if (p < end) {
      const int q = nr + __popc(rests & below);
      rest_col[q] = c;
      rest_val[q] = val[p];
    }
    nh += __popc(hubs), nr += __popc(rests);
  }
}

/* column constants: cand[r] = the bits of some hub nonzero of column r; then any other bits, or a NaN,
 * sets *varies (the host builder's rule: every hub column one value, bit for bit, no NaN) */
__global__ void k_hub_candidates(int64_t n, const unsigned short *__restrict__ hub_rank, const double *__restrict__ hub_val,
                                 unsigned long long *cand) {
  const int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (q < n) atomicExch(&cand[hub_rank[q]], (unsigned long long)__double_as_longlong(hub_val[q]));
}
__global__ void k_hub_varies(int64_t n, const unsigned short *__restrict__ hub_rank, const double *__restrict__ hub_val,
                             const unsigned long long *__restrict__ cand, int *varies) {
  const int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= n) return;
  const double v = hub_val[q];
  if (v != v || (unsigned long long)__double_as_longlong(v) != cand[hub_rank[q]]) *varies = 1;
}

/* per row: its pseudo-rows (start in the hub arrays, length <= row_max, out: the row or ~part slot)
 * and, for a split row, its entry in split_row / split_first */
__global__ void k_hub_pseudo(int m, const int *__restrict__ hub_ptr, int row_max, const int *__restrict__ p_base,
                             const int *__restrict__ split_base, const int *__restrict__ part_base, int *pstart, int *plen, int *pout,
                             int *split_row, int *split_first) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const int b = hub_ptr[i], h = hub_ptr[i + 1] - b, split = h > row_max;
  if (split) split_row[split_base[i]] = i, split_first[split_base[i]] = part_base[i];
  for (int q = 0, at = p_base[i]; q * row_max < h; ++q, ++at) {
    pstart[at] = b + q * row_max;
    plen[at] = min(row_max, h - q * row_max);
    pout[at] = split ? ~(part_base[i] + q) : i;
  }
}

__global__ void k_hub_slice_heads(int ns, const int *__restrict__ sorted_len, int *slice_len, int *slice_slots) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s < ns) slice_len[s] = sorted_len[32 * s], slice_slots[s] = 32 * sorted_len[32 * s];
}

/* pseudo-row order[q] into lane q % 32 of slice q / 32 (its slots: MX_HUB_SLOT) */
__global__ void k_hub_slice_fill(int P, const int *__restrict__ order, const int *__restrict__ pstart, const int *__restrict__ plen,
                                 const int *__restrict__ pout, const int *__restrict__ slice_off, const int *__restrict__ slice_len,
                                 const unsigned short *__restrict__ hub_rank, const double *__restrict__ hub_val, int *slice_row,
                                 unsigned short *rank, double *val) {
  const int q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= P) return;
  const int r = order[q], off = slice_off[q / 32], len = slice_len[q / 32], l = q % 32;
  slice_row[q] = pout[r];
  for (int j = 0; j < plen[r]; ++j) {
    const int at = MX_HUB_SLOT(off, len, j, l);
    rank[at] = hub_rank[pstart[r] + j];
    if (val) val[at] = hub_val[pstart[r] + j];
  }
}

/* device scratch freed at scope exit */
struct hub_scratch {
  std::vector<void *> ptrs;
  template <class T>
  int get(T **p, size_t n, const char *what) {
    *p = nullptr;
    if (mx_cuda_check(cudaMalloc(p, sizeof(T) * (n ? n : 1)), what)) return 1;
    ptrs.push_back(*p);
    return 0;
  }
  ~hub_scratch() {
    for (void *p : ptrs) cudaFree(p);
  }
};

/* out[0..n] = exclusive sum of in[0..n-1], out[n] the total (in[n] is set 0 first); *total on the host */
static int hub_scan(hub_scratch &W, int *in, int *out, int n, int *total, const char *what) {
  size_t bytes = 0;
  void *tmp = nullptr;
  MX_CUDA_TRY(cudaMemset(in + n, 0, sizeof(int)));
  MX_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n + 1));
  if (W.get((char **)&tmp, bytes, what)) return 1;
  MX_CUDA_TRY(cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, n + 1));
  return total ? mx_cuda_check(cudaMemcpy(total, out + n, sizeof(int), cudaMemcpyDeviceToHost), what) : 0;
}

/* vals_out = vals_in (0..n-1 when NULL) ordered by descending key, stable (ties keep their order) */
static int hub_sort_desc(hub_scratch &W, const int *keys_in, int *keys_out, const int *vals_in, int *vals_out, int n, int end_bit,
                         const char *what) {
  size_t bytes = 0;
  void *tmp = nullptr;
  MX_CUDA_TRY(cub::DeviceRadixSort::SortPairsDescending(nullptr, bytes, keys_in, keys_out, vals_in, vals_out, n, 0, end_bit));
  if (W.get((char **)&tmp, bytes, what)) return 1;
  MX_CUDA_TRY(cub::DeviceRadixSort::SortPairsDescending(tmp, bytes, keys_in, keys_out, vals_in, vals_out, n, 0, end_bit));
  return 0;
}

static int bits_for(int maxval) {
  int b = 1;
  while (b < 31 && (1 << b) <= maxval) ++b;
  return b;
}

/* The K most used of the n columns (col: nnz column indices), most used first, ties by column (a
 * stable sort of the counts), never an empty one: *Kused of them, in *col_sorted (n + 1, every column
 * in that order); *rank (n + 1) all -1, for k_hub_ranks to fill. Both from W. 0 or 1. */
static int hub_top_columns(hub_scratch &W, const int *col, int n, int nnz, int K, int **rank, int **col_sorted, int *Kused) {
  int *cnt, *cnt_sorted, *col_iota;
  *Kused = 0;
  if (W.get(&cnt, (size_t)n + 1, "hub split: column counts") || W.get(&cnt_sorted, (size_t)n + 1, "hub split: sorted counts") ||
      W.get(&col_iota, (size_t)n + 1, "hub split: columns") || W.get(col_sorted, (size_t)n + 1, "hub split: sorted columns") ||
      W.get(rank, (size_t)n + 1, "hub split: column ranks") ||
      mx_cuda_check(cudaMemset(cnt, 0, sizeof(int) * ((size_t)n + 1)), "hub split: column counts"))
    return 1;
  if (nnz > 0) k_hub_count_cols<<<hub_blocks(nnz), HUB_BUILD_THREADS>>>(nnz, col, cnt);
  if (n > 0) {
    k_hub_iota<<<hub_blocks(n), HUB_BUILD_THREADS>>>(n, col_iota);
    k_hub_fill<<<hub_blocks(n), HUB_BUILD_THREADS>>>(n, -1, *rank);
    if (hub_sort_desc(W, cnt, cnt_sorted, col_iota, *col_sorted, n, bits_for(nnz), "hub split: sorting the columns")) return 1;
  }
  if (K == 0) return 0;
  std::vector<int> head((size_t)K);
  if (mx_cuda_check(cudaMemcpy(head.data(), cnt_sorted, sizeof(int) * (size_t)K, cudaMemcpyDeviceToHost), "hub split: counts")) return 1;
  while (*Kused < K && head[(size_t)*Kused] > 0) ++*Kused;
  return 0;
}

/* acc[0] += the block's rows' hub nonzeros, acc[1] += its rows that have any (a warp per row, lane 0 tells) */
__global__ void k_hub_stats(int m, const int *__restrict__ rowptr, const int *__restrict__ col, const int *__restrict__ rank,
                            unsigned long long *acc) {
  typedef cub::BlockReduce<unsigned long long, HUB_BUILD_THREADS> reduce;
  __shared__ typename reduce::TempStorage tmp;
  const int i = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  unsigned long long h = 0;
  if (i < m) { /* warp-uniform */
    const int c = hub_row_count(i, lane, rowptr, col, rank);
    if (lane == 0) h = (unsigned long long)c;
  }
  const unsigned long long nh = reduce(tmp).Sum(h);
  __syncthreads();
  const unsigned long long rows = reduce(tmp).Sum(h > 0 ? 1ull : 0ull);
  if (threadIdx.x == 0) atomicAdd(&acc[0], nh), atomicAdd(&acc[1], rows);
}

int mx_hub_dev_stats(const int *rowptr, const int *col, int m, int n, int nnz, int K, int64_t *hub_nnz, int64_t *hub_rows) {
  *hub_nnz = *hub_rows = 0;
  if (K < 0 || K > MX_HUB_MAX_COLS) return mx_fail("hub statistics: %d hub columns (0 .. %d)", K, MX_HUB_MAX_COLS);
  if (K > n) K = n;
  hub_scratch W;
  int *rank, *col_sorted, *hubcol, Kused = 0;
  unsigned long long *acc, got[2] = {0, 0};
  if (hub_top_columns(W, col, n, nnz, K, &rank, &col_sorted, &Kused) || W.get(&hubcol, (size_t)Kused + 1, "hub statistics") ||
      W.get(&acc, 2, "hub statistics") || mx_cuda_check(cudaMemset(acc, 0, sizeof got), "hub statistics"))
    return 1;
  if (Kused > 0) k_hub_ranks<<<hub_blocks(Kused), HUB_BUILD_THREADS>>>(Kused, col_sorted, rank, hubcol);
  if (m > 0) k_hub_stats<<<hub_row_blocks(m), HUB_BUILD_THREADS>>>(m, rowptr, col, rank, acc);
  if (mx_cuda_check(cudaGetLastError(), "hub statistics: kernels") ||
      mx_cuda_check(cudaMemcpy(got, acc, sizeof got, cudaMemcpyDeviceToHost), "hub statistics"))
    return 1;
  *hub_nnz = (int64_t)got[0], *hub_rows = (int64_t)got[1];
  return 0;
}

int mx_hub_dev_build(const int *rowptr, const int *col, const double *val, int m, int n, int nnz, int K, mx_device *rest,
                     mx_hub_dev **out, int64_t *hub_nnz) {
  *out = nullptr;
  *hub_nnz = 0;
  if (K < 0 || K > MX_HUB_MAX_COLS) return mx_fail("hub split: %d hub columns (0 .. %d)", K, MX_HUB_MAX_COLS);
  if (nnz > INT32_MAX - 32 * MX_HUB_ROW_MAX_FOLDED) return mx_fail("hub split: %d nonzeros (the padded slots must stay 32-bit)", nnz);
  if (K > n) K = n;
  hub_scratch W;
  mx_hub_dev *d = (mx_hub_dev *)calloc(1, sizeof *d);
  if (!d) return mx_fail("hub split: out of host memory");
  int rc = 0;
  int Kused = 0, nrest = 0, nhub = 0, P = 0, nsplit = 0, nparts = 0, ns = 0, slots = 0, varies = 1, row_max = MX_HUB_ROW_MAX;
  int *col_sorted, *rank, *rest_cnt, *hub_cnt, *hub_ptr, *p_cnt, *p_base, *split_cnt, *split_base, *part_cnt,
      *part_base, *pstart, *plen, *pout, *p_iota, *sorted_len, *order, *slots_cnt, *flag;
  unsigned short *hub_rank;
  double *hub_val;
  unsigned long long *cand;
  /* 1. the K most used columns */
  rc = hub_top_columns(W, col, n, nnz, K, &rank, &col_sorted, &Kused);
  d->K = Kused;
  rc = rc || mx_cuda_check(cudaMalloc(&d->hubcol, sizeof(int) * ((size_t)Kused + 1)), "hub split: hub columns");
  if (!rc && Kused > 0) k_hub_ranks<<<hub_blocks(Kused), HUB_BUILD_THREADS>>>(Kused, col_sorted, rank, d->hubcol);
  mx_trace_step("hub split: top columns");
  /* 2. per row: counts; the rest's row pointers (on rest), the hub's */
  rc = rc || W.get(&rest_cnt, (size_t)m + 1, "hub split: row counts") || W.get(&hub_cnt, (size_t)m + 1, "hub split: row counts") ||
       W.get(&hub_ptr, (size_t)m + 1, "hub split: row counts") || W.get(&p_cnt, (size_t)m + 1, "hub split: row counts") ||
       W.get(&p_base, (size_t)m + 1, "hub split: row counts") || W.get(&split_cnt, (size_t)m + 1, "hub split: row counts") ||
       W.get(&split_base, (size_t)m + 1, "hub split: row counts") || W.get(&part_cnt, (size_t)m + 1, "hub split: row counts") ||
       W.get(&part_base, (size_t)m + 1, "hub split: row counts") ||
       mx_cuda_alloc_on(rest, &rest->cold_rowptr, (size_t)m + 1, "hub split: the rest's row pointers");
  if (!rc && m > 0) k_hub_row_counts<<<hub_row_blocks(m), HUB_BUILD_THREADS>>>(m, rowptr, col, rank, rest_cnt, hub_cnt);
  rc = rc || hub_scan(W, rest_cnt, rest->cold_rowptr, m, &nrest, "hub split: rest") || hub_scan(W, hub_cnt, hub_ptr, m, &nhub, "hub split: hub");
  mx_trace_step("hub split: row counts, scans");
  /* 3. the nonzeros, row by row in order */
  rc = rc || mx_cuda_alloc_on(rest, &rest->cold_col, (size_t)nrest, "hub split: the rest's columns") ||
       mx_cuda_alloc_on(rest, &rest->cold_val, (size_t)nrest, "hub split: the rest's values") ||
       W.get(&hub_rank, (size_t)nhub + 1, "hub split: hub ranks") || W.get(&hub_val, (size_t)nhub + 1, "hub split: hub values");
  if (!rc && m > 0)
    k_hub_scatter<<<hub_row_blocks(m), HUB_BUILD_THREADS>>>(m, rowptr, col, val, rank, rest->cold_rowptr, hub_ptr, rest->cold_col,
                                                        rest->cold_val, hub_rank, hub_val);
  mx_trace_step("hub split: scatter");
  /* 4. column constants */
  rc = rc || W.get(&cand, (size_t)Kused + 1, "hub split: column constants") || W.get(&flag, 1, "hub split: column constants") ||
       mx_cuda_check(cudaMemset(flag, 0, sizeof(int)), "hub split: column constants");
  if (!rc && nhub > 0) {
    k_hub_candidates<<<hub_blocks(nhub), HUB_BUILD_THREADS>>>(nhub, hub_rank, hub_val, cand);
    k_hub_varies<<<hub_blocks(nhub), HUB_BUILD_THREADS>>>(nhub, hub_rank, hub_val, cand, flag);
  }
  rc = rc || mx_cuda_check(cudaMemcpy(&varies, flag, sizeof(int), cudaMemcpyDeviceToHost), "hub split: column constants");
  if (!rc && !varies) {
    rc = mx_cuda_check(cudaMalloc(&d->hubscale, sizeof(double) * ((size_t)Kused + 1)), "hub split: hub scales") ||
         mx_cuda_check(cudaMemcpy(d->hubscale, cand, sizeof(double) * (size_t)Kused, cudaMemcpyDeviceToDevice), "hub split: hub scales");
  }
  mx_trace_step("hub split: column constants");
  /* 5. pseudo-rows of at most row_max (the host builder's mx_hub_row_max), sorted by length (descending,
   * stable), into slices */
  row_max = mx_hub_row_max(!varies);
  if (!rc && m > 0) k_hub_pseudo_counts<<<hub_blocks(m), HUB_BUILD_THREADS>>>(m, hub_ptr, row_max, p_cnt, split_cnt, part_cnt);
  rc = rc || hub_scan(W, p_cnt, p_base, m, &P, "hub split: pseudo-rows") || hub_scan(W, split_cnt, split_base, m, &nsplit, "hub split: split rows") ||
       hub_scan(W, part_cnt, part_base, m, &nparts, "hub split: parts");
  d->nsplit = nsplit;
  rc = rc || W.get(&pstart, (size_t)P + 1, "hub split: pseudo-rows") || W.get(&plen, (size_t)P + 1, "hub split: pseudo-rows") ||
       W.get(&pout, (size_t)P + 1, "hub split: pseudo-rows") || W.get(&sorted_len, (size_t)P + 1, "hub split: pseudo-rows") ||
       W.get(&order, (size_t)P + 1, "hub split: pseudo-rows") || W.get(&p_iota, (size_t)P + 1, "hub split: pseudo-rows") ||
       mx_cuda_check(cudaMalloc(&d->split_row, sizeof(int) * ((size_t)nsplit + 1)), "hub split: split rows") ||
       mx_cuda_check(cudaMalloc(&d->split_first, sizeof(int) * ((size_t)nsplit + 1)), "hub split: split rows") ||
       mx_cuda_check(cudaMemcpy(d->split_first + nsplit, &nparts, sizeof(int), cudaMemcpyHostToDevice), "hub split: split rows");
  if (!rc && m > 0)
    k_hub_pseudo<<<hub_blocks(m), HUB_BUILD_THREADS>>>(m, hub_ptr, row_max, p_base, split_base, part_base, pstart, plen, pout,
                                                       d->split_row, d->split_first);
  if (!rc && P > 0) {
    k_hub_iota<<<hub_blocks(P), HUB_BUILD_THREADS>>>(P, p_iota);
    rc = hub_sort_desc(W, plen, sorted_len, p_iota, order, P, bits_for(row_max), "hub split: sorting the pseudo-rows");
  }
  ns = (P + 31) / 32;
  d->nslices = ns;
  rc = rc || W.get(&slots_cnt, (size_t)ns + 1, "hub split: slices") ||
       mx_cuda_check(cudaMalloc(&d->slice_len, sizeof(int) * ((size_t)ns + 1)), "hub split: slices") ||
       mx_cuda_check(cudaMalloc(&d->slice_off, sizeof(int) * ((size_t)ns + 1)), "hub split: slices");
  if (!rc && ns > 0) k_hub_slice_heads<<<hub_blocks(ns), HUB_BUILD_THREADS>>>(ns, sorted_len, d->slice_len, slots_cnt);
  rc = rc || hub_scan(W, slots_cnt, d->slice_off, ns, &slots, "hub split: slices") ||
       mx_cuda_check(cudaMalloc(&d->slice_row, sizeof(int) * ((size_t)ns * 32 + 1)), "hub split: slices") ||
       mx_cuda_check(cudaMalloc(&d->rank, sizeof(unsigned short) * ((size_t)slots + 1)), "hub split: slices") ||
       (varies && mx_cuda_check(cudaMalloc(&d->val, sizeof(double) * ((size_t)slots + 1)), "hub split: slices")) ||
       (varies && mx_cuda_check(cudaMemset(d->val, 0, sizeof(double) * ((size_t)slots + 1)), "hub split: slices"));
  if (!rc && ns > 0) k_hub_fill<<<hub_blocks((int64_t)ns * 32), HUB_BUILD_THREADS>>>((int64_t)ns * 32, INT_MIN, d->slice_row);
  if (!rc && slots > 0) k_hub_fill_u16<<<hub_blocks(slots), HUB_BUILD_THREADS>>>(slots, (unsigned short)Kused, d->rank);
  if (!rc && P > 0)
    k_hub_slice_fill<<<hub_blocks(P), HUB_BUILD_THREADS>>>(P, order, pstart, plen, pout, d->slice_off, d->slice_len, hub_rank, hub_val,
                                                           d->slice_row, d->rank, varies ? d->val : nullptr);
  /* 6. the product's buffers and grid */
  d->smem   = sizeof(double) * ((size_t)Kused + 1);
  d->nparts = nparts;
  rc = rc || mx_cuda_check(cudaGetLastError(), "hub split: kernels") ||
       (Kused > 0 && mx_cuda_check(cudaMalloc(&d->xhub, sizeof(double) * (size_t)Kused), "hub x buffer")) ||
       (nparts > 0 && mx_cuda_check(cudaMalloc(&d->part, sizeof(double) * (size_t)nparts), "hub part slots")) ||
       (ns > 0 && hub_grid(d, &d->grid)) || mx_cuda_check(cudaDeviceSynchronize(), "hub split");
  mx_trace_step("hub split: pseudo-rows, slices");
  if (rc) {
    mx_hub_dev_free(d);
    return 1;
  }
  rest->nrows = m, rest->ncols = n, rest->nnz = nrest;
  *hub_nnz = nhub;
  *out = d;
  return 0;
}

extern "C" void mx_hub_dev_info(const mx_hub_dev *d, int *K) { *K = d ? d->K : 0; }
