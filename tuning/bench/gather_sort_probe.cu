/* gather_sort_probe - issue 42 probe: do x gathers get cheaper when each tile's nonzeros are sorted by
 * column (same-sector gathers of one warp instruction merge; L1 sees reuse close in time)?
 * Times (median of reps, CUDA events) for tiles of T consecutive nonzeros:
 *   floor:  every x[col[g]] gathered once, col streamed (hub_split_bench's gather floor);
 *   stage:  a block per tile: s_prod[pos[g]] = val[g] * x[col[g]] in shared memory (pos: the nonzero's
 *           place in row order), then the block sums s_prod in row order: the merge kernel's staging.
 * The stage sums are checked against the unsorted tile's (same products, same order: bitwise). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <numeric>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(2); } } while (0)
#include "event_timing.cuh"
extern "C" {
#include "io/mx_io.h"
}

__global__ void __launch_bounds__(256) floor_kernel(long long n, const int *__restrict__ col, const double *__restrict__ x, double *out) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  /* lane-contiguous: a warp reads 32 consecutive nonzeros per load */
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  double s = 0.0;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const int c0 = __ldcs(col + i), c1 = __ldcs(col + i + stride), c2 = __ldcs(col + i + 2 * stride), c3 = __ldcs(col + i + 3 * stride);
    s += __ldg(x + c0) + __ldg(x + c1) + __ldg(x + c2) + __ldg(x + c3);
  }
  for (; i < n; i += stride) s += __ldg(x + __ldcs(col + i));
  out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <int PER>
__global__ void stage_kernel(long long n, int T, const int *__restrict__ col, const double *__restrict__ val,
                             const unsigned short *__restrict__ pos, const double *__restrict__ x, double *out) {
  extern __shared__ double s_prod[];
  const long long t0 = (long long)blockIdx.x * T;
  const int len = (int)std::min<long long>(T, n - t0);
  for (int b = 0; b < len; b += PER * blockDim.x) {
    int c[PER], p[PER];
    double v[PER];
#pragma unroll
    for (int k = 0; k < PER; ++k) {
      const int g = b + k * blockDim.x + threadIdx.x;
      const bool in = g < len;
      c[k] = in ? __ldcs(col + t0 + g) : -1;
      v[k] = in ? __ldcs(val + t0 + g) : 0.0;
      p[k] = in ? (pos ? (int)__ldcs(pos + t0 + g) : g) : 0;
    }
#pragma unroll
    for (int k = 0; k < PER; ++k)
      if (c[k] >= 0) s_prod[p[k]] = v[k] * __ldg(x + c[k]);
  }
  __syncthreads();
  /* a thread sums a contiguous run in row order (fixed order) */
  const int per = (len + blockDim.x - 1) / blockDim.x;
  double s = 0.0;
  for (int g = threadIdx.x * per; g < std::min(len, (int)(threadIdx.x + 1) * per); ++g) s += s_prod[g];
  out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}

struct Tiles {
  std::vector<int> col;
  std::vector<double> val;
  std::vector<unsigned short> pos;
};

/* each tile of T nonzeros sorted by column (stable); pos = the place in row order */
static Tiles sort_tiles(const std::vector<int> &col, const std::vector<double> &val, long long T) {
  const long long n = (long long)col.size();
  Tiles r;
  r.col.resize(n), r.val.resize(n), r.pos.resize(n);
  std::vector<int> idx;
  for (long long t0 = 0; t0 < n; t0 += T) {
    const int len = (int)std::min(T, n - t0);
    idx.resize(len);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return col[t0 + a] < col[t0 + b]; });
    for (int k = 0; k < len; ++k) r.col[t0 + k] = col[t0 + idx[k]], r.val[t0 + k] = val[t0 + idx[k]], r.pos[t0 + k] = (unsigned short)idx[k];
  }
  return r;
}

template <class T>
static T *up(const std::vector<T> &v) {
  T *d;
  CK(cudaMalloc(&d, sizeof(T) * std::max<size_t>(1, v.size())));
  CK(cudaMemcpy(d, v.data(), sizeof(T) * v.size(), cudaMemcpyHostToDevice));
  return d;
}

int main(int argc, char **argv) {
  int reps = 50;
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  int nsm = 0;
  CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
  printf("matrix,tile,threads,sorted,floor_us,stage_us,stage_check\n");
  for (int a = 1; a < argc; ++a) {
    mx_io_csr A;
    char err[256];
    if (mx_gen(argv[a], 0, &A, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 1; }
    const long long n = A.nnz;
    std::vector<int> col(A.colidx, A.colidx + n);
    std::vector<double> val(n);
    for (long long i = 0; i < n; ++i) val[i] = 1.0 + (double)((i * 2654435761u) % 1000003) * 1e-6; /* unique-ish values */
    std::vector<double> hx(A.ncols);
    for (int j = 0; j < A.ncols; ++j) hx[j] = 0.5 + (double)((j * 40503u) % 65521) / 65521.0;
    double *dx = up(hx), *dout;
    CK(cudaMalloc(&dout, sizeof(double) * (size_t)std::max<long long>(n, 1 << 22)));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, floor_kernel, 256, 0));
    struct Cfg { int T, threads; };
    const Cfg cfgs[] = {{1190, 256}, {4760, 1024}, {9520, 1024}, {19040, 1024}};
    for (const Cfg &cf : cfgs) {
      const long long ntiles = (n + cf.T - 1) / cf.T;
      const size_t smem = sizeof(double) * cf.T;
      CK(cudaFuncSetAttribute(stage_kernel<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
      std::vector<double> ref;
      for (int sorted = 0; sorted < 2; ++sorted) {
        Tiles tl;
        if (sorted) tl = sort_tiles(col, val, cf.T);
        const int *dcol = up(sorted ? tl.col : col);
        const double *dval = up(sorted ? tl.val : val);
        const unsigned short *dpos = sorted ? up(tl.pos) : nullptr;
        const Timing tf = mx_time_calls(s, [&](int) { floor_kernel<<<nsm * per_sm, 256, 0, s>>>(n, dcol, dx, dout); }, 10, reps, 200);
        const Timing ts = mx_time_calls(s, [&](int) { stage_kernel<4><<<(unsigned)ntiles, cf.threads, smem, s>>>(n, cf.T, dcol, dval, dpos, dx, dout); }, 10, reps, 200);
        CK(cudaGetLastError());
        std::vector<double> got((size_t)ntiles * cf.threads);
        CK(cudaMemcpy(got.data(), dout, sizeof(double) * got.size(), cudaMemcpyDeviceToHost));
        const char *chk = "ref";
        if (!sorted) ref = got;
        else chk = memcmp(ref.data(), got.data(), sizeof(double) * got.size()) ? "DIFFERENT" : "bitwise";
        printf("%s,%d,%d,%d,%.1f,%.1f,%s\n", argv[a], cf.T, cf.threads, sorted, tf.med, ts.med, chk);
        fflush(stdout);
        CK(cudaFree((void *)dcol));
        CK(cudaFree((void *)dval));
        if (dpos) CK(cudaFree((void *)dpos));
      }
    }
    CK(cudaFree(dx));
    CK(cudaFree(dout));
    mx_io_csr_free(&A);
  }
  return 0;
}
