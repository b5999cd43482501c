/* hub_fused_proto.cuh - EXPERIMENT (issue 13, chunglu), measured and not taken into the library: on an
 * H200 it is 1.5x slower than the split on chunglu:2000000:16:2.1 (276-284 vs 183 us) and 5% slower on
 * kron:20:16 PageRank (168 vs 161 us): 32 warps per SM (the 224 KB of hub x values) are too few for
 * the gathers that still go through L2 (tuning/results/h200/hub-fused-2026-11-27c).
 * The whole product in one sliced-ELLPACK pass.
 * Every nonzero of A sits in the slices (rows cut into pieces of <= FUSED_ROW_MAX, sorted by length,
 * 32 pseudo-rows a slice, lane l sums pseudo-row l in CSR order); an entry is ~rank for a hub column
 * (its x value from shared memory, as the hub kernel's) or the column itself (x from global memory,
 * through L2). y[row] = the sum is stored once (no y read, no second pass); pieces go to part slots
 * and a warp per split row stores their butterfly sum. Column-constant values (ones, PageRank) are
 * folded into x: xs = x * s once per product (skipped when every value is 1.0); otherwise a value per
 * slot. Included by hub_split_bench.cu (needs its Csr, upload, CK). */
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>

#define FUSED_THREADS 1024
#define FUSED_ROW_MAX 64

struct FusedDev {
  int K = 0, nslices = 0, nsplit = 0, nrows = 0, ncols = 0, grid[2] = {0, 0}, minb = 1;
  size_t smem = 0, slots = 0;
  int *slice_off = nullptr, *slice_len = nullptr, *slice_row = nullptr, *ent = nullptr, *split_row = nullptr,
      *split_first = nullptr, *hubcol = nullptr;
  double *val = nullptr, *colscale = nullptr, *xs = nullptr, *xhub = nullptr, *part = nullptr;
};

/* xs[j] = x[j] * s[j] */
__global__ void fused_scale_kernel(int n, const double *__restrict__ x, const double *__restrict__ s, double *__restrict__ xs) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n) xs[j] = __dmul_rn(x[j], s[j]);
}

__global__ void fused_stage_kernel(int K, const int *__restrict__ hubcol, const double *__restrict__ xg, double *__restrict__ xhub) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < K) xhub[k] = xg[hubcol[k]];
}

template <bool HAS_VAL, int BATCH, int MINB, bool GEN>
__global__ void __launch_bounds__(FUSED_THREADS, MINB)
fused_kernel(int nslices, const int *__restrict__ slice_off, const int *__restrict__ slice_len, const int *__restrict__ slice_row,
             const int *__restrict__ ent, const double *__restrict__ val, const double *__restrict__ xg,
             const double *__restrict__ xhub, int K, double *__restrict__ y, double *__restrict__ part) {
  extern __shared__ double s_x[];
  namespace cg = cooperative_groups;
  cg::thread_block block = cg::this_thread_block();
  if (K > 0) cg::memcpy_async(block, s_x, xhub, sizeof(double) * (size_t)K);
  if (threadIdx.x == 0) s_x[K] = 0.0;
  cg::wait(block);
  const int lane = threadIdx.x & 31, nw = gridDim.x * (FUSED_THREADS / 32);
  int sl = blockIdx.x * (FUSED_THREADS / 32) + (int)(threadIdx.x >> 5);
  int next_off = 0, next_len = 0;
  if (sl < nslices) next_off = slice_off[sl], next_len = slice_len[sl];
  for (; sl < nslices; sl += nw) {
    const int off = next_off + lane, len = next_len, row = slice_row[sl * 32 + lane];
    if (sl + nw < nslices) next_off = slice_off[sl + nw], next_len = slice_len[sl + nw];
    double s = 0.0;
    int j = 0;
    for (; j + BATCH <= len; j += BATCH) {
      int e[BATCH];
      double v[BATCH];
#pragma unroll
      for (int u = 0; u < BATCH; ++u) e[u] = ent[off + 32 * (j + u)];
#pragma unroll
      for (int u = 0; u < BATCH; ++u) v[u] = GEN ? *(e[u] < 0 ? s_x + ~e[u] : xg + e[u]) : e[u] < 0 ? s_x[~e[u]] : __ldg(xg + e[u]);
#pragma unroll
      for (int u = 0; u < BATCH; ++u) s += HAS_VAL ? __dmul_rn(val[off + 32 * (j + u)], v[u]) : v[u];
    }
    for (; j < len; ++j) {
      const int e = ent[off + 32 * j];
      const double v = GEN ? *(e < 0 ? s_x + ~e : xg + e) : e < 0 ? s_x[~e] : __ldg(xg + e);
      s += HAS_VAL ? __dmul_rn(val[off + 32 * j], v) : v;
    }
    if (row >= 0) y[row] = s;
    else if (row != INT_MIN) part[~row] = s;
  }
}

__global__ void fused_fixup_kernel(int nsplit, const int *__restrict__ split_row, const int *__restrict__ split_first,
                                   const double *__restrict__ part, double *y) {
  const int i = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (i >= nsplit) return;
  double s = 0.0;
  for (int q = split_first[i] + lane; q < split_first[i + 1]; q += 32) s += part[q];
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) s += __shfl_xor_sync(0xffffffffu, s, d);
  if (lane == 0) y[split_row[i]] = s;
}

template <bool HV, int B, int MB, bool GEN>
static void fused_launch(const FusedDev &F, const double *xg, double *y, int grid) {
  fused_kernel<HV, B, MB, GEN><<<grid, FUSED_THREADS, F.smem, g_stream>>>(F.nslices, F.slice_off, F.slice_len, F.slice_row, F.ent, F.val, xg,
                                                                     F.xhub, F.K, y, F.part);
}

template <bool HV, int B, int MB>
static int fused_grid(const FusedDev &F) {
  for (const void *f : {(const void *)fused_kernel<HV, B, MB, false>, (const void *)fused_kernel<HV, B, MB, true>})
    CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)F.smem));
  int per_sm = 0, nsm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fused_kernel<HV, B, MB, false>, FUSED_THREADS, F.smem));
  CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
  return std::max(1, per_sm) * nsm;
}

/* Build on the host from A and the hub columns (rank -> column, K of them). */
static FusedDev fused_build(const Csr &A, const int32_t *hubcol, int K) {
  FusedDev F;
  F.K = K, F.nrows = A.nrows, F.ncols = A.ncols;
  std::vector<int> rank((size_t)A.ncols, -1);
  for (int k = 0; k < K; ++k) rank[hubcol[k]] = k;
  /* values: all 1.0, column-constant, or plain */
  std::vector<double> cv((size_t)A.ncols, 0.0);
  std::vector<char> seen((size_t)A.ncols, 0);
  bool ones = true, colconst = true;
  for (size_t p = 0; p < A.col.size(); ++p) {
    const int c = A.col[p];
    const double v = A.val[p];
    if (v != 1.0) ones = false;
    if (!seen[c]) seen[c] = 1, cv[c] = v;
    else if (memcmp(&cv[c], &v, sizeof v)) colconst = false;
  }
  /* pseudo-rows: (row or ~part, first nonzero, length) */
  struct PR { int row, first, len; };
  std::vector<PR> prs;
  std::vector<int> split_row, split_first;
  int nparts = 0;
  for (int i = 0; i < A.nrows; ++i) {
    const int b = A.rowptr[i], L = A.rowptr[i + 1] - b;
    if (L <= FUSED_ROW_MAX) { prs.push_back({i, b, L}); continue; }
    split_row.push_back(i), split_first.push_back(nparts);
    for (int q = 0; q < L; q += FUSED_ROW_MAX) prs.push_back({~nparts++, b + q, std::min(FUSED_ROW_MAX, L - q)});
  }
  split_first.push_back(nparts);
  std::stable_sort(prs.begin(), prs.end(), [](const PR &a, const PR &b) { return a.len > b.len; });
  const int P = (int)prs.size(), ns = (P + 31) / 32;
  std::vector<int> soff((size_t)ns + 1, 0), slen((size_t)ns), srow((size_t)ns * 32, INT_MIN);
  for (int s = 0; s < ns; ++s) slen[s] = prs[(size_t)s * 32].len, soff[s + 1] = soff[s] + 32 * slen[s];
  std::vector<int> ent((size_t)soff[ns], ~K);
  std::vector<double> val(colconst ? 0 : (size_t)soff[ns], 0.0);
  for (int p = 0; p < P; ++p) {
    const int s = p / 32, l = p % 32;
    srow[p] = prs[p].row;
    for (int j = 0; j < prs[p].len; ++j) {
      const int q = prs[p].first + j, c = A.col[q];
      ent[(size_t)soff[s] + 32 * j + l] = rank[c] >= 0 ? ~rank[c] : c;
      if (!colconst) val[(size_t)soff[s] + 32 * j + l] = A.val[q];
    }
  }
  F.nslices = ns, F.nsplit = (int)split_row.size(), F.slots = (size_t)soff[ns];
  F.slice_off = upload(soff), F.slice_len = upload(slen), F.slice_row = upload(srow), F.ent = upload(ent);
  F.split_row = upload(split_row), F.split_first = upload(split_first);
  std::vector<int> hc(hubcol, hubcol + K);
  F.hubcol = upload(hc);
  if (!colconst) F.val = upload(val);
  if (colconst && !ones) F.colscale = upload(cv);
  CK(cudaMalloc(&F.xs, sizeof(double) * std::max(1, A.ncols)));
  CK(cudaMalloc(&F.xhub, sizeof(double) * std::max(1, K)));
  CK(cudaMalloc(&F.part, sizeof(double) * std::max(1, nparts)));
  F.smem = sizeof(double) * ((size_t)K + 1);
  F.minb = F.smem <= 110 * 1024 ? 2 : 1;
  const bool hv = !colconst;
  F.grid[0] = hv ? (F.minb == 2 ? fused_grid<true, 4, 2>(F) : fused_grid<true, 4, 1>(F))
                 : (F.minb == 2 ? fused_grid<false, 4, 2>(F) : fused_grid<false, 4, 1>(F));
  F.grid[1] = hv ? (F.minb == 2 ? fused_grid<true, 8, 2>(F) : fused_grid<true, 8, 1>(F))
                 : (F.minb == 2 ? fused_grid<false, 8, 2>(F) : fused_grid<false, 8, 1>(F));
  printf("  fused K %d: %d slices, padding %.1f%%, %d split rows, values %s, smem %zu B, %d blocks/SM wanted\n", K, ns,
         100.0 * ((double)F.slots - A.nnz()) / std::max(1, A.nnz()), F.nsplit, ones ? "ones" : colconst ? "column constants" : "plain",
         F.smem, F.minb);
  return F;
}

/* y = A x through F with B entries in flight per lane; GEN: one generic load per entry (shared or
 * global by its address) instead of a select between a shared and a global load */
template <int B, bool GEN>
static void fused_spmv(const FusedDev &F, const double *x, double *y) {
  const double *xg = x;
  if (F.colscale) {
    fused_scale_kernel<<<(F.ncols + 255) / 256, 256, 0, g_stream>>>(F.ncols, x, F.colscale, F.xs);
    xg = F.xs;
  }
  if (F.K) fused_stage_kernel<<<(F.K + 255) / 256, 256, 0, g_stream>>>(F.K, F.hubcol, xg, F.xhub);
  const int hv = F.val != nullptr, mb = F.minb == 2, g = F.grid[B == 8];
  if (!hv && !mb) fused_launch<false, B, 1, GEN>(F, xg, y, g);
  if (!hv && mb) fused_launch<false, B, 2, GEN>(F, xg, y, g);
  if (hv && !mb) fused_launch<true, B, 1, GEN>(F, xg, y, g);
  if (hv && mb) fused_launch<true, B, 2, GEN>(F, xg, y, g);
  if (F.nsplit) fused_fixup_kernel<<<(F.nsplit + 7) / 8, 256, 0, g_stream>>>(F.nsplit, F.split_row, F.split_first, F.part, y);
  CK(cudaGetLastError());
}

static void fused_free(FusedDev &F) {
  for (void *p : {(void *)F.slice_off, (void *)F.slice_len, (void *)F.slice_row, (void *)F.ent, (void *)F.split_row, (void *)F.split_first,
                  (void *)F.hubcol, (void *)F.val, (void *)F.colscale, (void *)F.xs, (void *)F.xhub, (void *)F.part})
    if (p) CK(cudaFree(p));
}
