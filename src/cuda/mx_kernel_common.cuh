/* mx_kernel_common.cuh - small device functions shared by the kernels (loads, warp sums, mma). */
#ifndef MX_KERNEL_COMMON_CUH
#define MX_KERNEL_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include "mx_tuning.h"

#define MX_FULL_MASK 0xffffffffu

/* Matrix arrays are read once per SpMV: stream them (evict-first) so x keeps its place in L2. */
#if MX_LOAD_STREAMING
__device__ __forceinline__ int mx_ld_stream(const int *p) { return __ldcs(p); }
__device__ __forceinline__ double mx_ld_stream(const double *p) { return __ldcs(p); }
__device__ __forceinline__ uint32_t mx_ld_stream(const uint32_t *p) { return __ldcs(p); }
#else
__device__ __forceinline__ int mx_ld_stream(const int *p) { return __ldg(p); }
__device__ __forceinline__ double mx_ld_stream(const double *p) { return __ldg(p); }
__device__ __forceinline__ uint32_t mx_ld_stream(const uint32_t *p) { return __ldg(p); }
#endif
/* x is gathered: read-only path, default caching. */
__device__ __forceinline__ double mx_ld_x(const double *x, int c) { return __ldg(x + c); }

/* Threads t = threadIdx.x ask L2 for the 128-byte lines t, t + blockDim.x, ... of the n elements at p
 * (a hint: nothing waits for it, nothing is read into registers). */
template <class T>
__device__ __forceinline__ void mx_prefetch_l2(const T *p, long long n) {
  if (!p || n <= 0) return;
  const char *b = (const char *)p, *e = (const char *)(p + n);
  const char *first = (const char *)((uintptr_t)b & ~(uintptr_t)127);
  for (const char *l = first + 128 * (long long)threadIdx.x; l < e; l += 128 * (long long)blockDim.x)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(l));
}

/* x-hot cache modes (mx_xhot.cu): 0 off; 1 on. 2: no x-hot, the SpMM's pairs in place (double2
 * only, mx_spmm_pair.cu): x is column j of B and xhot column j + 1, each read as doubles (never
 * dereferenced as pairs: the columns need not be 16-byte aligned). */
#define MX_XH_OFF 0
#define MX_XH_ON 1
#define MX_XH_TWO_COLS 2
/* Column code of a stored nonzero: c >= 0 an original column of x; c <= -2 rank -2-c in xhot (the
 * packed hot values); -1 is never a stored column (padding; it maps to xhot[0], harmless). The
 * address is computed without a branch and read by one load: a branch per nonzero kept ptxas from
 * issuing a thread's PER gathers before the first use (docs/performance.md, "Cold kernels"). */
template <class T>
__device__ __forceinline__ const T *mx_xc_addr(const T *x, const T *xhot, int c) {
  const unsigned long long ux = (unsigned long long)x, uh = (unsigned long long)xhot;
  const unsigned long long base = uh + (ux - uh) * (unsigned long long)(c >= 0);
  const int idx = max(max(c, -2 - c), 0);
  return (const T *)(base + sizeof(T) * (unsigned long long)idx);
}
template <int XH>
__device__ __forceinline__ double mx_ld_xc(const double *__restrict__ x, const double *__restrict__ xhot, int c) {
  static_assert(XH != MX_XH_TWO_COLS, "two columns are read as pairs (double2)");
  if (XH == MX_XH_OFF) return mx_ld_x(x, c);
  return __ldg(mx_xc_addr(x, xhot, c));
}

/* Two columns at once: the SpMM's pairs (mx_spmm_pair.cu) run the segment kernel and the SE hot
 * kernel on double2 values, column j in .x and column j + 1 in .y. Every operation is the double one
 * on each component, so each column's sums are the one-column kernel's, bit for bit. */
__device__ __forceinline__ double2 operator+(double2 a, double2 b) { return make_double2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ double2 &operator+=(double2 &a, double2 b) {
  a.x += b.x;
  a.y += b.y;
  return a;
}
__device__ __forceinline__ double2 operator*(double a, double2 b) { return make_double2(a * b.x, a * b.y); }
/* a product rounded on its own (never fused into a sum) */
__device__ __forceinline__ double mx_mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double2 mx_mul_rn(double a, double2 b) { return make_double2(__dmul_rn(a, b.x), __dmul_rn(a, b.y)); }
/* a sum rounded on its own (never fused with the product before it) */
__device__ __forceinline__ double mx_add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double2 mx_add_rn(double2 a, double2 b) { return make_double2(__dadd_rn(a.x, b.x), __dadd_rn(a.y, b.y)); }
__device__ __forceinline__ double mx_shfl_xor(double v, int off) { return __shfl_xor_sync(MX_FULL_MASK, v, off); }
__device__ __forceinline__ double2 mx_shfl_xor(double2 v, int off) {
  return make_double2(__shfl_xor_sync(MX_FULL_MASK, v.x, off), __shfl_xor_sync(MX_FULL_MASK, v.y, off));
}
template <class V> __device__ __forceinline__ V mx_zero();
template <> __device__ __forceinline__ double mx_zero<double>() { return 0.0; }
template <> __device__ __forceinline__ double2 mx_zero<double2>() { return make_double2(0.0, 0.0); }
__device__ __forceinline__ double2 mx_ld_x(const double2 *x, int c) { return __ldg(x + c); }
template <int XH>
__device__ __forceinline__ double2 mx_ld_xc(const double2 *__restrict__ x, const double2 *__restrict__ xhot, int c) {
  if (XH == MX_XH_OFF) return mx_ld_x(x, c);
  if (XH == MX_XH_TWO_COLS) return make_double2(__ldg((const double *)x + c), __ldg((const double *)xhot + c));
  return __ldg(mx_xc_addr(x, xhot, c));
}

/* A stored column code as an original column: >= 0 itself, -1 padding (stays -1), <= -2 x-hot rank
 * -2-c (the SpMM reads B, never the x-hot buffer). */
__device__ __forceinline__ int mx_col_original(int c, const int *__restrict__ xhot_col) {
  return c >= -1 ? c : __ldg(xhot_col + (-2 - c));
}

/* prod[i] = val[s0+i] * x[col[s0+i]] for i < s1-s0 <= THREADS*PER: thread t handles i = j*THREADS+t
 * (coalesced loads, conflict-free shared stores; paper Alg. 2 lines 4-8). All loads of a thread are
 * issued before its first multiply, so PER gathers of x are in flight at once. Column codes as in
 * mx_ld_xc (-1 marks "past s1": never a stored code). */
template <int THREADS, int PER, int XH>
__device__ __forceinline__ void mx_stage_products(const int *__restrict__ col, const double *__restrict__ val,
                                                  const double *__restrict__ x, const double *__restrict__ xhot,
                                                  int s0, int s1, double *prod) {
  int c[PER];
  double v[PER];
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const int g = s0 + i * THREADS + (int)threadIdx.x;
    c[i] = g < s1 ? mx_ld_stream(col + g) : -1;
    v[i] = g < s1 ? mx_ld_stream(val + g) : 0.0;
  }
#pragma unroll
  for (int i = 0; i < PER; ++i)
    if (c[i] != -1) prod[i * THREADS + threadIdx.x] = v[i] * mx_ld_xc<XH>(x, xhot, c[i]);
}

/* The same products for a range that starts anywhere (merge tiles do): warp loads start on a
 * 32-element boundary a0 = s0 & ~31 (one 128-byte line of col, two of val per warp load, not two
 * and three), lanes before s0 or past s1 stay idle; prod[g - s0] receives element g. The loads of
 * [a0, a0 + THREADS*PER) are batched as in mx_stage_products; what is left past them (s0 - a0 <= 31
 * elements at most) is done by the first warp. Needs s1 - s0 <= THREADS*PER. */
template <int THREADS, int PER, int XH>
__device__ __forceinline__ void mx_stage_products_aligned(const int *__restrict__ col, const double *__restrict__ val,
                                                          const double *__restrict__ x, const double *__restrict__ xhot,
                                                          int s0, int s1, double *prod) {
  const int a0 = s0 & ~31;
  int c[PER];
  double v[PER];
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const int g = a0 + i * THREADS + (int)threadIdx.x;
    const bool in = g >= s0 && g < s1;
    c[i] = in ? mx_ld_stream(col + g) : -1;
    v[i] = in ? mx_ld_stream(val + g) : 0.0;
  }
#pragma unroll
  for (int i = 0; i < PER; ++i)
    if (c[i] != -1) prod[a0 + i * THREADS + (int)threadIdx.x - s0] = v[i] * mx_ld_xc<XH>(x, xhot, c[i]);
  const int g = a0 + THREADS * PER + (int)threadIdx.x;
  if (g < s1) prod[g - s0] = mx_ld_stream(val + g) * mx_ld_xc<XH>(x, xhot, mx_ld_stream(col + g));
}

/* Sum over aligned lane groups of size g (power of two <= 32) by a fixed butterfly: every lane of
 * the group ends with the same bits, independent of timing. All 32 lanes must call it. */
__device__ __forceinline__ double mx_group_sum(double v, int g) {
  for (int off = g >> 1; off > 0; off >>= 1) v += __shfl_xor_sync(MX_FULL_MASK, v, off);
  return v;
}

__device__ __forceinline__ double2 mx_group_sum(double2 v, int g) {
  for (int off = g >> 1; off > 0; off >>= 1) {
    v.x += __shfl_xor_sync(MX_FULL_MASK, v.x, off);
    v.y += __shfl_xor_sync(MX_FULL_MASK, v.y, off);
  }
  return v;
}

/* Block-wide sum in a fixed order (warp butterflies, then warp 0 adds the warp sums in order).
 * red must hold blockDim.x/32 values. Result valid in thread 0. All threads must call it. */
template <class V>
__device__ __forceinline__ V mx_block_sum(V v, V *red) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = mx_group_sum(v, 32);
  if (lane == 0) red[warp] = v;
  __syncthreads();
  V s = mx_zero<V>();
  if (threadIdx.x == 0)
    for (int w = 0; w < nw; ++w) s += red[w];
  return s;
}

/* A double passed from one block to another in one 64-bit slot: the value is the message, with no
 * flag and no fence. The slot holds the value's bits XOR MX_SLOT_EMPTY, so 0 means "not yet
 * published" and a zeroed array is empty. MX_SLOT_EMPTY is a signalling NaN, which no sum or
 * product produces (arithmetic returns quiet NaNs): a published value never reads as 0. The reader
 * sets the slot back to 0. Loads and stores are relaxed at GPU scope: coherent in L2, no L1. */
#define MX_SLOT_EMPTY 0x7ff4000000000001ull

__device__ __forceinline__ unsigned long long mx_slot_load(const unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void mx_slot_publish(unsigned long long *p, double v) {
  const unsigned long long b = (unsigned long long)__double_as_longlong(v) ^ MX_SLOT_EMPTY;
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(b) : "memory");
}

/* the value in *p, from seen (an earlier load of it) or polled until published; then *p = 0 */
__device__ __forceinline__ double mx_slot_wait(unsigned long long *p, unsigned long long seen) {
  while (seen == 0) {
    __nanosleep(32);
    seen = mx_slot_load(p);
  }
  *p = 0;
  return __longlong_as_double((long long)(seen ^ MX_SLOT_EMPTY));
}

/* the value in *p, polled until published; then *p = 0 */
__device__ __forceinline__ double mx_slot_take(unsigned long long *p) { return mx_slot_wait(p, mx_slot_load(p)); }

/* D(8x8) += A(8x4) * B(4x8) in FP64 on the tensor cores. Fragments (PTX ISA, m8n8k4 .f64):
 * a: A[lane>>2][lane&3]; b: B[lane&3][lane>>2]; d0,d1: D[lane>>2][2*(lane&3)+{0,1}]. */
__device__ __forceinline__ void mx_mma_m8n8k4(double &d0, double &d1, double a, double b) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
               : "+d"(d0), "+d"(d1)
               : "d"(a), "d"(b));
}

/* Programmatic dependent launch (compute capability 9.0; mx_launch_pdl, mx_device_impl.h):
 * mx_pdl_trigger lets the stream's next kernel, where it is launched with the attribute, be
 * scheduled before this one ends; mx_pdl_wait waits until the stream's previous kernel has
 * completed and its writes are visible. A kernel so launched calls mx_pdl_wait before it touches
 * memory a kernel before it writes, or writes memory one reads. Both do nothing in a kernel launched
 * without the attribute. */
__device__ __forceinline__ void mx_pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void mx_pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

#endif
