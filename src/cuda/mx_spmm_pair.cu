/* mx_spmm_pair.cu - the SpMM's pairs (issue 43): the cold part of A times two columns of B at once
 * by the SpMV's own cold kernel on pairs of values, on the form the SpMV reads (the plain cold CSR
 * or its pack): the segment kernel on double2 (mx_cold_segment.cuh), or the merge kernel's tiles
 * with two sums a row (mx_spmm_merge_panel2). The matrix is read once for two columns and a
 * nonzero's two values of B are one 16-byte gather: where a pack makes the SpMV read fewer matrix
 * bytes than the SpMM kernels (which read the plain arrays), pairs still halve the matrix reads
 * and the gathers' sectors of k SpMVs. An SE hot part runs by the SpMV's SE kernel on the pair
 * (mx_hot_se.cuh), its x-hot values gathered per pair. In place (a way of its own): the segment
 * kernel reads the two columns of B where they are, two 8-byte gathers a nonzero instead of the
 * copy's one 16-byte gather, and no copy (its traffic, 4 doubles a row of B, is what local columns
 * gain; scattered ones lose more in gather sectors: the timed choice tells).
 *
 * Same segments, tiles or work items, same products, same summation order as the SpMV's kernels:
 * column j of C is bitwise the cold SpMV of column j of B (z NULL), and with an SE hot part the
 * SpMV. Its own translation unit: CUDA loads a module's code at the first launch of any of its
 * kernels, and the SpMV's modules stay small. */
#include "mx_cold_segment.cuh"
#include "mx_hot_se.cuh"
#include "mx_scratch.cuh"
#include "mx_spmm_impl.h"

/* Bp2[c] = (B(c, 0), B(c, 1)), each times s_c where s (the pack's column constants: then the
 * decoded value is 1.0 and the product 1.0 * (s_c b) is s_c * b, bitwise, as mx_pack_scale_x's xs
 * makes it for the SpMV) */
__global__ void __launch_bounds__(MX_SPMM_THREADS)
mx_spmm_pair_pack(int ncols, const double *__restrict__ B, long long ldb, const double *__restrict__ s, double2 *__restrict__ Bp2) {
  const int c = blockIdx.x * MX_SPMM_THREADS + threadIdx.x;
  if (c >= ncols) return;
  double b0 = __ldg(B + c), b1 = __ldg(B + ldb + c);
  if (s) {
    const double sc = __ldg(s + c);
    b0 = __dmul_rn(sc, b0);
    b1 = __dmul_rn(sc, b1);
  }
  Bp2[c] = make_double2(b0, b1);
}

/* What the segment pair kernel reads for the pair: a row-major copy (x, XH = MX_XH_OFF), or the two
 * columns of B in place (x and x1, XH = MX_XH_TWO_COLS: mx_ld_xc). */
struct pair_in {
  const double2 *x, *x1;
};

template <int XH, class Dec, bool SPLIT>
static int pair_kernel_launch(const mx_device *D, const pair_in &in, double *C, long long ldc, cudaStream_t s, const Dec &dec) {
  /* MINB blocks of 45 KB, the rest L1 (mx_tuning.h) */
  constexpr int MINB = XH == MX_XH_TWO_COLS ? MX_SPMM_PAIR_IN_PLACE_MIN_BLOCKS : MX_SPMM_PAIR_MIN_BLOCKS;
  constexpr int CARVEOUT = XH == MX_XH_TWO_COLS ? MX_SPMM_PAIR_IN_PLACE_CARVEOUT : MX_SPMM_PAIR_CARVEOUT;
  static bool carveout = false;
  if (!carveout) {
    MX_CUDA_TRY(cudaFuncSetAttribute(mx_cold_segment_kernel<XH, Dec, MINB, SPLIT, mx_seg_stage_strided, double2>,
                                     cudaFuncAttributePreferredSharedMemoryCarveout, CARVEOUT));
    carveout = true;
  }
  mx_cold_segment_kernel<XH, Dec, MINB, SPLIT, mx_seg_stage_strided, double2>
      <<<D->seg_nblocks, MX_SEG_THREADS, 0, s>>>(D->cold_nnz, D->cold_rowptr, D->cold_col, D->cold_val, D->seg_plan, in.x, in.x1,
                                                 nullptr, C, dec, MX_SEG_GROUP_K, D->seg_parts, ldc);
  return 0;
}

/* with the split-row code where D's longest cold row may be split, as the SpMV's launch */
template <int XH, class Dec>
static int pair_launch(const mx_device *D, const pair_in &in, double *C, long long ldc, cudaStream_t s, const Dec &dec) {
  if (D->seg_split) return pair_kernel_launch<XH, Dec, true>(D, in, C, ldc, s, dec);
  return pair_kernel_launch<XH, Dec, false>(D, in, C, ldc, s, dec);
}

/* the launch through the decoder of D's pack encodings (mx_pack_dispatch) */
template <int XH>
struct pair_packed_launch {
  const mx_device *D;
  pair_in in;
  double *C;
  long long ldc;
  cudaStream_t s;
  template <int VE, int IE> int run() const { return pair_launch<XH>(D, in, C, ldc, s, mx_pack_decoder<VE, IE>(D->pack)); }
};

/* the segment pair kernel on D's form (its pack where in use) */
template <int XH>
static int pair_segment_launch(const mx_device *D, const pair_in &in, double *C, long long ldc, cudaStream_t s) {
  const int rc = mx_cold_pack_dev_active(D) ? mx_pack_dispatch(D->pack, pair_packed_launch<XH>{D, in, C, ldc, s})
                                            : pair_launch<XH>(D, in, C, ldc, s, mx_dec_plain());
  return rc || mx_cuda_check(cudaGetLastError(), "SpMM pair kernel");
}

bool mx_spmm_pairs_run(const mx_device *D) {
  if (D->hub_split || (D->pack_released && !mx_cold_pack_dev_active(D))) return false;
  if (D->cold == MX_COLD_MERGE) return D->merge_coord != nullptr; /* its pair reads x-hot codes through xhot_col */
  return D->cold == MX_COLD_SEGMENT && D->seg_plan && !(D->xhot_mode == MX_XH_ON && D->xhot_cold);
}

/* ---- the SE hot part: the SpMV's SE kernel on pairs -------------------------------------------- */

/* D's SE hot part runs on the pairs (the DU part runs on B in place: mx_spmm_hot_launch) */
bool mx_spmm_pairs_hot(const mx_device *D) { return D->mode == MX_HOT_SE && D->hot_nwork > 0; }

/* xhot2[i] = Bh2[xhot_col[i]]: the x-hot values of a pair, as mx_xhot_launch gathers them for x */
__global__ void __launch_bounds__(MX_SPMM_THREADS)
mx_spmm_pair_xhot(int n, const int *__restrict__ xhot_col, const double2 *__restrict__ Bh2, double2 *__restrict__ xhot2) {
  const int i = blockIdx.x * MX_SPMM_THREADS + threadIdx.x;
  if (i < n) xhot2[i] = __ldg(Bh2 + __ldg(xhot_col + i));
}

/* the pair the SE kernel reads and its x-hot values, its split chunks' partial sums */
struct pair_hot_args {
  const double2 *Bh2;
  double2 *xhot2, *part2;
};

/* C(:, 0:2) += the SE hot part times the pair: its x-hot values, then the SpMV's SE launcher
 * (mx_hot_se_run: the SE kernel, the split chunks' second pass) on double2 */
static int pair_hot_launch(const mx_device *D, const pair_hot_args &H, double *C, long long ldc, cudaStream_t s) {
  if (D->xhot_mode == MX_XH_ON && D->xhot_n > 0) {
    mx_spmm_pair_xhot<<<(unsigned)((D->xhot_n + MX_SPMM_THREADS - 1) / MX_SPMM_THREADS), MX_SPMM_THREADS, 0, s>>>(D->xhot_n, D->xhot_col, H.Bh2,
                                                                                                                H.xhot2);
    MX_LAUNCH_CHECK("SpMM pairs: the x-hot values");
  }
  return mx_hot_se_run(D, H.Bh2, (const double2 *)H.xhot2, C, ldc, H.part2, s);
}

/* ---- the product ------------------------------------------------------------------------------------ */

/* The column scale a pair is copied with: the cold pack's column constants (the cold kernel reads
 * 1.0 for the value), the hot pack's for the SE kernel (the SpMV's xs); NULL where none. */
static bool pair_cold_scaled(const mx_device *D) { return mx_cold_pack_dev_active(D) && D->pack->val_enc == MX_VAL_COLCONST; }
static const double *pair_cold_scale(const mx_device *D) { return pair_cold_scaled(D) ? D->pack->dict : nullptr; }
static const double *pair_hot_scale(const mx_device *D) {
  return D->hot_pack && D->hot_pack->enc == MX_VAL_COLCONST ? D->hot_pack->s : nullptr;
}

/* the scratch of one product: the cold kernel's pair, the SE kernel's (where its scale differs),
 * the x-hot values, the split chunks' partial sums; all double2 */
struct pair_scratch {
  double2 *buf;
  bool pooled;
  double2 *Bp2;
  pair_hot_args hot;
};

static int pair_scratch_alloc(const mx_device *D, cudaStream_t s, pair_scratch *S) {
  const size_t ncols = (size_t)std::max(D->ncols, 1);
  const bool hot = mx_spmm_pairs_hot(D), own_hot_pair = hot && pair_hot_scale(D) != pair_cold_scale(D);
  const size_t nxhot = hot && D->xhot_mode == MX_XH_ON ? (size_t)D->xhot_n : 0;
  const size_t npart = hot ? (size_t)std::max(D->hot_nslots, 0) * MX_CHUNK_ROWS : 0;
  const size_t n = ncols * (own_hot_pair ? 2 : 1) + nxhot + npart;
  if (mx_scratch_malloc((void **)&S->buf, sizeof(double2) * n, s, true, &S->pooled, "SpMM: a pair of columns of B")) return 1;
  S->Bp2 = S->buf;
  S->hot.Bh2 = own_hot_pair ? S->buf + ncols : S->buf;
  S->hot.xhot2 = S->buf + ncols * (own_hot_pair ? 2 : 1);
  S->hot.part2 = S->hot.xhot2 + nxhot;
  return 0;
}

/* Bp2 = columns 0 and 1 of B scaled by scale (NULL: none) */
static int pair_copy(const mx_device *D, const double *B, long long ldb, const double *scale, double2 *Bp2, cudaStream_t s) {
  if (D->ncols == 0) return 0;
  mx_spmm_pair_pack<<<(unsigned)((D->ncols + MX_SPMM_THREADS - 1) / MX_SPMM_THREADS), MX_SPMM_THREADS, 0, s>>>(D->ncols, B, ldb, scale, Bp2);
  return mx_cuda_check(cudaGetLastError(), "SpMM: a pair of columns of B");
}

/* C(:, 0:2) = the cold part times the pair Bp2, by the SpMV's cold kernel on its form */
static int pair_cold_launch(const mx_device *D, const double2 *Bp2, double *C, long long ldc, cudaStream_t s) {
  if (D->cold == MX_COLD_MERGE) return mx_spmm_merge_panel2(D, 2, Bp2, C, ldc, mx_cold_pack_dev_active(D), s);
  return pair_segment_launch<MX_XH_OFF>(D, pair_in{Bp2, nullptr}, C, ldc, s);
}

int mx_spmm_pair_product(const mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  if (k % 2 || !mx_spmm_pairs_run(D)) return mx_fail("mx_spmm_pair_product: %d columns, or D's cold part has no pair kernel", k);
  if (k == 0) return 0;
  const bool hot = mx_spmm_pairs_hot(D);
  pair_scratch S;
  if (pair_scratch_alloc(D, s, &S)) return 1;
  int rc = 0;
  for (int j = 0; j < k && !rc; j += 2) {
    const double *Bj = B + (long long)j * ldb;
    double *Cj = C + (long long)j * ldc;
    rc = pair_copy(D, Bj, ldb, pair_cold_scale(D), S.Bp2, s) || pair_cold_launch(D, S.Bp2, Cj, ldc, s);
    if (!rc && hot && S.hot.Bh2 != S.Bp2) rc = pair_copy(D, Bj, ldb, pair_hot_scale(D), (double2 *)S.hot.Bh2, s);
    if (!rc && hot) rc = pair_hot_launch(D, S.hot, Cj, ldc, s);
  }
  mx_scratch_free(S.buf, s, S.pooled);
  return rc;
}

/* ---- the pairs in place ------------------------------------------------------------------------------ */

bool mx_spmm_pairs_in_place_run(const mx_device *D) {
  return mx_spmm_pairs_run(D) && D->cold == MX_COLD_SEGMENT && !mx_spmm_pairs_hot(D) && !pair_cold_scaled(D);
}

int mx_spmm_pair_product_in_place(const mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  if (k % 2 || !mx_spmm_pairs_in_place_run(D)) return mx_fail("mx_spmm_pair_product_in_place: %d columns, or D's cold part cannot run them", k);
  for (int j = 0; j < k; j += 2) {
    const pair_in in = {(const double2 *)(B + (long long)j * ldb), (const double2 *)(B + (long long)(j + 1) * ldb)};
    if (pair_segment_launch<MX_XH_TWO_COLS>(D, in, C + (long long)j * ldc, ldc, s)) return 1;
  }
  return 0;
}
