/* mx_spmm.cu - C = A B for k dense columns on the GPU (issue 43): the cold CSR on the CUDA cores
 * with a register block of B columns per pass, a DU hot region on the FP64 tensor cores with
 * 8-column slabs of B, an SE hot region on the CUDA cores (on the row-major panels where the cold
 * part runs on them). Which of them run for a k, and how, is mx_spmm_ways.cu's (the plan, the ways,
 * the timed choice); the launches it calls are declared in mx_spmm_impl.h.
 *
 * Order and ownership (no floating-point atomics, results bitwise reproducible run to run): the cold
 * kernel writes every row of C (C = cold B); the hot kernel then adds into C at hot_row, each hot
 * row owned by one warp per 8-column slab. A column of C is not bitwise the SpMV of that column
 * (other summation orders); it agrees within rounding (tests: relative error <= 1e-12). */
#include "mx_device_impl.h"
#include "mx_kernel_common.cuh"
#include "mx_spmm_impl.h"

/* ---- cold: W lanes per row, KB columns of B per pass ------------------------------------------- */

/* Row r = (global thread) / W; its W lanes stride over the row's nonzeros, MX_SPMM_UNROLL at a time
 * (their columns and values loaded before any B gather: loads in flight), each lane accumulating KB
 * columns in registers in nonzero order; a fixed butterfly then sums the lanes and lane u % W writes
 * column u. A row's nonzeros are read once per pass of KB columns (the later passes from L1/L2).
 * Rows longer than long_t are left to the pieces (spmm_piece; not written here). Every lane of every warp
 * reaches the butterfly (rows past nrows or long have no nonzeros here). */
template <int KB>
__device__ __forceinline__ void spmm_row_chunk(int p, int p1, int W, const int *__restrict__ col, const double *__restrict__ val,
                                               const int *__restrict__ xhot_col, const double *__restrict__ Bj, long long ldb,
                                               int kb, double (&acc)[KB]) {
  int c[MX_SPMM_UNROLL];
  double v[MX_SPMM_UNROLL];
#pragma unroll
  for (int i = 0; i < MX_SPMM_UNROLL; ++i) {
    const int q = p + i * W;
    c[i] = q < p1 ? mx_col_original(__ldg(col + q), xhot_col) : -1;
    v[i] = q < p1 ? __ldg(val + q) : 0.0;
  }
#pragma unroll
  for (int i = 0; i < MX_SPMM_UNROLL; ++i)
    if (c[i] != -1) {
#pragma unroll
      for (int u = 0; u < KB; ++u)
        if (u < kb) acc[u] += v[i] * __ldg(Bj + (long long)u * ldb + c[i]);
    }
}

template <int W, int KB>
__device__ __forceinline__ void spmm_rows(long long tid, int nrows, int k, int long_t, const int *__restrict__ rowptr,
                                          const int *__restrict__ col, const double *__restrict__ val, const int *__restrict__ xhot_col,
                                          const double *__restrict__ B, long long ldb, double *__restrict__ C, long long ldc) {
  const long long row = tid / W;
  const int lane = threadIdx.x & (W - 1);
  int p0 = 0, p1 = 0;
  bool writes = false;
  if (row < nrows) {
    p0 = __ldg(rowptr + row);
    p1 = __ldg(rowptr + row + 1);
    writes = p1 - p0 <= long_t;
    if (!writes) p1 = p0;
  }
  for (int j0 = 0; j0 < k; j0 += KB) {
    const int kb = min(KB, k - j0);
    const double *Bj = B + (long long)j0 * ldb;
    double acc[KB];
#pragma unroll
    for (int u = 0; u < KB; ++u) acc[u] = 0.0;
    for (int p = p0 + lane; p < p1; p += W * MX_SPMM_UNROLL) spmm_row_chunk<KB>(p, p1, W, col, val, xhot_col, Bj, ldb, kb, acc);
#pragma unroll
    for (int u = 0; u < KB; ++u) acc[u] = mx_group_sum(acc[u], W);
    if (writes) {
#pragma unroll
      for (int u = 0; u < KB; ++u)
        if (u < kb && (u & (W - 1)) == lane) C[(long long)(j0 + u) * ldc + row] = acc[u];
    }
  }
}

/* Long cold rows in pieces of at most MX_SPMM_PIECE nonzeros (mx_spmm_long): warp (piece, pass) sums
 * its piece for the pass's KB columns like the rows with W = 32 and writes them to part[piece * k +
 * j]. The warp that completes a long row (the last of its pieces x passes to arrive: a counter per
 * long row, integer atomics after a fence) adds the row's pieces in piece order into C for all k
 * columns and sets the counter back to 0. Which warp that is varies; the sums' order does not (from
 * 0.0, piece by piece). Invariant: one product of a device at a time (its products are ordered on
 * one stream), as the segment kernel's split rows require. */
struct spmm_pieces_args {
  long long nwarps; /* pieces x passes */
  int npass;
  const int2 *piece;
  const int *piece_long, *long_row, *long_first;
  double *part;
  unsigned *arrived;
};

/* After warp's piece pc wrote its part (every lane its own): the warp arrives at its long row; the
 * last of the row's P.npass x pieces adds the row's parts of columns [j0, j0 + kb) in piece order
 * into C and sets the row's counter back to 0. */
__device__ __forceinline__ void spmm_piece_arrive(int pc, int j0, int kb, int k, const spmm_pieces_args &P, double *__restrict__ C,
                                                  long long ldc) {
  const int lane = threadIdx.x & 31;
  __threadfence(); /* every lane's part visible before the warp's arrival (fence, then the warp's barrier) */
  __syncwarp();
  const int l = __ldg(P.piece_long + pc);
  unsigned last = 0;
  if (lane == 0) {
    const unsigned need = (unsigned)(__ldg(P.long_first + l + 1) - __ldg(P.long_first + l)) * (unsigned)P.npass;
    last = atomicAdd(P.arrived + l, 1u) == need - 1;
  }
  if (!__shfl_sync(MX_FULL_MASK, last, 0)) return;
  __threadfence(); /* the other warps' parts, seen through L2 (__ldcg) */
  const int first = __ldg(P.long_first + l), end = __ldg(P.long_first + l + 1), row = __ldg(P.long_row + l);
  for (int j = j0 + lane; j < j0 + kb; j += 32) {
    double sum = 0.0;
    for (int q = first; q < end; ++q) sum += __ldcg(P.part + (long long)q * k + j);
    C[(long long)j * ldc + row] = sum;
  }
  if (lane == 0) P.arrived[l] = 0u; /* for the next product */
}

template <int KB>
__device__ __forceinline__ void spmm_piece(long long wid, int k, const spmm_pieces_args &P, const int *__restrict__ col,
                                           const double *__restrict__ val, const int *__restrict__ xhot_col, const double *__restrict__ B,
                                           long long ldb, double *__restrict__ C, long long ldc) {
  const int lane = threadIdx.x & 31;
  const int pc = (int)(wid / P.npass), j0 = (int)(wid % P.npass) * KB;
  const int kb = min(KB, k - j0);
  const int2 range = P.piece[pc];
  double acc[KB];
#pragma unroll
  for (int u = 0; u < KB; ++u) acc[u] = 0.0;
  for (int p = range.x + lane; p < range.y; p += 32 * MX_SPMM_UNROLL)
    spmm_row_chunk<KB>(p, range.y, 32, col, val, xhot_col, B + (long long)j0 * ldb, ldb, kb, acc);
#pragma unroll
  for (int u = 0; u < KB; ++u) acc[u] = mx_group_sum(acc[u], 32);
  if (lane < kb) {
    double mine = 0.0;
#pragma unroll
    for (int u = 0; u < KB; ++u)
      if (u == lane) mine = acc[u];
    P.part[(long long)pc * k + j0 + lane] = mine;
  }
  spmm_piece_arrive(pc, 0, k, k, P, C, ldc);
}

/* One launch for the cold part on B in place: blocks below row_blocks take W lanes per row
 * (spmm_rows), the rest a warp per (piece, pass) of the long rows (spmm_piece). Where the rows,
 * the pieces and the pieces' fixup were three launches, small matrices waited on the launches. */
template <int W, int KB>
__global__ void __launch_bounds__(MX_SPMM_THREADS)
mx_spmm_cold_kernel(unsigned row_blocks, int nrows, int k, int long_t, const int *__restrict__ rowptr, const int *__restrict__ col,
                    const double *__restrict__ val, const int *__restrict__ xhot_col, const double *__restrict__ B, long long ldb,
                    double *__restrict__ C, long long ldc, const spmm_pieces_args P) {
  if (blockIdx.x < row_blocks) {
    spmm_rows<W, KB>((long long)blockIdx.x * MX_SPMM_THREADS + threadIdx.x, nrows, k, long_t, rowptr, col, val, xhot_col, B, ldb, C, ldc);
    return;
  }
  const long long wid = ((long long)(blockIdx.x - row_blocks) * MX_SPMM_THREADS + threadIdx.x) >> 5;
  if (wid >= P.nwarps) return; /* warp-uniform */
  spmm_piece<KB>(wid, k, P, col, val, xhot_col, B, ldb, C, ldc);
}

/* ---- hot: a warp per (work item of the SpMV's hot plan, 8-column slab) ----------------------------
 * The work items are the SpMV's (mx_hot_work: a whole chunk, or a piece of a long one); a whole
 * chunk's warp adds into C at hot_row, a piece's warp writes its 8 x 8 partial to
 * part[(slot * nslabs + slab) * 64 + r * 8 + jj] and mx_spmm_hot_fixup adds a split chunk's pieces
 * in piece order. */
__device__ __forceinline__ void hot_spmm_store(const mx_hot_work &w, int nslabs, int slab, int r, int jj, int k, double v,
                                               const int *__restrict__ hot_row, double *__restrict__ C, long long ldc,
                                               double *__restrict__ part) {
  const int j = slab * 8 + jj;
  if (j >= k) return; /* a padding column: nothing to store (a padded panel's may lie past the nslabs slabs) */
  if (w.slot >= 0) {
    part[((long long)w.slot * nslabs + slab) * 64 + r * 8 + jj] = v;
    return;
  }
  const int row = __ldg(hot_row + w.chunk * MX_CHUNK_ROWS + r);
  if (row >= 0) C[(long long)j * ldc + row] += v;
}

/* DU on mma.m8n8k4: fragments as the SpMV's DU kernel (mx_hot.cu), with B's 8 columns in place of 8
 * copies of x: lane holds A[lane>>2][lane&3] (bitmap bit lane) and B[lane&3][lane>>2] =
 * B(du_col[4 blk + (lane&3)], j0 + (lane>>2)); the 8x8 result's row lane>>2, columns 2 (lane&3) + {0, 1}. */
__global__ void __launch_bounds__(MX_SPMM_THREADS)
mx_spmm_du_kernel(long long nwarps, int nslabs, int k, const mx_hot_work *__restrict__ work, const int *__restrict__ hot_row,
                  const uint32_t *__restrict__ bitmap, const int *__restrict__ du_col, const int *__restrict__ valptr,
                  const double *__restrict__ du_val, const int *__restrict__ xhot_col, const double *__restrict__ B,
                  long long ldb, double *__restrict__ C, long long ldc, double *__restrict__ part) {
  const int lane = threadIdx.x & 31;
  const long long wid = ((long long)blockIdx.x * MX_SPMM_THREADS + threadIdx.x) >> 5;
  if (wid >= nwarps) return; /* warp-uniform */
  const mx_hot_work w = work[wid / nslabs];
  const int slab = (int)(wid % nslabs);
  const int jb = slab * 8 + (lane >> 2);
  const double *Bc = B + (long long)(jb < k ? jb : 0) * ldb;
  double d0 = 0.0, d1 = 0.0;
#pragma unroll 4
  for (int blk = w.begin; blk < w.end; ++blk) {
    const uint32_t bm = __ldg(bitmap + blk);
    const double a = (bm >> lane) & 1u ? __ldg(du_val + __ldg(valptr + blk) + __popc(bm & ((1u << lane) - 1u))) : 0.0;
    const int c = mx_col_original(__ldg(du_col + 4 * blk + (lane & 3)), xhot_col);
    const double b = c != -1 && jb < k ? __ldg(Bc + c) : 0.0;
    mx_mma_m8n8k4(d0, d1, a, b);
  }
  hot_spmm_store(w, nslabs, slab, lane >> 2, 2 * (lane & 3), k, d0, hot_row, C, ldc, part);
  hot_spmm_store(w, nslabs, slab, lane >> 2, 2 * (lane & 3) + 1, k, d1, hot_row, C, ldc, part);
}

/* SE on CUDA cores: lane (r = lane & 7, g = lane >> 3) sums row r of the item's slot columns for the
 * slab's columns g and g + 4, in slot order. */
__global__ void __launch_bounds__(MX_SPMM_THREADS)
mx_spmm_se_kernel(long long nwarps, int nslabs, int k, const mx_hot_work *__restrict__ work, const int *__restrict__ hot_row,
                  const int *__restrict__ se_ptr, const int *__restrict__ se_col, const double *__restrict__ se_val,
                  const int *__restrict__ xhot_col, const double *__restrict__ B, long long ldb, double *__restrict__ C,
                  long long ldc, double *__restrict__ part) {
  const int lane = threadIdx.x & 31;
  const long long wid = ((long long)blockIdx.x * MX_SPMM_THREADS + threadIdx.x) >> 5;
  if (wid >= nwarps) return; /* warp-uniform */
  const mx_hot_work w = work[wid / nslabs];
  const int slab = (int)(wid % nslabs);
  const int r = lane & 7, g = lane >> 3, ja = slab * 8 + g, jc = ja + 4;
  const double *Ba = B + (long long)(ja < k ? ja : 0) * ldb, *Bb = B + (long long)(jc < k ? jc : 0) * ldb;
  const int base = __ldg(se_ptr + w.chunk);
  double acc0 = 0.0, acc1 = 0.0;
  for (int s = base + w.begin * MX_CHUNK_ROWS + r; s < base + w.end * MX_CHUNK_ROWS; s += MX_CHUNK_ROWS) {
    const int c = mx_col_original(__ldg(se_col + s), xhot_col);
    if (c == -1) continue;
    const double v = __ldg(se_val + s);
    if (ja < k) acc0 += v * __ldg(Ba + c);
    if (jc < k) acc1 += v * __ldg(Bb + c);
  }
  hot_spmm_store(w, nslabs, slab, r, g, k, acc0, hot_row, C, ldc, part);
  hot_spmm_store(w, nslabs, slab, r, g + 4, k, acc1, hot_row, C, ldc, part);
}

/* SE on a row-major panel of P columns (Bp2: the panel as pairs, G = P / 2 a row; P >= 2) starting
 * at column j0 (a multiple of 8), a warp per work item for all the panel's columns. A row of the
 * panel is read by L = max(G, 4) lanes at once, lane u = lane % L for pair u (columns 2u and 2u + 1:
 * slab u / 4 of the panel), one 16-byte load each, so that a warp's load covers RI = 32 / L whole
 * panel rows (at most 8 cache lines at P = 8, 4 above). Per slot, lane r < 8 loads row r's column
 * and value and the rows are taken RI at a time, NS = 8 / RI steps: lane (h = lane / L, u) sums row
 * q RI + h in step q. Every row and column is summed in slot order as mx_spmm_se_kernel: each
 * column's sum is bit for bit that kernel's, and the item's columns and values are read once per
 * panel. Slabs, stores and partial sums are numbered over all k columns (j0 / 8 + u / 4 of
 * nslabs_all), so that one mx_spmm_hot_fixup after the last panel adds the split chunks. */
template <int P>
struct se_panel_shape {
  static constexpr int G = P / 2, L = G < 4 ? 4 : G, RI = 32 / L, NS = 8 / RI;
};

template <int P>
__global__ void __launch_bounds__(MX_SPMM_THREADS)
mx_spmm_se_panel_kernel(int nwork, int nslabs_all, int j0, int k, const mx_hot_work *__restrict__ work, const int *__restrict__ hot_row,
                        const int *__restrict__ se_ptr, const int *__restrict__ se_col, const double *__restrict__ se_val,
                        const int *__restrict__ xhot_col, const double2 *__restrict__ Bp2, double *__restrict__ C, long long ldc,
                        double *__restrict__ part) {
  constexpr int G = se_panel_shape<P>::G, L = se_panel_shape<P>::L, RI = se_panel_shape<P>::RI, NS = se_panel_shape<P>::NS;
  const int lane = threadIdx.x & 31;
  const long long wid = ((long long)blockIdx.x * MX_SPMM_THREADS + threadIdx.x) >> 5;
  if (wid >= nwork) return; /* warp-uniform */
  const mx_hot_work w = work[wid];
  const int u = lane % L, h = lane / L;
  const bool has_pair = G >= 4 || u < G; /* the narrow panels' lanes past G load pair u mod G, add nothing */
  const int pair = u & (G - 1);
  const int base = __ldg(se_ptr + w.chunk);
  const int s_end = base + w.end * MX_CHUNK_ROWS;
  double2 acc[NS];
#pragma unroll
  for (int q = 0; q < NS; ++q) acc[q] = make_double2(0.0, 0.0);
  for (int s = base + w.begin * MX_CHUNK_ROWS + (lane & 7); s < s_end; s += MX_CHUNK_ROWS) { /* the same trip count on every lane */
    const int c = mx_col_original(__ldg(se_col + s), xhot_col);
    const double v = __ldg(se_val + s);
#pragma unroll
    for (int q = 0; q < NS; ++q) {
      const int cq = __shfl_sync(MX_FULL_MASK, c, q * RI + h);
      const double vq = __shfl_sync(MX_FULL_MASK, v, q * RI + h);
      if (cq != -1) {
        const double2 b = __ldg(Bp2 + (long long)cq * G + pair);
        if (has_pair) {
          acc[q].x += vq * b.x;
          acc[q].y += vq * b.y;
        }
      }
    }
  }
  if (!has_pair) return;
#pragma unroll
  for (int q = 0; q < NS; ++q) {
    hot_spmm_store(w, nslabs_all, j0 / 8 + u / 4, q * RI + h, 2 * (u & 3), k, acc[q].x, hot_row, C, ldc, part);
    hot_spmm_store(w, nslabs_all, j0 / 8 + u / 4, q * RI + h, 2 * (u & 3) + 1, k, acc[q].y, hot_row, C, ldc, part);
  }
}

/* Thread (split chunk, slab, cell r * 8 + jj) adds the chunk's pieces in piece order into C. */
__global__ void __launch_bounds__(MX_SPMM_THREADS)
mx_spmm_hot_fixup(int nsplit, int nslabs, int k, const mx_hot_split *__restrict__ split, const int *__restrict__ hot_row,
                  const double *__restrict__ part, double *__restrict__ C, long long ldc) {
  const long long i = (long long)blockIdx.x * MX_SPMM_THREADS + threadIdx.x;
  if (i >= (long long)nsplit * nslabs * 64) return;
  const int cell = (int)(i % 64), slab = (int)(i / 64 % nslabs);
  const mx_hot_split sp = split[i / 64 / nslabs];
  const int r = cell / 8, j = slab * 8 + cell % 8;
  const int row = __ldg(hot_row + sp.chunk * MX_CHUNK_ROWS + r);
  if (row < 0 || j >= k) return;
  double sum = 0.0;
  for (int p = 0; p < sp.npieces; ++p) sum += part[((long long)(sp.first_slot + p) * nslabs + slab) * 64 + cell];
  C[(long long)j * ldc + row] += sum;
}

/* ---- launchers ------------------------------------------------------------------------------------ */

static unsigned spmm_blocks(long long threads) { return (unsigned)((threads + MX_SPMM_THREADS - 1) / MX_SPMM_THREADS); }

/* Lanes per cold row: the smallest power of two whose lanes cover the mean cold row length in one
 * unrolled step, in [2, 32]. */
int mx_spmm_lanes(const mx_device *D) {
  const double mean = D->nrows > 0 ? (double)D->cold_nnz / D->nrows : 0.0;
  int w = 2;
  while (w < 32 && (double)w * MX_SPMM_UNROLL < mean) w *= 2;
  return w;
}

/* Rows longer than this go to the pieces: more than MX_SPMM_ROW_STEPS unrolled steps of W lanes. */
static int spmm_long_threshold(int W) { return W * MX_SPMM_UNROLL * MX_SPMM_ROW_STEPS; }

/* The long cold rows of D and their pieces, made on the first SpMM from the cold row pointers (one
 * device-to-host copy of nrows + 1 ints); D's pattern never changes, so they stay until D is freed. */
struct mx_spmm_long {
  int long_t, piece_nnz, nlong, npieces;
  double footprint; /* bytes of one B column the products touch at a time: 8 min(ncols, 2 mean |c - r'| + 1) */
  int *long_row, *long_first; /* nlong, nlong + 1 (piece prefix) */
  int2 *piece;                /* npieces: [start, end) nonzero ranges */
  int *piece_long;            /* npieces: the long row (index into long_row) of each piece */
  unsigned *arrived;          /* nlong: warps of the product in progress done with the row (0 between products) */
};

void mx_spmm_dev_free(mx_device *D) {
  mx_device_free(D->spmm_whole);
  D->spmm_whole = nullptr;
  mx_spmm_long *L = D->spmm_long;
  if (!L) return;
  mx_cuda_free_on(D, &L->long_row, (size_t)L->nlong);
  mx_cuda_free_on(D, &L->long_first, (size_t)L->nlong + 1);
  mx_cuda_free_on(D, &L->piece, (size_t)L->npieces);
  mx_cuda_free_on(D, &L->piece_long, (size_t)L->npieces);
  mx_cuda_free_on(D, &L->arrived, (size_t)L->nlong);
  free(L);
  D->spmm_long = nullptr;
}

/* sum over D's cold nonzeros of |c - r'|, r' = r ncols / nrows (the diagonal of a rectangular matrix):
 * integer atomics, so the sum is exact whatever the order */
__global__ void __launch_bounds__(MX_SPMM_THREADS)
mx_spmm_spread_kernel(int nrows, int ncols, const int *__restrict__ rowptr, const int *__restrict__ col,
                      const int *__restrict__ xhot_col, unsigned long long *sum) {
  const int r = blockIdx.x * MX_SPMM_THREADS + threadIdx.x;
  unsigned long long mine = 0;
  if (r < nrows) {
    const long long diag = (long long)r * ncols / nrows;
    for (int p = rowptr[r]; p < rowptr[r + 1]; ++p) {
      const long long d = (long long)mx_col_original(col[p], xhot_col) - diag;
      mine += (unsigned long long)(d < 0 ? -d : d);
    }
  }
  for (int off = 16; off > 0; off >>= 1) mine += __shfl_xor_sync(MX_FULL_MASK, mine, off);
  if ((threadIdx.x & 31) == 0 && mine) atomicAdd(sum, mine);
}

static int spmm_footprint(const mx_device *D, double *bytes) {
  *bytes = 8.0 * D->ncols;
  if (D->cold_nnz == 0 || D->nrows == 0) return 0;
  unsigned long long *sum = nullptr, h = 0;
  if (mx_cuda_alloc((void **)&sum, sizeof *sum, "SpMM: column spread")) return 1;
  int rc = mx_cuda_check(cudaMemset(sum, 0, sizeof *sum), "SpMM: column spread");
  if (!rc) {
    mx_spmm_spread_kernel<<<spmm_blocks(D->nrows), MX_SPMM_THREADS>>>(D->nrows, D->ncols, D->cold_rowptr, D->cold_col, D->xhot_col, sum);
    rc = mx_cuda_check(cudaGetLastError(), "SpMM: column spread kernel") ||
         mx_cuda_check(cudaMemcpy(&h, sum, sizeof h, cudaMemcpyDeviceToHost), "SpMM: column spread");
  }
  cudaFree(sum);
  if (!rc) *bytes = 8.0 * std::min((double)D->ncols, 2.0 * (double)h / D->cold_nnz + 1.0);
  return rc;
}

/* Nonzeros per piece: enough pieces for MX_SPMM_TARGET_WARPS warps, in [MX_SPMM_PIECE_MIN, MX_SPMM_PIECE]. */
static int spmm_piece_nnz(const mx_device *D) {
  int p = MX_SPMM_PIECE_MIN;
  while (p < MX_SPMM_PIECE && (double)p * MX_SPMM_TARGET_WARPS < D->cold_nnz) p *= 2;
  return p;
}

static int spmm_long_make(mx_device *D, int long_t) {
  std::vector<int> rp((size_t)D->nrows + 1), rows, first(1, 0), piece_long;
  std::vector<int2> pieces;
  const int piece_nnz = spmm_piece_nnz(D);
  long_t = std::min(long_t, piece_nnz);
  double footprint;
  if (spmm_footprint(D, &footprint)) return 1;
  MX_CUDA_TRY(cudaMemcpy(rp.data(), D->cold_rowptr, sizeof(int) * rp.size(), cudaMemcpyDeviceToHost));
  for (int r = 0; r < D->nrows; ++r) {
    if (rp[r + 1] - rp[r] <= long_t) continue;
    rows.push_back(r);
    for (int p = rp[r]; p < rp[r + 1]; p += piece_nnz) {
      pieces.push_back(make_int2(p, std::min(p + piece_nnz, rp[r + 1])));
      piece_long.push_back((int)rows.size() - 1);
    }
    first.push_back((int)pieces.size());
  }
  mx_spmm_long *L = (mx_spmm_long *)calloc(1, sizeof *L);
  if (!L) return mx_fail("SpMM: out of host memory");
  D->spmm_long = L;
  L->long_t = long_t;
  L->piece_nnz = piece_nnz;
  L->footprint = footprint;
  if (rows.empty()) return 0;
  if (mx_cuda_alloc_on(D, &L->long_row, rows.size(), "SpMM: long rows") ||
      mx_cuda_alloc_on(D, &L->long_first, first.size(), "SpMM: long rows' pieces") ||
      mx_cuda_alloc_on(D, &L->piece, pieces.size(), "SpMM: pieces") ||
      mx_cuda_alloc_on(D, &L->piece_long, pieces.size(), "SpMM: pieces' rows") || mx_cuda_alloc_on(D, &L->arrived, rows.size(), "SpMM: long rows' counters")) {
    L->nlong = (int)rows.size(), L->npieces = (int)pieces.size();
    mx_spmm_dev_free(D);
    return 1;
  }
  L->nlong = (int)rows.size();
  L->npieces = (int)pieces.size();
  MX_CUDA_TRY(cudaMemcpy(L->long_row, rows.data(), sizeof(int) * rows.size(), cudaMemcpyHostToDevice));
  MX_CUDA_TRY(cudaMemcpy(L->long_first, first.data(), sizeof(int) * first.size(), cudaMemcpyHostToDevice));
  MX_CUDA_TRY(cudaMemcpy(L->piece, pieces.data(), sizeof(int2) * pieces.size(), cudaMemcpyHostToDevice));
  MX_CUDA_TRY(cudaMemcpy(L->piece_long, piece_long.data(), sizeof(int) * piece_long.size(), cudaMemcpyHostToDevice));
  MX_CUDA_TRY(cudaMemset(L->arrived, 0, sizeof(unsigned) * rows.size()));
  return 0;
}

/* The rows and, where there are long rows, their pieces in one launch; the pieces' partial sums from
 * the pool. KB = 4 below 8 columns (fewer idle accumulators), else MX_SPMM_COLS_PER_PASS. */
template <int W, int KB>
static int cold_launch_wk(const mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  const mx_spmm_long *L = D->spmm_long;
  const unsigned row_blocks = spmm_blocks((long long)D->nrows * W);
  spmm_pieces_args P = {0, (k + KB - 1) / KB, L->piece, L->piece_long, L->long_row, L->long_first, nullptr, L->arrived};
  bool pooled = false;
  if (L->nlong) {
    P.nwarps = (long long)L->npieces * P.npass;
    if (mx_scratch_malloc((void **)&P.part, sizeof(double) * (size_t)L->npieces * k, s, true, &pooled, "SpMM: long rows' partial sums"))
      return 1;
  }
  const long long blocks = (long long)row_blocks + spmm_blocks(P.nwarps * 32);
  int rc = blocks > INT32_MAX ? mx_fail("SpMM: %lld blocks exceed one launch", blocks) : 0;
  if (!rc) {
    mx_spmm_cold_kernel<W, KB><<<(unsigned)blocks, MX_SPMM_THREADS, 0, s>>>(row_blocks, D->nrows, k, L->long_t, D->cold_rowptr, D->cold_col,
                                                                            D->cold_val, D->xhot_col, B, ldb, C, ldc, P);
    rc = mx_cuda_check(cudaGetLastError(), "SpMM cold kernel");
  }
  if (P.part) mx_scratch_free(P.part, s, pooled);
  return rc;
}

template <int W>
static int cold_launch_w(const mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  return k < MX_SPMM_COLS_PER_PASS ? cold_launch_wk<W, 4>(D, k, B, ldb, C, ldc, s) : cold_launch_wk<W, MX_SPMM_COLS_PER_PASS>(D, k, B, ldb, C, ldc, s);
}

int mx_spmm_cold_launch(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  int rc;
  switch (mx_spmm_lanes(D)) {
    case 2: rc = cold_launch_w<2>(D, k, B, ldb, C, ldc, s); break;
    case 4: rc = cold_launch_w<4>(D, k, B, ldb, C, ldc, s); break;
    case 8: rc = cold_launch_w<8>(D, k, B, ldb, C, ldc, s); break;
    case 16: rc = cold_launch_w<16>(D, k, B, ldb, C, ldc, s); break;
    default: rc = cold_launch_w<32>(D, k, B, ldb, C, ldc, s); break;
  }
  return rc;
}

/* ---- cold on row-major panels of B --------------------------------------------------------------
 * A panel is P consecutive columns of B copied row-major, Bp[c P + u] = B(c, j0 + u) (0 past the
 * last column), so that the P values of B a nonzero needs are one contiguous segment of 8 P bytes
 * (whole 32-byte sectors from 4 columns on) rather than P sectors of P columns: the random columns of
 * power-law graphs then waste no sector. A group of G = P / 2 lanes, lane u for columns j0 + 2u and
 * j0 + 2u + 1 (one 16-byte load), loads a step of nonzeros (coalesced) and walks them in order,
 * every lane gathering its two columns from the nonzero's segment: a lane sums its row in nonzero
 * order. */

/* A block copies a tile of 32 rows of B x P columns: read along the columns (coalesced), through
 * shared memory (a padded row per row of B), written along the panel's rows. */
template <int P>
__global__ void __launch_bounds__(MX_SPMM_THREADS)
mx_spmm_panel_pack(int ncols, int kb, const double *__restrict__ B, long long ldb, double *__restrict__ Bp) {
  __shared__ double tile[32][P + 1];
  const long long c0 = (long long)blockIdx.x * 32;
  for (int i = threadIdx.x; i < 32 * P; i += MX_SPMM_THREADS) {
    const int u = i / 32, r = i % 32;
    tile[r][u] = u < kb && c0 + r < ncols ? __ldg(B + (long long)u * ldb + c0 + r) : 0.0;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 32 * P; i += MX_SPMM_THREADS) {
    const int r = i / P, u = i % P;
    if (c0 + r < ncols) Bp[(c0 + r) * P + u] = tile[r][u];
  }
}

/* the lanes of this lane's group of G */
template <int G>
__device__ __forceinline__ unsigned panel_group_mask() {
  return (MX_FULL_MASK >> (32 - G)) << ((threadIdx.x & 31) & ~(G - 1));
}

/* A group's step covers S = G R nonzeros: R = 8 / G for the panels below 8 columns (groups of 1 and
 * 2 lanes: lane u loads nonzeros p + r G + u, r < R, so that every lane has 8 gathers in flight), else
 * R = 1 (one nonzero a lane). The batch of gathers in flight is NB = min(S, 8) nonzeros. */
template <int P>
struct panel_shape {
  static constexpr int G = P / 2, R = G < 4 ? 8 / G : 1, S = G * R, NB = S < 8 ? S : 8;
};

/* Lane u's sums for its two columns over the nonzeros [p, p + S) of every step p, p + stride, ...
 * below p1 (p the same on the group's lanes, so its shuffles name only the group), in nonzero
 * order; padding (-1) adds nothing. Bp2 is the panel as pairs (P / 2 per row of B). */
template <int P>
__device__ __forceinline__ double2 panel_sum(int p, int p1, int stride, int u, const int *__restrict__ col, const double *__restrict__ val,
                                             const int *__restrict__ xhot_col, const double2 *__restrict__ Bp2) {
  constexpr int G = panel_shape<P>::G, R = panel_shape<P>::R, S = panel_shape<P>::S, NB = panel_shape<P>::NB;
  const unsigned gmask = panel_group_mask<G>();
  double2 acc = make_double2(0.0, 0.0);
  for (; p < p1; p += stride) {
    const int n = min(S, p1 - p);
    int c[R];
    double v[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int q = p + r * G + u;
      c[r] = q < p1 ? mx_col_original(__ldg(col + q), xhot_col) : -1;
      v[r] = q < p1 ? __ldg(val + q) : 0.0;
    }
#pragma unroll
    for (int i0 = 0; i0 < S; i0 += NB) {
      if (i0 >= n) break; /* uniform in the group */
      int ci[NB];
      double vi[NB];
      double2 b[NB];
#pragma unroll
      for (int j = 0; j < NB; ++j) { /* nonzero p + i0 + j: lane (i0 + j) % G's slot (i0 + j) / G */
        ci[j] = __shfl_sync(gmask, c[(i0 + j) / G], (i0 + j) % G, G);
        vi[j] = __shfl_sync(gmask, v[(i0 + j) / G], (i0 + j) % G, G);
      }
#pragma unroll
      for (int j = 0; j < NB; ++j) b[j] = ci[j] != -1 ? __ldg(Bp2 + (long long)ci[j] * G + u) : make_double2(0.0, 0.0);
#pragma unroll
      for (int j = 0; j < NB; ++j)
        if (ci[j] != -1) {
          acc.x += vi[j] * b[j].x;
          acc.y += vi[j] * b[j].y;
        }
    }
  }
  return acc;
}

/* the fixed butterfly over the groups of G lanes within W lanes */
template <int G>
__device__ __forceinline__ double2 panel_groups_sum(double2 a, int W) {
  for (int off = G; off < W; off <<= 1) {
    a.x += __shfl_xor_sync(MX_FULL_MASK, a.x, off);
    a.y += __shfl_xor_sync(MX_FULL_MASK, a.y, off);
  }
  return a;
}

/* W lanes per row (W >= G, a power of two up to 32: at least the mean row's width, spmm_lanes): its
 * W / G groups take the steps g S, g S + W R, ... and a fixed butterfly adds them. Rows longer than
 * long_t are left to the pieces (not written here). Every lane of the warp reaches the butterfly. */
template <int P>
__device__ __forceinline__ void panel_rows(long long tid, int nrows, int W, int kb, int long_t, const int *__restrict__ rowptr,
                                           const int *__restrict__ col, const double *__restrict__ val, const int *__restrict__ xhot_col,
                                           const double2 *__restrict__ Bp2, double *__restrict__ C, long long ldc) {
  constexpr int G = P / 2;
  const long long row = tid / W;
  const int lane = threadIdx.x & 31, u = lane & (G - 1);
  int p0 = 0, p1 = 0;
  bool writes = false;
  if (row < nrows) {
    p0 = __ldg(rowptr + row);
    p1 = __ldg(rowptr + row + 1);
    writes = p1 - p0 <= long_t;
    if (!writes) p1 = p0;
  }
  constexpr int R = panel_shape<P>::R;
  const double2 acc = panel_groups_sum<G>(panel_sum<P>(p0 + (lane & (W - 1) & ~(G - 1)) * R, p1, W * R, u, col, val, xhot_col, Bp2), W);
  if (writes && (lane & (W - 1)) < G) {
    if (2 * u < kb) C[(long long)(2 * u) * ldc + row] = acc.x;
    if (2 * u + 1 < kb) C[(long long)(2 * u + 1) * ldc + row] = acc.y;
  }
}

/* a warp per piece of a long row (P.npass = 1: the warp takes all the panel's columns): group g takes
 * the steps g S, g S + 32 R, ...; a fixed butterfly adds the groups; part[piece * k + j0 + column]
 * as spmm_piece writes them; the row's last piece adds them (spmm_piece_arrive). */
template <int P>
__device__ __forceinline__ void panel_piece(int pc, int kb, int k, int j0, const spmm_pieces_args &PA, const int *__restrict__ col,
                                            const double *__restrict__ val, const int *__restrict__ xhot_col,
                                            const double2 *__restrict__ Bp2, double *__restrict__ C, long long ldc) {
  constexpr int G = P / 2;
  const int lane = threadIdx.x & 31, u = lane & (G - 1);
  const int2 range = PA.piece[pc];
  constexpr int R = panel_shape<P>::R;
  const double2 acc = panel_groups_sum<G>(panel_sum<P>(range.x + (lane & ~(G - 1)) * R, range.y, 32 * R, u, col, val, xhot_col, Bp2), 32);
  if (lane < G) {
    if (2 * u < kb) PA.part[(long long)pc * k + j0 + 2 * u] = acc.x;
    if (2 * u + 1 < kb) PA.part[(long long)pc * k + j0 + 2 * u + 1] = acc.y;
  }
  spmm_piece_arrive(pc, j0, kb, k, PA, C, ldc);
}

/* One launch for a panel's cold part: blocks below row_blocks the rows (panel_rows), the rest a warp
 * per piece of the long rows (panel_piece), as mx_spmm_cold_kernel on B in place. Bounded to the
 * rows' own registers up to P = 8 (48, and 32 at P = 8), which the pieces would raise, lowering the
 * rows' occupancy (docs/performance.md, "Fewer launches"); the wider panels take 48 unbounded. */
template <int P>
struct panel_cold_minb {
  static constexpr int value = P == 8 ? 8 : P < 8 ? 5 : 0; /* 0: no bound */
};

template <int P>
__global__ void __launch_bounds__(MX_SPMM_THREADS, panel_cold_minb<P>::value)
mx_spmm_panel_cold(unsigned row_blocks, int nrows, int W, int kb, int k, int j0, int long_t, const int *__restrict__ rowptr,
                   const int *__restrict__ col, const double *__restrict__ val, const int *__restrict__ xhot_col,
                   const double2 *__restrict__ Bp2, double *__restrict__ C, long long ldc, const spmm_pieces_args PA) {
  if (blockIdx.x < row_blocks) {
    panel_rows<P>((long long)blockIdx.x * MX_SPMM_THREADS + threadIdx.x, nrows, W, kb, long_t, rowptr, col, val, xhot_col, Bp2,
                  C + (long long)j0 * ldc, ldc);
    return;
  }
  const long long wid = ((long long)(blockIdx.x - row_blocks) * MX_SPMM_THREADS + threadIdx.x) >> 5;
  if (wid >= PA.nwarps) return; /* warp-uniform */
  panel_piece<P>((int)wid, kb, k, j0, PA, col, val, xhot_col, Bp2, C, ldc);
}

/* The 8-column slabs of k columns (the hot kernels' unit; the last one padded). */
static int spmm_slabs(int k) { return (k + 7) / 8; }

/* An SE hot region runs on the panels (mx_spmm_se_panel_kernel), a DU one on B in place. */
static bool spmm_hot_on_panels(const mx_device *D) { return D->mode == MX_HOT_SE && D->hot_nwork > 0; }

/* The hot partial sums of the split chunks, nslabs 8-column slabs (none without split chunks). */
static int hot_part_alloc(const mx_device *D, int nslabs, cudaStream_t s, double **part, bool *pooled) {
  *part = nullptr;
  if (D->hot_nslots <= 0) return 0;
  return mx_scratch_malloc((void **)part, sizeof(double) * 64 * (size_t)D->hot_nslots * nslabs, s, true, pooled, "SpMM: hot partial sums");
}

static int hot_fixup_launch(const mx_device *D, int nslabs, int k, const double *part, double *C, long long ldc, cudaStream_t s) {
  if (D->hot_nsplit <= 0) return 0;
  mx_spmm_hot_fixup<<<spmm_blocks((long long)D->hot_nsplit * nslabs * 64), MX_SPMM_THREADS, 0, s>>>(D->hot_nsplit, nslabs, k, D->hot_split,
                                                                                                 D->hot_row, part, C, ldc);
  return mx_cuda_check(cudaGetLastError(), "SpMM hot fixup");
}

/* scratch of the panel way: the panel, the long rows' pieces' sums, the hot split chunks' sums */
struct spmm_panel_scratch {
  double *Bp, *part, *hot_part;
  bool pooled_b, pooled_p, pooled_h;
};

/* the panel's cold rows and long rows' pieces (lanes per row), C = */
template <int P>
static int panel_cold_launch(const mx_device *D, int j0, int kb, int k, const double2 *Bp2, double *C, long long ldc,
                             const spmm_panel_scratch &S, cudaStream_t s) {
  const mx_spmm_long *L = D->spmm_long;
  const int W = std::max(P / 2, mx_spmm_lanes(D));
  const unsigned row_blocks = spmm_blocks((long long)D->nrows * W);
  const spmm_pieces_args PA = {L->npieces, 1, L->piece, L->piece_long, L->long_row, L->long_first, S.part, L->arrived};
  const long long blocks = (long long)row_blocks + spmm_blocks((long long)L->npieces * 32);
  if (blocks > INT32_MAX) return mx_fail("SpMM: %lld blocks exceed one launch", blocks);
  mx_spmm_panel_cold<P><<<(unsigned)blocks, MX_SPMM_THREADS, 0, s>>>(row_blocks, D->nrows, W, kb, k, j0, L->long_t, D->cold_rowptr,
                                                                     D->cold_col, D->cold_val, D->xhot_col, Bp2, C, ldc, PA);
  MX_LAUNCH_CHECK("SpMM panel cold kernel");
  return 0;
}

/* whether cols columns' footprints of B (D's column spread, spmm_footprint) fit half the L2: the
 * launch groups' rule (spmm_group) */
bool mx_spmm_cols_fit_l2(const mx_device *D, int cols) {
  const double fp = D->spmm_long ? D->spmm_long->footprint : 8.0 * D->ncols;
  return cols * fp <= 0.5 * (double)mx_device_l2_bytes();
}

static int g_merge_panels = 1;
extern "C" int mx_spmm_set_merge_panels(int mode) {
  const int old = g_merge_panels;
  if (mode >= 0 && mode <= 2) g_merge_panels = mode;
  return old;
}

/* Whether a 2-column panel's cold part runs on D's merge tiles (mx_spmm_merge.cu): on a merge plan
 * where two columns' footprints fit half the L2 (above it the lanes-per-row panel was as fast or
 * faster: docs/performance.md, "Many vectors"), or always (mode 2). */
static bool spmm_merge_panel(const mx_device *D) {
  if (!g_merge_panels || D->cold != MX_COLD_MERGE || !D->merge_coord) return false;
  return g_merge_panels == 2 || mx_spmm_cols_fit_l2(D, 2);
}

/* One panel: pack columns [j0, j0 + kb) of B; its cold part (C =): on a merge plan a 2-column panel
 * by the merge tiles, else the cold rows and the long rows' pieces in one launch; then an SE hot
 * region adds into C (+=) while the panel is there. */
template <int P>
static int panel_launch(const mx_device *D, int j0, int kb, int k, const double *B, long long ldb, double *C, long long ldc,
                        const spmm_panel_scratch &S, cudaStream_t s) {
  if (D->ncols > 0) {
    mx_spmm_panel_pack<P><<<(unsigned)((D->ncols + 31) / 32), MX_SPMM_THREADS, 0, s>>>(D->ncols, kb, B + (long long)j0 * ldb, ldb, S.Bp);
    MX_LAUNCH_CHECK("SpMM panel copy");
  }
  const double2 *Bp2 = reinterpret_cast<const double2 *>(S.Bp); /* rows of 8 P bytes in a pool block: 16-byte aligned */
  if (P == 2 && spmm_merge_panel(D)) {
    if (mx_spmm_merge_panel2(D, kb, Bp2, C + (long long)j0 * ldc, ldc, false, s)) return 1;
  } else if (panel_cold_launch<P>(D, j0, kb, k, Bp2, C, ldc, S, s)) return 1;
  if (spmm_hot_on_panels(D)) {
    mx_spmm_se_panel_kernel<P><<<spmm_blocks((long long)D->hot_nwork * 32), MX_SPMM_THREADS, 0, s>>>(
        D->hot_nwork, spmm_slabs(k), j0, k, D->hot_work, D->hot_row, D->se_ptr, D->se_col, D->se_val, D->xhot_col, Bp2, C, ldc, S.hot_part);
    MX_LAUNCH_CHECK("SpMM hot kernel on a panel");
  }
  return 0;
}

/* The widest panel (64, 32, 16 or 8 columns) that the columns left fill; below 8 columns the
 * narrowest of 8, 4 and 2 that holds them (padded): fewer than 4 padding columns in all. Every
 * panel therefore starts at a multiple of 8. One panel buffer (ncols x the widest) and the partial
 * sums from the pool. */
static int spmm_panel_width(int left) {
  int P = MX_SPMM_PANEL_MAX;
  while (P > 8 && left < P) P /= 2;
  if (left < 8)
    for (P = 2; P < left; P *= 2) {}
  return P;
}

/* The padded way's panel: 64 columns while 64 are left, then one panel of the next power of two
 * (at least 2) that holds the rest. */
static int spmm_panel_width_padded(int left) {
  if (left >= MX_SPMM_PANEL_MAX) return MX_SPMM_PANEL_MAX;
  int P = 2;
  while (P < left) P *= 2;
  return P;
}

/* whether the padded way splits k columns into other panels than the panel way (k mod 64 above 8
 * and not a power of two) */
bool mx_spmm_padding_differs(int k) {
  for (int j0 = 0; j0 < k;) {
    const int P = spmm_panel_width(k - j0);
    if (P != spmm_panel_width_padded(k - j0)) return true;
    j0 += std::min(P, k - j0);
  }
  return false;
}

static void spmm_panel_scratch_free(spmm_panel_scratch &S, cudaStream_t s) {
  if (S.hot_part) mx_scratch_free(S.hot_part, s, S.pooled_h);
  if (S.part) mx_scratch_free(S.part, s, S.pooled_p);
  if (S.Bp) mx_scratch_free(S.Bp, s, S.pooled_b);
}

static int spmm_panel_scratch_alloc(const mx_device *D, int k, bool padded, cudaStream_t s, spmm_panel_scratch &S) {
  const mx_spmm_long *L = D->spmm_long;
  const size_t panel = (size_t)std::max(D->ncols, 1) * (padded ? spmm_panel_width_padded(k) : spmm_panel_width(k));
  if (mx_scratch_malloc((void **)&S.Bp, sizeof(double) * panel, s, true, &S.pooled_b, "SpMM: a row-major panel of B") ||
      (L->nlong && mx_scratch_malloc((void **)&S.part, sizeof(double) * (size_t)L->npieces * k, s, true, &S.pooled_p, "SpMM: long rows' partial sums")) ||
      (spmm_hot_on_panels(D) && hot_part_alloc(D, spmm_slabs(k), s, &S.hot_part, &S.pooled_h))) {
    spmm_panel_scratch_free(S, s);
    return 1;
  }
  return 0;
}

/* The cold part, and an SE hot part, panel by panel (the widest panels the columns fill, or padded:
 * spmm_panel_width_padded); the hot split chunks' fixup after the last. */
int mx_spmm_panels(const mx_device *D, int k, bool padded, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  spmm_panel_scratch S = {};
  if (spmm_panel_scratch_alloc(D, k, padded, s, S)) return 1;
  int rc = 0;
  for (int j0 = 0; j0 < k && !rc;) {
    const int P = padded ? spmm_panel_width_padded(k - j0) : spmm_panel_width(k - j0), kb = std::min(P, k - j0);
    if (P == 64) rc = panel_launch<64>(D, j0, kb, k, B, ldb, C, ldc, S, s);
    else if (P == 32) rc = panel_launch<32>(D, j0, kb, k, B, ldb, C, ldc, S, s);
    else if (P == 16) rc = panel_launch<16>(D, j0, kb, k, B, ldb, C, ldc, S, s);
    else if (P == 8) rc = panel_launch<8>(D, j0, kb, k, B, ldb, C, ldc, S, s);
    else if (P == 4) rc = panel_launch<4>(D, j0, kb, k, B, ldb, C, ldc, S, s);
    else rc = panel_launch<2>(D, j0, kb, k, B, ldb, C, ldc, S, s);
    j0 += kb;
  }
  if (!rc && spmm_hot_on_panels(D)) rc = hot_fixup_launch(D, spmm_slabs(k), k, S.hot_part, C, ldc, s);
  spmm_panel_scratch_free(S, s);
  return rc;
}

int mx_spmm_hot_launch(const mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  if (D->mode == MX_HOT_NONE || D->hot_nwork == 0) return 0;
  const int nslabs = spmm_slabs(k);
  const long long nwarps = (long long)D->hot_nwork * nslabs;
  if (nwarps * 32 / MX_SPMM_THREADS >= INT32_MAX) return mx_fail("SpMM: %lld hot warps for %d columns exceed one launch", nwarps, k);
  double *part = nullptr;
  bool pooled = false;
  if (hot_part_alloc(D, nslabs, s, &part, &pooled)) return 1;
  if (D->mode == MX_HOT_DU)
    mx_spmm_du_kernel<<<spmm_blocks(nwarps * 32), MX_SPMM_THREADS, 0, s>>>(nwarps, nslabs, k, D->hot_work, D->hot_row, D->du_bitmap, D->du_col,
                                                                         D->du_valptr, D->du_val, D->xhot_col, B, ldb, C, ldc, part);
  else
    mx_spmm_se_kernel<<<spmm_blocks(nwarps * 32), MX_SPMM_THREADS, 0, s>>>(nwarps, nslabs, k, D->hot_work, D->hot_row, D->se_ptr, D->se_col,
                                                                         D->se_val, D->xhot_col, B, ldb, C, ldc, part);
  int rc = mx_cuda_check(cudaGetLastError(), "SpMM hot kernel");
  if (!rc) rc = hot_fixup_launch(D, nslabs, k, part, C, ldc, s);
  if (part) mx_scratch_free(part, s, pooled);
  return rc;
}

int mx_spmm_long_prepare(mx_device *D) { return !D->spmm_long && spmm_long_make(D, spmm_long_threshold(mx_spmm_lanes(D))); }
