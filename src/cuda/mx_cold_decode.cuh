/* mx_cold_decode.cuh - how the segment cold kernel reads nonzero g of the cold CSR: plain arrays or
 * the packed form (mx_cold_pack.h), decoded in registers.
 *
 * A decoder Dec gives, for the nonzero index g + off (off: a loop's stride, kept apart so that the
 * plain decoder forms the address as (col + g) + off, as the uncompressed kernel always did):
 *   col_at(col, g, off)  its column (col: the plain column array, read only by decoders that use it),
 *   raw_at(val, g, off)  what is stored per nonzero for its value (a double, a code, or nothing),
 *   value(raw, c)    its value from that and its column c;
 *   row_at(rowptr, r) row pointer r (rowptr: the plain row pointers, read only by decoders that use them);
 *   prefetch_l2(rowptr, col, val, g0, g1, r0, r1)  asks L2 for what nonzeros [g0, g1) and row
 *                    pointers r0 .. r1 are read from (MX_SEG_L2_AHEAD: a tuning A/B, off by default);
 * the packed decoders also give cols8 / raws8: col_at / raw_at of 8 aligned nonzeros by vector
 * loads, in a pair order (mx_stage_products_vec8).
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
/* ... and their vector loads (V: uint2, uint4, int4, double2; p aligned to sizeof(V)) */
template <class V> __device__ __forceinline__ V mx_ld_stream_vec(const V *p) {
#if MX_LOAD_STREAMING
  return __ldcs(p);
#else
  return __ldg(p);
#endif
}

/* the 8 bytes of w in memory order, zero-extended (one byte permute each) */
__device__ __forceinline__ void mx_unpack8(uint2 w, unsigned (&o)[8]) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    o[j] = __byte_perm(w.x, 0u, 0x4440u + j);
    o[4 + j] = __byte_perm(w.y, 0u, 0x4440u + j);
  }
}
/* the 8 16-bit halves of w in memory order, zero-extended */
__device__ __forceinline__ void mx_unpack8(uint4 w, unsigned (&o)[8]) {
  const unsigned u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    o[2 * j] = u[j] & 0xffffu;
    o[2 * j + 1] = u[j] >> 16;
  }
}
/* w with its four 16-bit units reordered: unit m of the result is unit m ^ r of w (r < 4; units in
 * memory order): a halves swap per word, then a words swap */
__device__ __forceinline__ uint2 mx_xor_units(uint2 w, unsigned r) {
  const unsigned sel = (r & 1) ? 0x1032u : 0x3210u;
  const unsigned a = __byte_perm(w.x, 0u, sel), b = __byte_perm(w.y, 0u, sel);
  return (r & 2) ? make_uint2(b, a) : make_uint2(a, b);
}
/* w with its four 32-bit words reordered: word m of the result is word m ^ r of w (r < 4) */
__device__ __forceinline__ uint4 mx_xor_units(uint4 w, unsigned r) {
  const bool s1 = r & 1, s2 = r & 2;
  const unsigned a0 = s1 ? w.y : w.x, a1 = s1 ? w.x : w.y, a2 = s1 ? w.w : w.z, a3 = s1 ? w.z : w.w;
  return make_uint4(s2 ? a2 : a0, s2 ? a3 : a1, s2 ? a0 : a2, s2 ? a1 : a3);
}

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
  __device__ __forceinline__ int row_at(const int *__restrict__ rowptr, int r) const { return rowptr[r]; }
  __device__ __forceinline__ void prefetch_l2(const int *rowptr, const int *col, const double *val, int g0, int g1, int r0,
                                              int r1) const {
    mx_prefetch_l2(val + g0, g1 - g0);
    mx_prefetch_l2(col + g0, g1 - g0);
    mx_prefetch_l2(rowptr + r0, r1 - r0 + 1);
  }
};

/* per-nonzero value storage of value encoding VE */
template <int VE> struct mx_raw_of { typedef uint8_t type; };  /* DICT0, COLCONST: nothing (a dummy byte) */
template <> struct mx_raw_of<MX_VAL_PLAIN> { typedef double type; };
template <> struct mx_raw_of<MX_VAL_DICT16> { typedef uint16_t type; };
/* ... and as the vector decode gives it: codes zero-extended to 32 bits (a dictionary index then
 * needs no truncation to 8 or 16 bits first: 3 fewer instructions per nonzero under DICT8) */
template <int VE> struct mx_raw8_of { typedef unsigned type; };
template <> struct mx_raw8_of<MX_VAL_PLAIN> { typedef double type; };

/* The packed form: value encoding VE (mx_val_enc), column encoding IE (mx_idx_enc). Plain parts are
 * read from the plain arrays the kernel is given (cold_col / cold_val); the packed parts from here.
 * The segment base is the same for the 32 lanes of a warp load (g >> 5 is warp-uniform there): one
 * broadcast transaction. Dictionaries go through the read-only cache (__ldg): they are small. */
template <int VE, int IE>
struct mx_dec_pack {
  typedef typename mx_raw_of<VE>::type raw_t;
  typedef typename mx_raw8_of<VE>::type raw8_t; /* raws8's */
  const int *seg_base;
  const uint8_t *delta8;
  const uint16_t *delta16;
  const uint8_t *code8;
  const uint16_t *code16;
  const double *dict; /* DICT*: ndict entries (COLCONST: unread, the constants are in xs) */
  const int *row_base;     /* MX_ROW_OFF16: a base per MX_PACK_RCHUNK row pointers ... */
  const uint16_t *row_off; /* ... and an offset per row pointer; NULL: the plain row pointers */

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
  template <class R> /* raw_t or raw8_t */
  __device__ __forceinline__ double value(R r, int c) const {
    if (VE == MX_VAL_PLAIN) return (double)r;
    if (VE == MX_VAL_DICT0) return __ldg(dict);
    if (VE == MX_VAL_COLCONST) return 1.0; /* x is xs: the column constant is in it */
    return __ldg(dict + (int)r); /* DICT8, DICT16 */
  }
  /* the row encoding is a runtime choice (a grid-uniform branch, about one row pointer per thread):
   * a template parameter would double the packed kernels' instantiations. OFF16 is forced only
   * (mx_cold_pack.h says why: with streaming loads on an H100 and with these read-only-cache loads
   * on an H200 both, the kernels read it slower than plain row pointers) */
  __device__ __forceinline__ int row_at(const int *__restrict__ rowptr, int r) const {
    if (row_off) return __ldg(row_base + (unsigned)r / MX_PACK_RCHUNK) + (int)__ldg(row_off + r);
    return rowptr[r];
  }
  __device__ __forceinline__ void prefetch_l2(const int *rowptr, const int *col, const double *val, int g0, int g1, int r0,
                                              int r1) const {
    const int n = g1 - g0, s0 = g0 / MX_PACK_SEG, ns = n > 0 ? (g1 - 1) / MX_PACK_SEG - s0 + 1 : 0;
    if (VE == MX_VAL_PLAIN) mx_prefetch_l2(val + g0, n);
    if (VE == MX_VAL_DICT8) mx_prefetch_l2(code8 + g0, n);
    if (VE == MX_VAL_DICT16) mx_prefetch_l2(code16 + g0, n);
    if (IE == MX_IDX_PLAIN) mx_prefetch_l2(col + g0, n);
    if (IE == MX_IDX_DELTA8) mx_prefetch_l2(delta8 + g0, n), mx_prefetch_l2(seg_base + s0, ns);
    if (IE == MX_IDX_DELTA16) mx_prefetch_l2(delta16 + g0, n), mx_prefetch_l2(seg_base + s0, ns);
    if (row_off)
      mx_prefetch_l2(row_off + r0, r1 - r0 + 1), mx_prefetch_l2(row_base + r0 / MX_PACK_RCHUNK, r1 / MX_PACK_RCHUNK - r0 / MX_PACK_RCHUNK + 1);
    else mx_prefetch_l2(rowptr + r0, r1 - r0 + 1);
  }

  /* col_at / raw_at of the 8 nonzeros g .. g+7 at once, in pair order r (r < 4): element 2m + e is
   * nonzero g + 2 (m ^ r) + e (mx_stage_products_vec8 says why). g is a multiple of 8 and g + 8 <=
   * cold_nnz (the arrays are not padded). One vector load per packed array (8 bytes of delta8 /
   * code8, 16 of delta16 / code16: aligned, the arrays being cudaMalloc'd) reordered in registers,
   * the plain arrays by 16-byte loads in pair order where they can, and one segment base: 8 aligned
   * nonzeros lie in one MX_PACK_SEG segment. */
  __device__ __forceinline__ void cols8(const int *__restrict__ col, int g, unsigned r, int (&c)[8]) const {
    static_assert(MX_PACK_SEG % 8 == 0, "8 aligned nonzeros share one segment base");
    if constexpr (IE == MX_IDX_PLAIN) { /* halves in order r >> 1, pairs within a half by r & 1 */
      const int4 *p = (const int4 *)(col + g);
      const int4 a = mx_ld_stream_vec(p + (r >> 1)), b = mx_ld_stream_vec(p + ((r >> 1) ^ 1));
      const bool s = r & 1;
      const int u[8] = {s ? a.z : a.x, s ? a.w : a.y, s ? a.x : a.z, s ? a.y : a.w,
                        s ? b.z : b.x, s ? b.w : b.y, s ? b.x : b.z, s ? b.y : b.w};
#pragma unroll
      for (int j = 0; j < 8; ++j) c[j] = u[j];
    } else {
      unsigned d[8];
      if constexpr (IE == MX_IDX_DELTA8) mx_unpack8(mx_xor_units(mx_ld_stream_vec((const uint2 *)(delta8 + g)), r), d);
      else mx_unpack8(mx_xor_units(mx_ld_stream_vec((const uint4 *)(delta16 + g)), r), d);
      const int base = __ldg(seg_base + (g >> 5));
#pragma unroll
      for (int j = 0; j < 8; ++j) c[j] = base + (int)d[j];
    }
  }
  __device__ __forceinline__ void raws8(const double *__restrict__ val, int g, unsigned r, raw8_t (&v)[8]) const {
    if constexpr (VE == MX_VAL_PLAIN) { /* a pair is a double2: loaded in pair order */
#pragma unroll
      for (int m = 0; m < 4; ++m) {
        const double2 p = mx_ld_stream_vec((const double2 *)(val + g) + (m ^ r));
        v[2 * m] = p.x;
        v[2 * m + 1] = p.y;
      }
    } else if constexpr (VE == MX_VAL_DICT8) {
      mx_unpack8(mx_xor_units(mx_ld_stream_vec((const uint2 *)(code8 + g)), r), v);
    } else if constexpr (VE == MX_VAL_DICT16) {
      mx_unpack8(mx_xor_units(mx_ld_stream_vec((const uint4 *)(code16 + g)), r), v);
    } else {
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] = 0u; /* DICT0, COLCONST: nothing stored */
    }
  }
};

/* mx_stage_products (mx_kernel_common.cuh) through a decoder: prod[i] = value(i) * x[col(i)] for
 * i < s1-s0 <= THREADS*PER, thread t handling i = j*THREADS+t, all loads before the first
 * multiply. With mx_dec_plain it is mx_stage_products, load for load. V: double, or double2 for
 * two columns (x a row-major pair of columns, x-hot off). */
template <int THREADS, int PER, int XH, class Dec, class V>
__device__ __forceinline__ void mx_stage_products_dec(const Dec &dec, const int *__restrict__ col,
                                                      const double *__restrict__ val, const V *__restrict__ x,
                                                      const V *__restrict__ xhot, int s0, int s1, V *prod) {
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

/* *slot = value(g) * x[col(g)] for one nonzero g by scalar loads (value before column) */
template <int XH, class Dec, class V>
__device__ __forceinline__ void mx_stage_product_at(const Dec &dec, const int *__restrict__ col,
                                                    const double *__restrict__ val, const V *__restrict__ x,
                                                    const V *__restrict__ xhot, int g, V *slot) {
  const typename Dec::raw_t v = dec.raw_at(val, g);
  const int c = dec.col_at(col, g);
  *slot = dec.value(v, c) * mx_ld_xc<XH>(x, xhot, c);
}

/* prod[i] = value(i) * x[col(i)] for i < s1-s0 <= 8*blockDim.x, s0 a multiple of 8, prod 16-byte
 * aligned: the products of mx_stage_products_dec, bit for bit, in the same (linear) slots. Thread t
 * handles the 8 consecutive i = 8t .. 8t+7: by the decoder's vector loads (cols8, raws8: a few load
 * instructions per 8 products, all before the first gather) when all 8 lie below s1, one by one
 * otherwise (only the group that s1 cuts: the arrays end at cold_nnz). The vector path stores its
 * products as 4 pairs by 16-byte stores, pair m ^ r at store m (r = (t >> 1) & 3, the pair order
 * the decoder delivers them in): the 8 threads of a quarter warp then hit the 8 different 16-byte
 * bank groups 4 (t & 1) + (m ^ r), no bank conflict, where pairs in order (64 bytes apart per
 * thread) would be a 4-way conflict and single products a 16-way one. */
template <int XH, class Dec>
__device__ __forceinline__ void mx_stage_products_vec8(const Dec &dec, const int *__restrict__ col,
                                                       const double *__restrict__ val, const double *__restrict__ x,
                                                       const double *__restrict__ xhot, int s0, int s1, double *prod) {
  const int i0 = 8 * (int)threadIdx.x, g0 = s0 + i0;
  if (g0 + 8 <= s1) {
    const unsigned r = (threadIdx.x >> 1) & 3;
    int c[8];
    typename Dec::raw8_t v[8];
    dec.cols8(col, g0, r, c);
    dec.raws8(val, g0, r, v);
    double2 *pairs = (double2 *)prod + 4 * threadIdx.x; /* prod is 16-byte aligned */
#pragma unroll
    for (int m = 0; m < 4; ++m)
      pairs[m ^ r] = make_double2(dec.value(v[2 * m], c[2 * m]) * mx_ld_xc<XH>(x, xhot, c[2 * m]),
                                  dec.value(v[2 * m + 1], c[2 * m + 1]) * mx_ld_xc<XH>(x, xhot, c[2 * m + 1]));
  } else {
#pragma unroll 1 /* one group per block at most: keep it small */
    for (int j = 0; j < 8 && g0 + j < s1; ++j) mx_stage_product_at<XH>(dec, col, val, x, xhot, g0 + j, prod + i0 + j);
  }
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
