/* mx_xhot.cu - the x-hot cache: pack the x values of the most used columns once per SpMV.
 *
 * On a randomly labelled power-law graph (Graph500 Kronecker, Chung-Lu) a few thousand columns hold
 * about half of the nonzeros, but their x values lie scattered over x, one per 32-byte L2 sector, so
 * every gather of them moves a sector from L2 for 8 useful bytes and L1 cannot keep them (a 128-byte
 * line each). Here they get local ranks at upload: their stored column codes become -2 - rank, and
 * once per SpMV xhot[rank] = x[column] packs them into a contiguous buffer of at most 64 KB that the
 * kernels read through L1 like any gather (one load from a selected address, mx_ld_xc). The
 * products and their order are unchanged, so y is bitwise the same as without the cache. */
#include <algorithm>
#include "mx_device_impl.h"
#include "mx_kernel_common.cuh"

/* Uses of each column by the stored nonzeros (cold CSR, SE slots, DU bitmap bits; padding excluded). */
static std::vector<int64_t> column_uses(const mx_format *F) {
  std::vector<int64_t> deg((size_t)F->ncols, 0);
  for (int32_t k = 0; k < F->cold_nnz; ++k) deg[F->cold_col[k]]++;
  if (F->hot_nnz > 0 && F->mode == MX_HOT_SE)
    for (int32_t s = 0; s < F->se_nslots; ++s)
      if (F->se_col[s] >= 0) deg[F->se_col[s]]++;
  if (F->hot_nnz > 0 && F->mode == MX_HOT_DU)
    for (int32_t b = 0; b < F->du_nblocks; ++b)
      for (int j = 0; j < MX_BLOCK_COLS; ++j) {
        const int32_t c = F->du_col[(size_t)b * MX_BLOCK_COLS + j];
        if (c >= 0) deg[c] += __builtin_popcount(F->du_bitmap[b] & (0x11111111u << j));
      }
  return deg;
}

/* request 0: off. request n > 0: the n most used columns (ties by index) that hold a nonzero.
 * MX_XHOT_AUTO: at most cap_auto columns used >= MX_XHOT_MIN_DEG times, kept only if they hold
 * >= MX_XHOT_MIN_SHARE of the nonzeros and span >= MX_XHOT_MIN_SPREAD times the 32-byte sectors of
 * their packed copy (already-local hot columns, e.g. dense blocks, gain nothing from packing). */
void mx_xhot_select(const mx_format *F, int request, int cap_auto, std::vector<int32_t> &cols) {
  cols.clear();
  const bool autosel = request == MX_XHOT_AUTO;
  const int64_t cap = autosel ? cap_auto : request;
  if (cap <= 0 || F->ncols == 0 || F->nnz == 0) return;
  const std::vector<int64_t> deg = column_uses(F);
  const int64_t min_deg = autosel ? MX_XHOT_MIN_DEG : 1;
  for (int32_t c = 0; c < F->ncols; ++c)
    if (deg[c] >= min_deg) cols.push_back(c);
  std::sort(cols.begin(), cols.end(), [&](int32_t a, int32_t b) { return deg[a] != deg[b] ? deg[a] > deg[b] : a < b; });
  if ((int64_t)cols.size() > cap) cols.resize((size_t)cap);
  if (!autosel || cols.empty()) return;
  int64_t used = 0, total = 0;
  for (int32_t c : cols) used += deg[c];
  for (int64_t d : deg) total += d;
  std::vector<int32_t> sectors(cols.size());
  for (size_t i = 0; i < cols.size(); ++i) sectors[i] = cols[i] >> 2;
  std::sort(sectors.begin(), sectors.end());
  const double nsec = (double)(std::unique(sectors.begin(), sectors.end()) - sectors.begin());
  const double packed = (double)((cols.size() + 3) / 4);
  if ((double)used < MX_XHOT_MIN_SHARE * (double)total || nsec < MX_XHOT_MIN_SPREAD * packed) cols.clear();
}

void mx_xhot_encode(const int32_t *col, size_t n, const std::vector<int32_t> &rank, std::vector<int32_t> &codes) {
  codes.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const int32_t c = col[i];
    codes[i] = c >= 0 && rank[c] >= 0 ? -2 - rank[c] : c;
  }
}

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
