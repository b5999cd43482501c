/* mx_cold_decode.cuh - how the segment cold kernel reads nonzero g of the cold CSR: plain arrays or
 * the packed form (mx_cold_pack.h), decoded in registers.
 *
 * A decoder Dec gives, for the nonzero index g + off (off: a loop's stride, kept apart so that the
 * plain decoder forms the address as (col + g) + off, as the uncompressed kernel always did):
 *   col_at(col, g, off)  its column (col: the plain column array, read only by decoders that use it),
 *   raw_at(val, g, off)  what is stored per nonzero for its value (a double, a code, or nothing),
 *   value(raw, c)    its value from that and its column c.
 * The kernels issue every col_at/raw_at of a thread before any value()/x gather (as
 * mx_stage_products does), and multiply value(raw, c) * x[c], never fused with the sum: the same
 * double as val[g] * x[c] (bit-identical decoded values), in the same summation order, so the packed
 * kernel's y is bitwise the plain kernel's. COLCONST: the kernel is given xs (xs_c = s_c * x_c,
 * mx_cold_pack_dev_x, once per product) for x and the value is 1.0: 1.0 * xs_c == val[g] * x[c]
 * bitwise because s_c == val[g]. Column codes must be plain columns (no x-hot
 * codes) for the packed decoders: packing is off when x-hot codes the cold CSR. */
#ifndef MX_COLD_DECODE_CUH
#define MX_COLD_DECODE_CUH

#include <stdint.h>
#include "mx_kernel_common.cuh"
extern "C" {
#include "../core/mx_cold_pack.h"
}

/* streaming loads of the packed arrays (read once per SpMV, like the plain ones) */
#if MX_LOAD_STREAMING
__device__ __forceinline__ uint8_t mx_ld_stream_u8(const uint8_t *p) { return __ldcs(p); }
__device__ __forceinline__ uint16_t mx_ld_stream_u16(const uint16_t *p) { return __ldcs(p); }
#else
__device__ __forceinline__ uint8_t mx_ld_stream_u8(const uint8_t *p) { return __ldg(p); }
__device__ __forceinline__ uint16_t mx_ld_stream_u16(const uint16_t *p) { return __ldg(p); }
#endif

/* The plain cold CSR: exactly the loads of mx_stage_products (the uncompressed kernel). */
struct mx_dec_plain {
  typedef double raw_t;
  __device__ __forceinline__ int col_at(const int *__restrict__ col, int g, int off = 0) const {
    return mx_ld_stream(col + g + off);
  }
  __device__ __forceinline__ double raw_at(const double *__restrict__ val, int g, int off = 0) const {
    return mx_ld_stream(val + g + off);
  }
  __device__ __forceinline__ double value(double r, int) const { return r; }
};

/* per-nonzero value storage of value encoding VE */
template <int VE> struct mx_raw_of { typedef uint8_t type; };  /* DICT0, COLCONST: nothing (a dummy byte) */
template <> struct mx_raw_of<MX_VAL_PLAIN> { typedef double type; };
template <> struct mx_raw_of<MX_VAL_DICT16> { typedef uint16_t type; };

/* The packed form: value encoding VE (mx_val_enc), column encoding IE (mx_idx_enc). Plain parts are
 * read from the plain arrays the kernel is given (cold_col / cold_val); the packed parts from here.
 * The segment base is the same for the 32 lanes of a warp load (g >> 5 is warp-uniform there): one
 * broadcast transaction. Dictionaries go through the read-only cache (__ldg): they are small. */
template <int VE, int IE>
struct mx_dec_pack {
  typedef typename mx_raw_of<VE>::type raw_t;
  const int *seg_base;
  const uint8_t *delta8;
  const uint16_t *delta16;
  const uint8_t *code8;
  const uint16_t *code16;
  const double *dict; /* DICT*: ndict entries (COLCONST: unread, the constants are in xs) */

  __device__ __forceinline__ int col_at(const int *__restrict__ col, int g0, int off = 0) const {
    const int g = g0 + off;
    if (IE == MX_IDX_DELTA8) return __ldg(seg_base + (g >> 5)) + (int)mx_ld_stream_u8(delta8 + g);
    if (IE == MX_IDX_DELTA16) return __ldg(seg_base + (g >> 5)) + (int)mx_ld_stream_u16(delta16 + g);
    return mx_ld_stream(col + g);
  }
  __device__ __forceinline__ raw_t raw_at(const double *__restrict__ val, int g0, int off = 0) const {
    const int g = g0 + off;
    if (VE == MX_VAL_PLAIN) return (raw_t)mx_ld_stream(val + g);
    if (VE == MX_VAL_DICT8) return (raw_t)mx_ld_stream_u8(code8 + g);
    if (VE == MX_VAL_DICT16) return (raw_t)mx_ld_stream_u16(code16 + g);
    return (raw_t)0;
  }
  __device__ __forceinline__ double value(raw_t r, int c) const {
    if (VE == MX_VAL_PLAIN) return (double)r;
    if (VE == MX_VAL_DICT0) return __ldg(dict);
    if (VE == MX_VAL_COLCONST) return 1.0; /* x is xs: the column constant is in it */
    return __ldg(dict + (int)r); /* DICT8, DICT16 */
  }
};

/* mx_stage_products (mx_kernel_common.cuh) through a decoder: prod[i] = value(i) * x[col(i)] for
 * i < s1-s0 <= THREADS*PER, thread t handling i = j*THREADS+t, all loads before the first
 * multiply. With mx_dec_plain it is mx_stage_products, load for load. */
template <int THREADS, int PER, int XH, class Dec>
__device__ __forceinline__ void mx_stage_products_dec(const Dec &dec, const int *__restrict__ col,
                                                      const double *__restrict__ val, const double *__restrict__ x,
                                                      const double *__restrict__ xhot, int s0, int s1, double *prod) {
  int c[PER];
  typename Dec::raw_t v[PER];
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const int g = s0 + i * THREADS + (int)threadIdx.x;
    c[i] = g < s1 ? dec.col_at(col, g) : -1;
    v[i] = g < s1 ? dec.raw_at(val, g) : (typename Dec::raw_t)0;
  }
#pragma unroll
  for (int i = 0; i < PER; ++i)
    if (c[i] != -1) prod[i * THREADS + threadIdx.x] = dec.value(v[i], c[i]) * mx_ld_xc<XH>(x, xhot, c[i]);
}

/* mx_stage_products_aligned (mx_kernel_common.cuh: a range that starts anywhere, warp loads from the
 * 32-element boundary a0 = s0 & ~31, prod[g - s0] receives element g) through a decoder, x-hot off:
 * the merge kernel's staging. Warp loads stay 32-aligned, so a packed segment base is one broadcast
 * per warp load. The same products as the plain staging, bit for bit. */
template <int THREADS, int PER, class Dec>
__device__ __forceinline__ void mx_stage_products_aligned_dec(const Dec &dec, const int *__restrict__ col,
                                                              const double *__restrict__ val,
                                                              const double *__restrict__ x, int s0, int s1,
                                                              double *prod) {
  const int a0 = s0 & ~31;
  int c[PER];
  typename Dec::raw_t v[PER];
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const int g = a0 + i * THREADS + (int)threadIdx.x;
    const bool in = g >= s0 && g < s1;
    c[i] = in ? dec.col_at(col, g) : -1;
    v[i] = in ? dec.raw_at(val, g) : (typename Dec::raw_t)0;
  }
#pragma unroll
  for (int i = 0; i < PER; ++i)
    if (c[i] != -1) prod[a0 + i * THREADS + (int)threadIdx.x - s0] = dec.value(v[i], c[i]) * mx_ld_x(x, c[i]);
  const int g = a0 + THREADS * PER + (int)threadIdx.x;
  if (g < s1) {
    const int cg = dec.col_at(col, g);
    prod[g - s0] = dec.value(dec.raw_at(val, g), cg) * mx_ld_x(x, cg);
  }
}

#endif
