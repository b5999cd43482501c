/* mx_xhot.cu - the x-hot cache: pack the x values of the most used columns once per SpMV.
 *
 * On a randomly labelled power-law graph (Graph500 Kronecker, Chung-Lu) a few thousand columns hold
 * about half of the nonzeros, but their x values lie scattered over x, one per 32-byte L2 sector, so
 * every gather of them moves a sector from L2 for 8 useful bytes and L1 cannot keep them (a 128-byte
 * line each). Here they get local ranks at upload: their stored column codes become -2 - rank, and
 * once per SpMV xhot[rank] = x[column] packs them into a contiguous buffer of at most 64 KB that the
 * kernels read through L1 like any gather (one load from a selected address, mx_ld_xc). The
 * products and their order are unchanged, so y is bitwise the same as without the cache. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <algorithm>
#include <vector>
#include "mx_device_impl.h"
#include "mx_kernel_common.cuh"
#include "mx_scratch.cuh"

/* ---- setup (on the device arrays, once per upload or build) ---------------------------------------- */

/* deg[col[i]] += 1 for every stored column col[i] >= 0 (cold CSR, SE slots; -1 = padding). */
__global__ void __launch_bounds__(MX_XHOT_THREADS) mx_xhot_count_columns(int64_t n, const int *__restrict__ col, int *deg) {
  const int64_t i = (int64_t)blockIdx.x * MX_XHOT_THREADS + threadIdx.x;
  if (i < n && col[i] >= 0) atomicAdd(deg + col[i], 1);
}

/* DU: column j of block b is used by the bits of rows r*4 + j of its bitmap. */
__global__ void __launch_bounds__(MX_XHOT_THREADS) mx_xhot_count_du(int64_t nslots, const uint32_t *__restrict__ bitmap,
                                                                    const int *__restrict__ du_col, int *deg) {
  const int64_t i = (int64_t)blockIdx.x * MX_XHOT_THREADS + threadIdx.x;
  if (i >= nslots || du_col[i] < 0) return;
  const int j = (int)(i % MX_BLOCK_COLS);
  atomicAdd(deg + du_col[i], __popc(bitmap[i / MX_BLOCK_COLS] & (0x11111111u << j)));
}

/* key[i] = deg[cand[i]] */
__global__ void __launch_bounds__(MX_XHOT_THREADS) mx_xhot_uses_of(int n, const int *__restrict__ cand, const int *__restrict__ deg, int *key) {
  const int i = blockIdx.x * MX_XHOT_THREADS + threadIdx.x;
  if (i < n) key[i] = deg[cand[i]];
}

/* rank[cols[i]] = i */
__global__ void __launch_bounds__(MX_XHOT_THREADS) mx_xhot_ranks(int n, const int *__restrict__ cols, int *rank) {
  const int i = blockIdx.x * MX_XHOT_THREADS + threadIdx.x;
  if (i < n) rank[cols[i]] = i;
}

/* col[i] = -2 - rank[col[i]] where the column is packed (codes of mx_ld_xc); -1 stays -1. */
__global__ void __launch_bounds__(MX_XHOT_THREADS) mx_xhot_encode_columns(int64_t n, const int *__restrict__ rank, int *col) {
  const int64_t i = (int64_t)blockIdx.x * MX_XHOT_THREADS + threadIdx.x;
  if (i >= n) return;
  const int c = col[i];
  if (c >= 0 && rank[c] >= 0) col[i] = -2 - rank[c];
}

static inline int xhot_blocks(int64_t n) { return (int)((n + MX_XHOT_THREADS - 1) / MX_XHOT_THREADS); }

/* deg[c] = uses of column c by the stored nonzeros (cold CSR, SE slots, DU bitmap bits). */
static int column_uses(const mx_device *D, int *deg) {
  MX_CUDA_TRY(cudaMemset(deg, 0, sizeof(int) * (size_t)D->ncols));
  if (D->cold_nnz > 0) mx_xhot_count_columns<<<xhot_blocks(D->cold_nnz), MX_XHOT_THREADS>>>(D->cold_nnz, D->cold_col, deg);
  if (D->mode == MX_HOT_SE && D->se_nslots > 0)
    mx_xhot_count_columns<<<xhot_blocks(D->se_nslots), MX_XHOT_THREADS>>>(D->se_nslots, D->se_col, deg);
  if (D->mode == MX_HOT_DU && D->du_nblocks > 0) {
    const int64_t ns = (int64_t)D->du_nblocks * MX_BLOCK_COLS;
    mx_xhot_count_du<<<xhot_blocks(ns), MX_XHOT_THREADS>>>(ns, D->du_bitmap, D->du_col, deg);
  }
  MX_LAUNCH_CHECK("x-hot column uses");
  return 0;
}

struct used_at_least {
  const int *deg;
  int min_deg;
  __host__ __device__ bool operator()(int c) const { return deg[c] >= min_deg; }
};

/* The packed columns, most used first (ties by index), at most cap, used >= min_deg times each;
 * their uses in *uses. The radix sort is stable and its input ascending, hence the ties. */
static int most_used_columns(mx_device *D, mx_scratch &W, const int *deg, int min_deg, int64_t cap,
                             std::vector<int32_t> &cols, std::vector<int32_t> &uses) {
  const int n = D->ncols;
  int *cand, *cand_sorted, *key, *key_sorted, *nsel, h_nsel;
  if (mx_scratch_alloc(D, W, &cand, n, "alloc x-hot candidates") || mx_scratch_alloc(D, W, &cand_sorted, n, "alloc x-hot candidates") ||
      mx_scratch_alloc(D, W, &key, n, "alloc x-hot keys") || mx_scratch_alloc(D, W, &key_sorted, n, "alloc x-hot keys") ||
      mx_scratch_alloc(D, W, &nsel, 1, "alloc x-hot count"))
    return 1;
  if (mx_cub_run(D, W, "x-hot candidates", [&](void *t, size_t &b) {
        return cub::DeviceSelect::If(t, b, thrust::counting_iterator<int>(0), cand, nsel, n, used_at_least{deg, min_deg});
      }))
    return 1;
  MX_CUDA_TRY(cudaMemcpy(&h_nsel, nsel, sizeof(int), cudaMemcpyDeviceToHost));
  if (h_nsel == 0) return 0;
  mx_xhot_uses_of<<<xhot_blocks(h_nsel), MX_XHOT_THREADS>>>(h_nsel, cand, deg, key);
  MX_LAUNCH_CHECK("x-hot keys");
  if (mx_cub_run(D, W, "x-hot sort", [&](void *t, size_t &b) {
        return cub::DeviceRadixSort::SortPairsDescending(t, b, key, key_sorted, cand, cand_sorted, h_nsel);
      }))
    return 1;
  const int k = (int)std::min<int64_t>(h_nsel, cap);
  cols.resize((size_t)k);
  uses.resize((size_t)k);
  MX_CUDA_TRY(cudaMemcpy(cols.data(), cand_sorted, sizeof(int) * (size_t)k, cudaMemcpyDeviceToHost));
  MX_CUDA_TRY(cudaMemcpy(uses.data(), key_sorted, sizeof(int) * (size_t)k, cudaMemcpyDeviceToHost));
  return 0;
}

/* AUTO keeps the columns only if they hold >= MX_XHOT_MIN_SHARE of the stored nonzeros and span
 * >= MX_XHOT_MIN_SPREAD times the 32-byte sectors of their packed copy (already-local hot columns,
 * e.g. dense blocks, gain nothing from packing). */
static bool worth_packing(const mx_device *D, const std::vector<int32_t> &cols, const std::vector<int32_t> &uses) {
  int64_t used = 0;
  for (int32_t u : uses) used += u;
  const int64_t total = (int64_t)D->cold_nnz + D->hot_nnz; /* every stored nonzero uses one column */
  std::vector<int32_t> sectors(cols.size());
  for (size_t i = 0; i < cols.size(); ++i) sectors[i] = cols[i] >> 2;
  std::sort(sectors.begin(), sectors.end());
  const double nsec = (double)(std::unique(sectors.begin(), sectors.end()) - sectors.begin());
  const double packed = (double)((cols.size() + 3) / 4);
  return (double)used >= MX_XHOT_MIN_SHARE * (double)total && nsec >= MX_XHOT_MIN_SPREAD * packed;
}

/* Stored columns of the packed ones become codes -2 - rank: cold CSR (if cold), SE or DU columns. */
static int encode_columns(mx_device *D, mx_scratch &W, const std::vector<int32_t> &cols, int cold) {
  int *rank;
  if (mx_scratch_alloc(D, W, &rank, D->ncols, "alloc x-hot ranks")) return 1;
  MX_CUDA_TRY(cudaMemset(rank, 0xff, sizeof(int) * (size_t)D->ncols)); /* -1: not packed */
  const int n = (int)cols.size();
  mx_xhot_ranks<<<xhot_blocks(n), MX_XHOT_THREADS>>>(n, D->xhot_col, rank);
  if (cold && D->cold_nnz > 0) mx_xhot_encode_columns<<<xhot_blocks(D->cold_nnz), MX_XHOT_THREADS>>>(D->cold_nnz, rank, D->cold_col);
  if (D->mode == MX_HOT_SE && D->se_nslots > 0)
    mx_xhot_encode_columns<<<xhot_blocks(D->se_nslots), MX_XHOT_THREADS>>>(D->se_nslots, rank, D->se_col);
  if (D->mode == MX_HOT_DU && D->du_nblocks > 0) {
    const int64_t ns = (int64_t)D->du_nblocks * MX_BLOCK_COLS;
    mx_xhot_encode_columns<<<xhot_blocks(ns), MX_XHOT_THREADS>>>(ns, rank, D->du_col);
  }
  MX_LAUNCH_CHECK("x-hot column codes");
  return mx_cuda_check(cudaDeviceSynchronize(), "x-hot column codes");
}

/* request 0: off. request n > 0: the n most used columns (ties by index) that hold a nonzero.
 * MX_XHOT_AUTO: at most cap_auto columns used >= MX_XHOT_MIN_DEG times, if worth_packing. AUTO
 * codes the cold CSR only when `cold` says so, and is off without a hot region then. */
int mx_xhot_setup(mx_device *D, int request, int cap_auto, int cold) {
  if (!cold && D->hot_nnz == 0) return 0;
  const bool autosel = request == MX_XHOT_AUTO;
  const int64_t cap = autosel ? cap_auto : request;
  if (cap <= 0 || D->ncols == 0 || D->nnz == 0) return 0;
  mx_scratch W;
  int *deg;
  std::vector<int32_t> cols, uses;
  if (mx_scratch_alloc(D, W, &deg, D->ncols, "alloc x-hot column uses") || column_uses(D, deg) ||
      most_used_columns(D, W, deg, autosel ? MX_XHOT_MIN_DEG : 1, cap, cols, uses))
    return 1;
  if (cols.empty() || (autosel && !worth_packing(D, cols, uses))) return 0;
  D->xhot_n = (int)cols.size();
  D->xhot_mode = MX_XH_ON;
  D->xhot_cold = cold;
  if (mx_cuda_alloc_on(D, &D->xhot_col, cols.size(), "alloc xhot columns") || mx_cuda_alloc_on(D, &D->xhot, cols.size(), "alloc xhot values"))
    return 1;
  MX_CUDA_TRY(cudaMemcpy(D->xhot_col, cols.data(), sizeof(int) * cols.size(), cudaMemcpyHostToDevice));
  return encode_columns(D, W, cols, cold);
}

/* ---- per SpMV ---------------------------------------------------------------------------------------- */

/* Ownership: thread i writes xhot[i] only (one read of x each). */
__global__ void __launch_bounds__(MX_XHOT_THREADS)
mx_xhot_gather_kernel(int n, const int *__restrict__ xhot_col, const double *__restrict__ x, double *__restrict__ xhot) {
  const int i = blockIdx.x * MX_XHOT_THREADS + threadIdx.x;
  if (i < n) xhot[i] = mx_ld_x(x, xhot_col[i]);
}

int mx_xhot_launch(const mx_device *D, const double *x, cudaStream_t s) {
  if (D->xhot_n == 0) return 0;
  mx_xhot_gather_kernel<<<(D->xhot_n + MX_XHOT_THREADS - 1) / MX_XHOT_THREADS, MX_XHOT_THREADS, 0, s>>>(
      D->xhot_n, D->xhot_col, x, D->xhot);
  MX_LAUNCH_CHECK("mx_xhot_gather_kernel launch");
  return 0;
}
