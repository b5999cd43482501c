/* mx_device.cu - the C API of mx_device.h: upload with its launch plans, SpMV, value refresh.
 *
 * y = A x (+ z): the cold kernel writes every row of y (= C x + z), then the hot kernel adds H x into
 * the hot rows, all on the caller's stream; nothing is allocated, copied or synchronised per call.
 *
 * MX_COLD_AUTO rule (row-length skew of the COLD CSR, computed at upload):
 *   merge  if the longest cold row is longer than MX_AUTO_MAX_ROW_SEGS (4) segments of MX_SEG_NNZ
 *          nonzeros (8192), or if the coefficient of variation (std/mean) of cold row lengths
 *          exceeds MX_AUTO_CV (8.0), or MX_AUTO_CV_SMALL (1.0) where the merge grid is small
 *          (mx_merge_grid_small: there the merge kernel adds its carries itself, no second launch);
 *   segment otherwise.
 * Thresholds fitted over a grid of (cv, longest row) on the predictor's labels, both kernels timed at
 * (0,0); the small grids' on the labels of the merge kernel with carries in the kernel
 * (docs/performance.md, "Cold kernels"). The segment kernel sums long rows by a warp, so it
 * also wins on skewed matrices of short rows; merge wins where rows are power-law.
 * AUTO stops there (the predictor's cold kernel replaces the rule's through mx_device_set_cold_kernel).
 * MX_COLD_TIMED (the AUTO before the predictor) goes on measuring:
 * for a cold CSR of >= MX_AUTO_CUSPARSE_MIN_NNZ nonzeros the rule is checked by timing: both plans
 * are uploaded, both kernels timed, and the other kernel kept only when faster by more than
 * MX_AUTO_KERNEL_MARGIN. Then that kernel and cusparseSpMV (CSR ALG2, deterministic) are timed at
 * upload and cuSPARSE is kept if it is faster by more than MX_AUTO_CUSPARSE_MARGIN: our cold kernels
 * lose to cuSPARSE on some power-law graphs and win on stencils, so a measured choice per matrix is
 * the only rule that never loses (docs/performance.md, "Cold kernels").
 *
 * x-hot cache (mx_xhot.cu, rule in mx_tuning.h): chosen at upload from the stored column codes; when
 * on, the cold and hot kernels read the packed hot x values, gathered first on the same stream.
 * Benchmark A/B overrides of the AUTO rule (environment, read at upload; unset in normal use):
 * MX_XHOT_COLS (cap, 0 = off), MX_XHOT_COLD (1: cold CSR too), MX_XHOT_CARVEOUT (percent, preferred shared-memory carveout of the
 * cached cold kernels); read once per process: MX_MERGE_CARVEOUT / MX_SEG_CARVEOUT (percent, the cold
 * kernels' carveout, mx_cold_carveout; -1 the driver's choice). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>
#include "mx_device_impl.h"
#include "mx_hot_pack_dev.h"
#include "mx_kernel_common.cuh" /* MX_XH_* */
#include "mx_upload.h"

/* ---- errors ---------------------------------------------------------------------------------------- */

static thread_local char mx_last_error[512];

int mx_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(mx_last_error, sizeof mx_last_error, fmt, ap);
  va_end(ap);
  return 1;
}

/* Test-only fault injection: with MX_FAULT_INJECT=N in the environment (read at the first checked
 * call), the N-th checked CUDA call of the process (allocation, copy, launch, CUB call) reports a
 * failure although it succeeded, so that tests can walk every error path of a GPU failure
 * (tests/petsc/gpu_fault_injection.sh). Unset in normal use: one integer compare per check. */
bool mx_fault_injected(void) {
  static long countdown = -2; /* -2: not read yet; -1: off */
  if (countdown == -2) {
    const char *v = getenv("MX_FAULT_INJECT");
    countdown = v && *v ? atol(v) : -1;
  }
  return countdown > 0 && --countdown == 0;
}

int mx_cuda_check(cudaError_t e, const char *what) {
  if (e == cudaSuccess && mx_fault_injected()) return mx_fail("%s: injected fault (MX_FAULT_INJECT)", what);
  if (e == cudaSuccess) return 0;
  return mx_fail("%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

/* per device ordinal (the first 64; others asked each time): 0 not asked, 1 no, 2 yes */
bool mx_pdl_supported(void) {
  static std::atomic<int> known[64];
  int dev = 0, major = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return false;
  if (dev >= 0 && dev < 64 && known[dev]) return known[dev] == 2;
  const bool yes = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess && major >= 9;
  if (dev >= 0 && dev < 64) known[dev] = yes ? 2 : 1;
  return yes;
}

extern "C" const char *mx_device_last_error(void) { return mx_last_error; }

extern "C" void mx_device_release_pools(void) {
  mx_device_warm_wait(); /* its build may hold a pool */
  mx_h2d_release();
  mx_scratch_pools_release();
  mx_workspaces_release();
}

extern "C" int mx_device_synchronize(void) { return mx_cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

extern "C" int mx_device_mem_free(size_t *bytes) {
  size_t total = 0;
  *bytes       = 0;
  return mx_cuda_check(cudaMemGetInfo(bytes, &total), "cudaMemGetInfo");
}

int mx_sm_count(int *nsm) {
  int dev = 0;
  MX_CUDA_TRY(cudaGetDevice(&dev));
  MX_CUDA_TRY(cudaDeviceGetAttribute(nsm, cudaDevAttrMultiProcessorCount, dev));
  return 0;
}

extern "C" size_t mx_device_l2_bytes(void) {
  static int l2 = -1;
  if (l2 < 0) {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev) != cudaSuccess) {
      cudaGetLastError(); /* clear: "no device" is an answer, not an error */
      l2 = 0;
    }
  }
  return (size_t)l2;
}

extern "C" int mx_device_count(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError(); /* clear: "no driver" is an answer, not an error */
    return 0;
  }
  return n > 0 ? 1 : 0;
}

/* Setup tracing (mx_device_impl.h) */
void mx_trace_step(const char *what) {
  static int on = -1;
  static std::chrono::steady_clock::time_point last;
  if (on < 0) {
    const char *v = getenv("MX_TRACE_SETUP");
    on = !v || !*v || *v == '0' ? 0 : strcmp(v, "host") ? 1 : 2;
  }
  if (!on) return;
  if (on == 1) cudaDeviceSynchronize();
  const auto now = std::chrono::steady_clock::now();
  if (what) fprintf(stderr, "mx_trace_setup: %-28s %8.3f ms\n", what, std::chrono::duration<double, std::milli>(now - last).count());
  last = now;
}

/* ---- allocation helpers ----------------------------------------------------------------------------- */

int mx_alloc_failed(cudaError_t e, size_t bytes, const char *call, const char *what) {
  cudaGetLastError(); /* an allocation failure is not sticky: clear it */
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  return mx_fail("%s: %s of %zu bytes failed: %s (device memory: %zu bytes free of %zu)", what, call, bytes,
                 cudaGetErrorString(e), free_b, total_b);
}

int mx_cuda_alloc(void **p, size_t bytes, const char *what) {
  const cudaError_t e = cudaMalloc(p, bytes);
  if (e == cudaSuccess && mx_fault_injected()) {
    cudaFree(*p);
    *p = nullptr;
    return mx_fail("%s: cudaMalloc of %zu bytes: injected fault (MX_FAULT_INJECT)", what, bytes);
  }
  if (e == cudaSuccess) return 0;
  *p = nullptr;
  return mx_alloc_failed(e, bytes, "cudaMalloc", what);
}

template <typename T>
static int dev_upload(mx_device *D, T **p, const T *host, size_t count, const char *what) {
  if (mx_cuda_alloc_on(D, p, count, what)) return 1;
  if (count == 0) return 0;
  if (!host) return mx_fail("%s: host array is NULL for %zu entries", what, count);
  return mx_cuda_check(cudaMemcpy(*p, host, count * sizeof(T), cudaMemcpyHostToDevice), what);
}

extern "C" void mx_device_free(mx_device *D) {
  if (!D) return;
  mx_features_job_drop(D); /* its passes read the cold CSR */
  mx_device_hub_drop(D);
  mx_cold_cusparse_free(D);
  mx_cold_pack_dev_free(D); /* packed cold CSR (mx_cold_pack.cu) */
  mx_cold_rowpat_dev_free(D); /* row-pattern form (mx_cold_rowpat.cu) */
  mx_hot_pack_dev_free(D);    /* SE values packed (mx_hot_pack.cu) */
  mx_spmm_dev_free(D);        /* the SpMM's long-row pieces (mx_spmm.cu) */
  void *ptrs[] = {D->xhot_col, D->xhot, D->cold_rowptr, D->cold_col,    D->cold_src,    D->cold_val,  D->seg_plan, D->seg_parts, D->merge_coord,
                  D->carry_row,   D->carry_val,   D->carry_slot, D->hot_row,     D->du_chunkptr, D->du_col,      D->du_valptr,
                  D->se_ptr,      D->se_col,      D->hot_src,     D->du_bitmap, D->du_val,        D->se_val,
                  D->hot_work,    D->hot_split,   D->hot_partials, D->val_in,   D->x_stage,       D->y_stage,
                  D->z_stage};
  for (void *p : ptrs)
    if (p) cudaFree(p);
  free(D);
}

/* ---- staging vectors -------------------------------------------------------------------------------------- */

int mx_device_staging(mx_device *D, bool for_host) {
  if (!D->x_stage && mx_cuda_alloc_on(D, &D->x_stage, D->ncols, "alloc x staging")) return 1;
  if (!D->y_stage && mx_cuda_alloc_on(D, &D->y_stage, D->nrows, "alloc y staging")) return 1;
  if (!D->z_stage && mx_cuda_alloc_on(D, &D->z_stage, D->nrows, "alloc z staging")) return 1;
  if (for_host) D->staging_host = true;
  return 0;
}

void mx_device_staging_release(mx_device *D) {
  if (D->staging_host || D->csp) return;
  mx_cuda_free_on(D, &D->x_stage, D->ncols);
  mx_cuda_free_on(D, &D->y_stage, D->nrows);
  mx_cuda_free_on(D, &D->z_stage, D->nrows);
}

/* ---- launch plans (host, from a host format: mx_device_upload; the GPU builder's are made on the GPU
 * by mx_plans_gpu.cu, equal entry for entry) ---------------------------------------------------------------- */

/* Segment plan. Segment b = cold nonzeros [b*SEG, (b+1)*SEG) owns rows [rs[b], rs[b+1]) where
 * rs[b] = first row whose rowptr >= b*SEG (nrows if none; trailing empty rows go to the last
 * segment). A segment owning more than MX_SEG_MAX_ROWS rows (runs of empty rows) is given several
 * blocks, each owning a consecutive share of those rows. Entry: (first row, end row, segment, end of
 * the staged range = segment end, or the last row's end when its tail past the segment is short). */
static std::vector<int4> plan_segments(const mx_format *F) {
  const int nseg = F->cold_nnz > 0 ? (int)(((int64_t)F->cold_nnz + MX_SEG_NNZ - 1) / MX_SEG_NNZ) : 1;
  std::vector<int> rs(nseg + 1);
  int r = 0;
  for (int b = 0; b < nseg; ++b) {
    const int64_t s0 = (int64_t)b * MX_SEG_NNZ;
    while (r < F->nrows && F->cold_rowptr[r] < s0) ++r;
    rs[b] = r;
  }
  rs[nseg] = F->nrows;
  std::vector<int4> plan;
  plan.reserve(nseg);
  for (int b = 0; b < nseg; ++b) {
    const int s1 = (int)std::min<int64_t>((int64_t)(b + 1) * MX_SEG_NNZ, F->cold_nnz);
    int ra = rs[b];
    do {
      const int rb = std::min(rs[b + 1], ra + MX_SEG_MAX_ROWS);
      const int end = rb > ra ? F->cold_rowptr[rb] : s1; /* end of the last owned row */
      const int s1_ext = end > s1 && end - s1 <= MX_SEG_THREADS ? end : s1;
      plan.push_back(make_int4(ra, rb, b, s1_ext));
      ra = rb;
    } while (ra < rs[b + 1]);
  }
  return plan;
}

/* Merge plan: the merge-path coordinate (rows, nonzeros) at each tile start, and the end. */
static std::vector<int2> plan_merge(const mx_format *F, int *ntiles) {
  const int64_t items = (int64_t)F->nrows + F->cold_nnz;
  const int nt = (int)((items + MX_MERGE_TILE - 1) / MX_MERGE_TILE);
  std::vector<int2> c(nt + 1);
  const int32_t *a = F->cold_rowptr + 1; /* row end offsets */
  for (int t = 0; t <= nt; ++t) {
    const int64_t diag = std::min<int64_t>((int64_t)t * MX_MERGE_TILE, items);
    int64_t lo = std::max<int64_t>(diag - F->cold_nnz, 0), hi = std::min<int64_t>(diag, F->nrows);
    while (lo < hi) {
      const int64_t p = (lo + hi) / 2;
      if (a[p] <= diag - p - 1) lo = p + 1;
      else hi = p;
    }
    c[t] = make_int2((int)lo, (int)(diag - lo));
  }
  *ntiles = nt;
  return c;
}

/* Hot plan: one work item per chunk, chunks longer than `piece` units split into pieces.
 * DU (unit_div 1): begin/end are absolute TC block indices; SE (unit_div 8): slot columns relative
 * to the chunk's se_ptr. */
static void plan_hot(const int32_t *chunkptr, int nchunks, int unit_div, int piece, std::vector<mx_hot_work> &work,
                     std::vector<mx_hot_split> &split, int *nslots) {
  int slots = 0;
  for (int q = 0; q < nchunks; ++q) {
    const int len = (chunkptr[q + 1] - chunkptr[q]) / unit_div;
    const int off = unit_div == 1 ? chunkptr[q] : 0;
    if (len <= piece) {
      work.push_back({q, off, off + len, -1});
      continue;
    }
    const int np = (len + piece - 1) / piece;
    split.push_back({q, slots, np, 0});
    for (int p = 0; p < np; ++p) work.push_back({q, off + p * piece, off + std::min(len, (p + 1) * piece), slots + p});
    slots += np;
  }
  *nslots = slots;
}

/* The rule at the top of this file from the cold rows' longest length and sum of squared lengths
 * (integers: no floating-point dependency chain over the rows; sum l^2 <= max l * nnz < 2^62), on the
 * current device (the merge grid's size in waves). */
static int cold_rule(int32_t nrows, int64_t cold_nnz, int64_t maxlen, int64_t sumsq, mx_cold_kernel *k) {
  *k = MX_COLD_SEGMENT;
  if (nrows == 0 || cold_nnz == 0) return 0;
  bool small = false;
  if (mx_merge_grid_small((int64_t)nrows + cold_nnz, &small)) return 1;
  const double mean = (double)cold_nnz / nrows;
  const double var = (double)sumsq / nrows - mean * mean;
  const double cv = sqrt(var > 0.0 ? var : 0.0) / mean;
  if (maxlen > (int64_t)MX_AUTO_MAX_ROW_SEGS * MX_SEG_NNZ || cv > (small ? MX_AUTO_CV_SMALL : MX_AUTO_CV)) *k = MX_COLD_MERGE;
  return 0;
}

/* the longest cold row of F and the sum of its rows' squared lengths (mx_cold_row_stats_dev's, on the host) */
static void cold_row_stats_host(const mx_format *F, int64_t *maxlen, int64_t *sumsq) {
  *maxlen = *sumsq = 0;
  for (int r = 0; r < F->nrows; ++r) {
    const int64_t l = F->cold_rowptr[r + 1] - F->cold_rowptr[r];
    *maxlen = l > *maxlen ? l : *maxlen;
    *sumsq += l * l;
  }
}

/* *k = the cold kernel of request req for the host format F: the rule's statistics on the host
 * (*longest: the longest cold row where measured, else -1). */
static int resolve_cold(const mx_format *F, mx_cold_kernel req, mx_cold_kernel *k, int64_t *longest) {
  *longest = -1;
  *k = req;
  if (req == MX_COLD_SEGMENT || req == MX_COLD_MERGE) return 0; /* cusparse: ours first, then switched */
  int64_t maxlen, sumsq;
  cold_row_stats_host(F, &maxlen, &sumsq);
  *longest = maxlen;
  return cold_rule(F->nrows, F->cold_nnz, maxlen, sumsq, k);
}

/* The same for D's cold CSR, the statistics on the GPU (mx_cold_row_stats_dev; D->cold_maxlen set). */
static int resolve_cold_dev(mx_device *D, mx_cold_kernel req, mx_cold_kernel *k) {
  *k = req;
  if (req == MX_COLD_SEGMENT || req == MX_COLD_MERGE) return 0;
  int64_t maxlen, sumsq;
  if (mx_cold_row_stats_dev(D, &maxlen, &sumsq)) return 1;
  D->cold_maxlen = maxlen;
  return cold_rule(D->nrows, D->cold_nnz, maxlen, sumsq, k);
}

/* ---- upload ---------------------------------------------------------------------------------------------- */

static int env_int(const char *name, int def) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : def;
}

int mx_cold_carveout(mx_cold_kernel k) {
  static const int merge = env_int("MX_MERGE_CARVEOUT", MX_MERGE_CARVEOUT), segment = env_int("MX_SEG_CARVEOUT", MX_SEG_CARVEOUT);
  return k == MX_COLD_MERGE ? merge : k == MX_COLD_SEGMENT ? segment : -1;
}

/* TIMED measures its choice on a cold CSR this large (choose_cold); upload then plans both kernels. */
static bool auto_timed(int64_t cold_nnz, mx_cold_kernel req) {
  return req == MX_COLD_TIMED && cold_nnz >= MX_AUTO_CUSPARSE_MIN_NNZ;
}

static bool cold_request_valid(mx_cold_kernel k) {
  return k == MX_COLD_AUTO || k == MX_COLD_SEGMENT || k == MX_COLD_MERGE || k == MX_COLD_CUSPARSE || k == MX_COLD_TIMED;
}

/* The segment kernel's long-row parts: two value slots per segment (the SpMM's pairs use both), all 0; and whether a
 * row may be split (the longest cold row: the rule's where it measured it, else from P's row
 * pointers on the host or D's on the GPU). */
static int alloc_segment_parts(const mx_format *P, mx_device *D) {
  const int nseg = D->cold_nnz > 0 ? (int)(((int64_t)D->cold_nnz + MX_SEG_NNZ - 1) / MX_SEG_NNZ) : 1;
  int64_t maxlen = D->cold_maxlen, sumsq;
  if (maxlen < 0 && P) cold_row_stats_host(P, &maxlen, &sumsq);
  else if (maxlen < 0 && mx_cold_row_stats_dev(D, &maxlen, &sumsq)) return 1;
  D->seg_split = maxlen > MX_SEG_SPLIT_TAIL;
  if (mx_slots_alloc_on(D, &D->seg_parts, 2 * (size_t)nseg, "segment parts")) return 1;
  D->seg_nseg = nseg;
  return 0;
}

/* Launch plan of our cold kernel k (segment or merge): from the host format P (its counts and
 * cold_rowptr), or, P NULL, on the GPU from D's arrays. */
static int make_cold_plan(const mx_format *P, mx_cold_kernel k, mx_device *D) {
  if (k == MX_COLD_SEGMENT && alloc_segment_parts(P, D)) return 1;
  if (!P) return k == MX_COLD_SEGMENT ? mx_plan_segments_dev(D) : mx_plan_merge_dev(D);
  if (k == MX_COLD_SEGMENT) {
    std::vector<int4> plan = plan_segments(P);
    D->seg_nblocks = (int)plan.size();
    return dev_upload(D, &D->seg_plan, plan.data(), plan.size(), "upload segment plan");
  }
  std::vector<int2> c = plan_merge(P, &D->merge_ntiles);
  return dev_upload(D, &D->merge_coord, c.data(), c.size(), "upload merge plan") || mx_merge_carries_alloc(D, D->merge_ntiles);
}

/* Free what cold kernel k needs beyond the cold CSR (its plan, or the cuSPARSE descriptors). */
static void free_cold_plan(mx_device *D, mx_cold_kernel k) {
  if (k == MX_COLD_SEGMENT) {
    mx_cuda_free_on(D, &D->seg_plan, (size_t)D->seg_nblocks);
    mx_cuda_free_on(D, &D->seg_parts, 2 * (size_t)D->seg_nseg);
    D->seg_nblocks = D->seg_nseg = D->seg_split = 0;
  } else if (k == MX_COLD_MERGE) {
    mx_cuda_free_on(D, &D->merge_coord, (size_t)D->merge_ntiles + 1);
    mx_cuda_free_on(D, &D->carry_row, (size_t)D->merge_ntiles);
    mx_cuda_free_on(D, &D->carry_val, (size_t)D->merge_ntiles);
    mx_cuda_free_on(D, &D->carry_slot, (size_t)D->merge_ntiles);
    D->merge_ntiles = 0;
  } else if (k == MX_COLD_CUSPARSE) {
    mx_cold_cusparse_free(D);
  }
}

/* Launch plans of the resolved cold kernel (both of ours under TIMED) and of the hot mode, from the
 * host format P (its counts, cold_rowptr and the hot chunk pointers du_chunkptr or se_ptr), or, P
 * NULL, on the GPU from D's arrays. */
static int make_plans(const mx_format *P, mx_cold_kernel cold_req, mx_device *D) {
  const bool both = auto_timed(D->cold_nnz, cold_req);
  if ((both || D->cold == MX_COLD_SEGMENT) && make_cold_plan(P, MX_COLD_SEGMENT, D)) return 1;
  if ((both || D->cold == MX_COLD_MERGE) && make_cold_plan(P, MX_COLD_MERGE, D)) return 1;
  if (D->mode == MX_HOT_NONE) return 0;
  if (!P) return mx_plan_hot_dev(D);
  std::vector<mx_hot_work> work;
  std::vector<mx_hot_split> split;
  if (D->mode == MX_HOT_DU) plan_hot(P->du_chunkptr, P->nchunks, 1, MX_DU_BLOCKS_PER_WARP, work, split, &D->hot_nslots);
  else plan_hot(P->se_ptr, P->nchunks, MX_CHUNK_ROWS, MX_SE_COLS_PER_WARP, work, split, &D->hot_nslots);
  D->hot_nwork = (int)work.size();
  D->hot_nsplit = (int)split.size();
  return dev_upload(D, &D->hot_work, work.data(), work.size(), "upload hot work plan") ||
         dev_upload(D, &D->hot_split, split.data(), split.size(), "upload hot split plan") ||
         mx_cuda_alloc_on(D, &D->hot_partials, (size_t)D->hot_nslots * MX_CHUNK_ROWS, "alloc hot partials");
}

/* Everything after the format's arrays are on the device (uploaded or built there): x-hot codes,
 * launch plans (P: the host format of make_plans, NULL for plans made on the GPU), staging buffers. */
static int finish_setup(const mx_format *P, int xhot_request, mx_cold_kernel cold_req, mx_device *D) {
  /* forced requests code every array (so tests cover every kernel); AUTO codes the cold CSR only
   * when MX_XHOT_COLD says so */
  const int xhot_cold = xhot_request != MX_XHOT_AUTO ? 1 : env_int("MX_XHOT_COLD", MX_XHOT_COLD);
  if (mx_xhot_setup(D, xhot_request, env_int("MX_XHOT_COLS", MX_XHOT_MAX_COLS), xhot_cold)) return 1;
  mx_trace_step("x-hot setup");
  const int carveout = env_int("MX_XHOT_CARVEOUT", MX_XHOT_CARVEOUT);
  if (D->xhot_n > 0 && carveout >= 0 && (mx_cold_merge_set_carveout(carveout) || mx_cold_segment_set_carveout(carveout)))
    return 1;
  if (make_plans(P, cold_req, D)) return 1;
  mx_trace_step("launch plans");
  if (!D->cold_identity && !D->val_in && mx_cuda_alloc_on(D, &D->val_in, D->nnz, "alloc value staging")) return 1;
  if (D->bytes > D->build_peak_bytes) D->build_peak_bytes = D->bytes;
  return 0;
}

/* The host format's arrays onto the device, as they are. */
static int upload_arrays(const mx_format *F, mx_device *D) {
  D->nrows = F->nrows;
  D->ncols = F->ncols;
  D->nnz = F->nnz;
  D->cold_nnz = F->cold_nnz;
  D->cold_identity = F->cold_borrowed != 0;
  if (dev_upload(D, &D->cold_rowptr, F->cold_rowptr, F->cold_rowptr ? (size_t)F->nrows + 1 : 0, "upload cold_rowptr") ||
      dev_upload(D, &D->cold_col, F->cold_col, F->cold_nnz, "upload cold_col") ||
      dev_upload(D, &D->cold_val, F->cold_val, F->cold_nnz, "upload cold_val") ||
      dev_upload(D, &D->cold_src, F->cold_src, F->cold_src ? F->cold_nnz : 0, "upload cold_src"))
    return 1;
  D->mode = F->hot_nnz > 0 ? F->mode : MX_HOT_NONE;
  D->nchunks = F->nchunks;
  D->hot_nnz = F->hot_nnz;
  if (D->mode == MX_HOT_NONE) return 0;
  if (dev_upload(D, &D->hot_row, F->hot_row, (size_t)F->nchunks * MX_CHUNK_ROWS, "upload hot_row")) return 1;
  if (D->mode == MX_HOT_DU) {
    D->du_nblocks = F->du_nblocks;
    D->hot_nvals = F->hot_nnz;
    if (dev_upload(D, &D->du_chunkptr, F->du_chunkptr, (size_t)F->nchunks + 1, "upload du_chunkptr") ||
        dev_upload(D, &D->du_bitmap, F->du_bitmap, F->du_nblocks, "upload du_bitmap") ||
        dev_upload(D, &D->du_col, F->du_col, (size_t)F->du_nblocks * MX_BLOCK_COLS, "upload du_col") ||
        dev_upload(D, &D->du_valptr, F->du_valptr, (size_t)F->du_nblocks + 1, "upload du_valptr") ||
        dev_upload(D, &D->du_val, F->du_val, F->hot_nnz, "upload du_val"))
      return 1;
  } else if (D->mode == MX_HOT_SE) {
    D->se_nslots = F->se_nslots;
    D->hot_nvals = F->se_nslots;
    if (dev_upload(D, &D->se_ptr, F->se_ptr, (size_t)F->nchunks + 1, "upload se_ptr") ||
        dev_upload(D, &D->se_col, F->se_col, F->se_nslots, "upload se_col") ||
        dev_upload(D, &D->se_val, F->se_val, F->se_nslots, "upload se_val"))
      return 1;
  } else {
    return mx_fail("mx_device_upload: unknown hot mode %d", (int)D->mode);
  }
  return dev_upload(D, &D->hot_src, F->hot_src, D->hot_nvals, "upload hot_src");
}

/* y = C x + z with the cold kernel D->cold (the one dispatch point for SpMV and the timing below). */
static int cold_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s) {
  if (D->cold == MX_COLD_CUSPARSE) return mx_cold_cusparse_launch(D, x, z, y, s);
  if (D->cold == MX_COLD_MERGE) return mx_cold_merge_launch(D, x, z, y, s);
  if (D->rowpat) return mx_cold_rowpat_launch(D, x, z, y, s); /* the segment kernel's sums, in row-pattern form */
  return mx_cold_segment_launch(D, x, z, y, s);
}

/* Kernels a and b of D timed in alternation (a, b, a, b, ...: drift of clocks or of other work on
 * the GPU falls on both alike): MX_AUTO_TIME_REPS warm-up calls of each, then the median of
 * MX_AUTO_TIME_REPS timed calls of each, in ms, on the staging vectors and the default stream. All
 * calls are queued before one synchronisation, so the GPU never waits for the host between them and
 * a call's time is its GPU time, as in a solver loop (a synchronisation after each call added the
 * host's launch work, more for cuSPARSE, to every sample). Leaves D->cold = b. */
static int time_pair(mx_device *D, mx_cold_kernel a, mx_cold_kernel b, float *ta, float *tb) {
  const int n = 2 * MX_AUTO_TIME_REPS;
  const mx_cold_kernel k2[2] = {a, b};
  cudaEvent_t ev[2 * MX_AUTO_TIME_REPS + 1];
  float t[2][MX_AUTO_TIME_REPS];
  int made = 0, rc = 0;
  for (; made < n + 1 && !rc; ++made) rc = mx_cuda_check(cudaEventCreate(&ev[made]), "cudaEventCreate");
  for (int k = 0; k < n && !rc; ++k) { /* warm-up */
    D->cold = k2[k & 1];
    rc = cold_launch(D, D->x_stage, nullptr, D->y_stage, 0);
  }
  if (!rc) rc = mx_cuda_check(cudaEventRecord(ev[0], 0), "cudaEventRecord");
  for (int k = 0; k < n && !rc; ++k) { /* call k runs between events k and k+1 */
    D->cold = k2[k & 1];
    rc = cold_launch(D, D->x_stage, nullptr, D->y_stage, 0) ||
         mx_cuda_check(cudaEventRecord(ev[k + 1], 0), "cudaEventRecord");
  }
  if (!rc) rc = mx_cuda_check(cudaEventSynchronize(ev[n]), "cudaEventSynchronize");
  for (int k = 0; k < n && !rc; ++k) rc = mx_cuda_check(cudaEventElapsedTime(&t[k & 1][k >> 1], ev[k], ev[k + 1]), "cudaEventElapsedTime");
  for (int e = 0; e < made; ++e) cudaEventDestroy(ev[e]);
  if (rc) return 1;
  for (int i = 0; i < 2; ++i) std::sort(t[i], t[i] + MX_AUTO_TIME_REPS);
  *ta = t[0][MX_AUTO_TIME_REPS / 2];
  *tb = t[1][MX_AUTO_TIME_REPS / 2];
  return 0;
}

/* Both cold plans were uploaded (auto_timed): time the segment and the merge kernel, keep the
 * row-skew rule's choice (D->cold) unless the other is faster by more than MX_AUTO_KERNEL_MARGIN,
 * and free the other's plan. x_stage holds the timing vector. */
static int keep_faster_kernel(mx_device *D) {
  const mx_cold_kernel rule = D->cold, other = rule == MX_COLD_MERGE ? MX_COLD_SEGMENT : MX_COLD_MERGE;
  float t_rule, t_other;
  if (time_pair(D, rule, other, &t_rule, &t_other)) return 1;
  const bool take_other = t_other < (1.0f - (float)MX_AUTO_KERNEL_MARGIN) * t_rule;
  D->cold = take_other ? other : rule;
  free_cold_plan(D, take_other ? rule : other);
  return 0;
}

/* The cold kernel. Under TIMED on a cold CSR of >= MX_AUTO_CUSPARSE_MIN_NNZ nonzeros, measured at
 * upload on x = 1 (not zeros: zeros can run faster than data), each pair in alternation (time_pair):
 * our two kernels against each other (keep_faster_kernel), then the winner against cusparseSpMV
 * (CSR ALG2), kept only when faster by more than
 * MX_AUTO_CUSPARSE_MARGIN. cuSPARSE also when asked for. Our kernel stays (also when asked for
 * cuSPARSE) where cuSPARSE cannot take the cold CSR: x-hot codes in it (cuSPARSE reads plain
 * columns), no nonzero, more stored entries than rows x cols (duplicates; cusparseCreateCsr refuses
 * that), or a setup error. */
static bool cusparse_can_take(const mx_device *D) {
  return D->cold_nnz > 0 && !D->xhot_cold && (int64_t)D->cold_nnz <= (int64_t)D->nrows * D->ncols;
}

static int choose_cold_kernel(mx_device *D, mx_cold_kernel req) {
  const bool timed = auto_timed(D->cold_nnz, req);
  if (timed) {
    std::vector<double> ones((size_t)D->ncols, 1.0);
    if (mx_device_staging(D, false)) return 1;
    MX_CUDA_TRY(cudaMemcpy(D->x_stage, ones.data(), sizeof(double) * D->ncols, cudaMemcpyHostToDevice));
    if (keep_faster_kernel(D)) return 1;
  }
  if (!cusparse_can_take(D) || (req != MX_COLD_CUSPARSE && !timed)) return 0;
  const mx_cold_kernel ours = D->cold;
  if (mx_cold_cusparse_setup(D)) {
    mx_cold_cusparse_free(D);
    return 0;
  }
  D->cold = MX_COLD_CUSPARSE;
  if (req == MX_COLD_CUSPARSE) return 0;
  float t_ours, t_sp;
  if (time_pair(D, ours, MX_COLD_CUSPARSE, &t_ours, &t_sp)) return 1;
  if (t_sp < (1.0f - (float)MX_AUTO_CUSPARSE_MARGIN) * t_ours) return 0;
  D->cold = ours;
  mx_cold_cusparse_free(D);
  return 0;
}

/* choose_cold_kernel, then the staging vectors its timings used freed (cuSPARSE's kept). */
static int choose_cold(mx_device *D, mx_cold_kernel req) {
  const int rc = choose_cold_kernel(D, req);
  mx_device_staging_release(D);
  return rc;
}

extern "C" int mx_device_upload(const mx_format *F, mx_cold_kernel cold, mx_device **Dout) {
  return mx_device_upload_xhot(F, cold, MX_XHOT_AUTO, Dout);
}

extern "C" int mx_device_upload_xhot(const mx_format *F, mx_cold_kernel cold, int xhot_cols, mx_device **Dout) {
  mx_device_warm_wait();
  if (!Dout) return mx_fail("mx_device_upload: output pointer is NULL");
  *Dout = nullptr;
  if (!F) return mx_fail("mx_device_upload: format is NULL");
  if (xhot_cols < MX_XHOT_AUTO) return mx_fail("mx_device_upload: x-hot request %d < MX_XHOT_AUTO", xhot_cols);
  if (F->nrows < 0 || F->ncols < 0 || F->nnz < 0 || F->cold_nnz < 0 || F->hot_nnz < 0 || F->nchunks < 0)
    return mx_fail("mx_device_upload: negative size in the format");
  if (F->nrows > 0 && !F->cold_rowptr) return mx_fail("mx_device_upload: cold_rowptr is NULL");
  if (F->cold_borrowed ? F->hot_nnz != 0 || F->cold_nnz != F->nnz : F->cold_nnz > 0 && !F->cold_src)
    return mx_fail("mx_device_upload: the cold gather map is missing (only a borrowed cold part of a format without hot part has none)");
  if (!cold_request_valid(cold)) return mx_fail("mx_device_upload: unknown cold kernel %d", (int)cold);
  if ((int64_t)F->nrows + F->cold_nnz > INT32_MAX - MX_MERGE_TILE)
    return mx_fail("mx_device_upload: rows + cold nonzeros (%lld) exceed the 32-bit merge path",
                   (long long)F->nrows + F->cold_nnz);
  if (mx_device_count() == 0) return mx_fail("mx_device_upload: no CUDA device is visible");
  mx_device *D = (mx_device *)calloc(1, sizeof *D);
  if (!D) return mx_fail("mx_device_upload: out of host memory");
  if (resolve_cold(F, cold, &D->cold, &D->cold_maxlen) || upload_arrays(F, D) || finish_setup(F, xhot_cols, cold, D) || choose_cold(D, cold)) {
    mx_device_free(D);
    return 1;
  }
  *Dout = D;
  return 0;
}

/* An all-cold device format whose counts and cold CSR (allocated with mx_cuda_alloc_on(D, ...)) the
 * caller has set on the GPU: the cold kernel rule, the staging and the plans as mx_device_build
 * makes them. D is freed on failure. */
int mx_device_finish_cold(mx_device *D, mx_cold_kernel cold) {
  D->cold_identity = true;
  D->cold_nnz = D->nnz;
  D->mode = MX_HOT_NONE;
  D->cold_maxlen = -1;
  if (!cold_request_valid(cold) || resolve_cold_dev(D, cold, &D->cold) || finish_setup(nullptr, MX_XHOT_AUTO, cold, D) ||
      choose_cold(D, cold)) {
    mx_device_free(D);
    return 1;
  }
  return 0;
}

extern "C" int mx_device_build(const mx_csr *A, mx_crux c, mx_mode_request mode, mx_cold_kernel cold, int xhot_cols,
                               mx_format *shell, mx_device **Dout) {
  mx_device_warm_wait();
  return mx_device_build_unwarmed(A, c, mode, cold, xhot_cols, shell, Dout);
}

int mx_device_build_unwarmed(const mx_csr *A, mx_crux c, mx_mode_request mode, mx_cold_kernel cold, int xhot_cols,
                             mx_format *shell, mx_device **Dout) {
  if (!Dout || !shell) return mx_fail("mx_device_build: output pointer is NULL");
  *Dout = nullptr;
  memset(shell, 0, sizeof *shell);
  if (xhot_cols < MX_XHOT_AUTO) return mx_fail("mx_device_build: x-hot request %d < MX_XHOT_AUTO", xhot_cols);
  if (!cold_request_valid(cold)) return mx_fail("mx_device_build: unknown cold kernel %d", (int)cold);
  if (mx_device_count() == 0) return mx_fail("mx_device_build: no CUDA device is visible");
  mx_device *D = (mx_device *)calloc(1, sizeof *D);
  if (!D) return mx_fail("mx_device_build: out of host memory");
  D->cold_maxlen = -1;
  mx_trace_step(nullptr);
  int rc = mx_build_on_device(A, c, mode, D, shell);
  mx_trace_step("build: end (scratch freed)");
  if (!rc && (int64_t)D->nrows + D->cold_nnz > INT32_MAX - MX_MERGE_TILE)
    rc = mx_fail("mx_device_build: rows + cold nonzeros (%lld) exceed the 32-bit merge path", (long long)D->nrows + D->cold_nnz);
  if (!rc) { /* the rule and the plans on the GPU: nothing of the matrix comes back */
    rc = resolve_cold_dev(D, cold, &D->cold);
    mx_trace_step("cold kernel rule");
    rc = rc || finish_setup(nullptr, xhot_cols, cold, D);
    mx_trace_step("staging");
    rc = rc || choose_cold(D, cold);
    mx_trace_step("cold kernel choice");
  }
  if (rc) {
    mx_device_free(D);
    memset(shell, 0, sizeof *shell);
    return 1;
  }
  *Dout = D;
  return 0;
}

extern "C" int mx_device_download(const mx_device *D, const mx_format *shell, mx_format *F) {
  if (!D || !shell || !F) return mx_fail("mx_device_download: NULL argument");
  if (D->pack_released) return mx_fail("mx_device_download: the plain cold arrays are released (mx_device_pack_restore_plain first)");
  memset(F, 0, sizeof *F); /* counts from shell, arrays from D: the copy owns every array */
  F->nrows = shell->nrows;
  F->ncols = shell->ncols;
  F->nnz = shell->nnz;
  F->crux = shell->crux;
  F->hot_ncols = shell->hot_ncols;
  F->hot_nrows = shell->hot_nrows;
  F->hot_nnz = shell->hot_nnz;
  F->nchunks = shell->nchunks;
  F->mode = shell->mode;
  F->du_nblocks = shell->du_nblocks;
  F->se_nslots = shell->se_nslots;
  F->cold_nnz = shell->cold_nnz;
  F->cold_diagonals = shell->cold_diagonals;
  const size_t nslots = (size_t)D->nchunks * MX_CHUNK_ROWS, nq = D->mode != MX_HOT_NONE ? (size_t)D->nchunks + 1 : 0;
  const size_t nb = D->mode == MX_HOT_DU ? (size_t)D->du_nblocks : 0, ns = D->mode == MX_HOT_SE ? (size_t)D->se_nslots : 0;
  const int rc = mx_download_array(D->cold_rowptr, (size_t)D->nrows + 1, &F->cold_rowptr, "download cold_rowptr") ||
                 mx_download_array(D->cold_col, (size_t)D->cold_nnz, &F->cold_col, "download cold_col") ||
                 mx_download_array(D->cold_val, (size_t)D->cold_nnz, &F->cold_val, "download cold_val") ||
                 mx_download_array(D->cold_identity ? nullptr : D->cold_src, (size_t)D->cold_nnz, &F->cold_src, "download cold_src") ||
                 mx_download_array(D->mode != MX_HOT_NONE ? D->hot_row : nullptr, nslots, &F->hot_row, "download hot_row") ||
                 mx_download_array(D->du_chunkptr, D->mode == MX_HOT_DU ? nq : 0, &F->du_chunkptr, "download du_chunkptr") ||
                 mx_download_array(D->du_bitmap, nb, &F->du_bitmap, "download du_bitmap") ||
                 mx_download_array(D->du_col, nb * MX_BLOCK_COLS, &F->du_col, "download du_col") ||
                 mx_download_array(D->du_valptr, nb ? nb + 1 : 0, &F->du_valptr, "download du_valptr") ||
                 mx_download_array(D->du_val, nb ? (size_t)D->hot_nnz : 0, &F->du_val, "download du_val") ||
                 mx_download_array(D->se_ptr, D->mode == MX_HOT_SE ? nq : 0, &F->se_ptr, "download se_ptr") ||
                 mx_download_array(D->se_col, ns, &F->se_col, "download se_col") ||
                 mx_download_array(D->se_val, ns, &F->se_val, "download se_val") ||
                 mx_download_array(D->mode != MX_HOT_NONE ? D->hot_src : nullptr, (size_t)D->hot_nvals, &F->hot_src, "download hot_src");
  if (rc) mx_format_free(F);
  return rc;
}

extern "C" size_t mx_device_build_peak_bytes(const mx_device *D) { return D ? D->build_peak_bytes : 0; }

extern "C" size_t mx_device_bytes(const mx_device *D) { return D ? D->bytes + mx_device_bytes(D->spmm_whole) : 0; }

extern "C" mx_cold_kernel mx_device_cold_kernel(const mx_device *D) { return D ? D->cold : MX_COLD_AUTO; }

extern "C" int mx_device_set_cold_kernel(mx_device *D, mx_cold_kernel k) {
  if (D && D->plain_released) return mx_fail("mx_device_set_cold_kernel: the plain cold CSR is released");
  if (!D) return mx_fail("mx_device_set_cold_kernel: device format is NULL");
  if (mx_device_pack_restore_plain(D)) return 1; /* cuSPARSE, or a kernel that may not read the pack, reads them */
  if (k == MX_COLD_TIMED || !cold_request_valid(k)) return mx_fail("mx_device_set_cold_kernel: cold kernel %d cannot be switched to", (int)k);
  if (k == MX_COLD_CUSPARSE && !cusparse_can_take(D))
    return mx_fail("mx_device_set_cold_kernel: cuSPARSE cannot take this cold CSR (x-hot codes, no nonzero or duplicates)");
  if (k == MX_COLD_AUTO && resolve_cold_dev(D, k, &k)) return 1;
  if (k == D->cold) return 0;
  const mx_cold_kernel old = D->cold;
  int rc;
  if (k == MX_COLD_CUSPARSE) rc = mx_cold_cusparse_setup(D);
  else rc = make_cold_plan(nullptr, k, D);
  if (rc) { /* D keeps the old kernel: free what the new one got so far */
    free_cold_plan(D, k);
    return 1;
  }
  free_cold_plan(D, old);
  if (old == MX_COLD_SEGMENT) mx_cold_rowpat_dev_free(D); /* its lane groups are the segment plan's */
  D->cold = k;
  mx_spmm_choice_reset(D); /* the SpMVs' speed changed, row patterns may be gone: the SpMM's ways timed again */
  mx_device_hub_kernel(D, k);
  if (D->bytes > D->build_peak_bytes) D->build_peak_bytes = D->bytes;
  return 0;
}

extern "C" int mx_device_xhot_cols(const mx_device *D) { return D ? D->xhot_n : 0; }

/* ---- SpMV ------------------------------------------------------------------------------------------------- */

extern "C" int mx_device_spmv(mx_device *D, const double *x, const double *z, double *y, void *stream) {
  if (!D) return mx_fail("mx_device_spmv: device format is NULL");
  if (D->nrows == 0) return 0;
  if (!y) return mx_fail("mx_device_spmv: y is NULL");
  if (!x && D->ncols > 0 && D->nnz > 0) return mx_fail("mx_device_spmv: x is NULL");
  if (D->hub_split) return mx_device_hub_launch(D, x, z, y, stream);
  cudaStream_t s = (cudaStream_t)stream;
  const double *xh; /* the SE kernel's x: x, or xs = s .* x under packed column constants (then x-hot
                     * serves the hot kernel alone and is gathered from xs: mx_hot_pack.cu) */
  if (mx_hot_pack_dev_x(D, x, s, &xh) || mx_xhot_launch(D, xh, s)) return 1;
  if (cold_launch(D, x, z, y, s)) return 1;
  if (D->mode == MX_HOT_DU) return mx_hot_du_launch(D, x, y, s);
  if (D->mode == MX_HOT_SE) return mx_hot_se_launch(D, xh, y, s);
  return 0;
}

extern "C" int mx_device_spmv_host(mx_device *D, const double *x, const double *z, double *y, void *stream) {
  if (!D) return mx_fail("mx_device_spmv_host: device format is NULL");
  if (D->nrows == 0) return 0;
  if (!y) return mx_fail("mx_device_spmv_host: y is NULL");
  if (!x && D->ncols > 0) return mx_fail("mx_device_spmv_host: x is NULL");
  cudaStream_t s = (cudaStream_t)stream;
  if (mx_device_staging(D, true)) return 1; /* host vectors: the product's every call stages */
  if (D->ncols > 0)
    MX_CUDA_TRY(cudaMemcpyAsync(D->x_stage, x, sizeof(double) * D->ncols, cudaMemcpyHostToDevice, s));
  if (z) MX_CUDA_TRY(cudaMemcpyAsync(D->z_stage, z, sizeof(double) * D->nrows, cudaMemcpyHostToDevice, s));
  if (mx_device_spmv(D, D->x_stage, z ? D->z_stage : nullptr, D->y_stage, stream)) return 1;
  MX_CUDA_TRY(cudaMemcpyAsync(y, D->y_stage, sizeof(double) * D->nrows, cudaMemcpyDeviceToHost, s));
  MX_CUDA_TRY(cudaStreamSynchronize(s));
  return 0;
}

/* ---- timing ----------------------------------------------------------------------------------------------- */

/* Median of reps full SpMVs (x-hot gather, cold, hot) on the staging vectors, as time_pair times the
 * cold kernels: warm-up calls, then every call between events k and k+1, one synchronisation. */
/* x[i] = v for i < n */
__global__ void fill_kernel(int n, double v, double *x) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}

extern "C" int mx_device_time_spmv(mx_device *D, int reps, double *seconds) {
  if (!D || !seconds) return mx_fail("mx_device_time_spmv: NULL argument");
  if (reps < 1) return mx_fail("mx_device_time_spmv: reps %d < 1", reps);
  *seconds = 0.0;
  if (D->nrows == 0) return 0;
  if (mx_device_staging(D, false)) return 1;
  if (D->ncols > 0) {
    fill_kernel<<<(D->ncols + 255) / 256, 256>>>(D->ncols, 1.0, D->x_stage);
    MX_LAUNCH_CHECK("fill x staging");
  }
  std::vector<cudaEvent_t> ev((size_t)reps + 1);
  std::vector<float> t((size_t)reps);
  int made = 0, rc = 0;
  for (; made < reps + 1 && !rc; ++made) rc = mx_cuda_check(cudaEventCreate(&ev[made]), "cudaEventCreate");
  for (int k = 0; k < 2 && !rc; ++k) rc = mx_device_spmv(D, D->x_stage, nullptr, D->y_stage, 0); /* warm-up */
  if (!rc) rc = mx_cuda_check(cudaEventRecord(ev[0], 0), "cudaEventRecord");
  for (int k = 0; k < reps && !rc; ++k)
    rc = mx_device_spmv(D, D->x_stage, nullptr, D->y_stage, 0) || mx_cuda_check(cudaEventRecord(ev[k + 1], 0), "cudaEventRecord");
  if (!rc) rc = mx_cuda_check(cudaEventSynchronize(ev[reps]), "cudaEventSynchronize");
  for (int k = 0; k < reps && !rc; ++k) rc = mx_cuda_check(cudaEventElapsedTime(&t[k], ev[k], ev[k + 1]), "cudaEventElapsedTime");
  for (int e = 0; e < made; ++e) cudaEventDestroy(ev[e]);
  if (rc) return 1;
  mx_device_staging_release(D); /* after the last event: the timed products are done */
  std::sort(t.begin(), t.end());
  *seconds = 1e-3 * (double)t[(size_t)reps / 2];
  return 0;
}

/* ---- values only ------------------------------------------------------------------------------------------ */

extern "C" int mx_device_refresh_values(mx_device *D, const double *val, void *stream) {
  if (!D) return mx_fail("mx_device_refresh_values: device format is NULL");
  if (D->nnz == 0) return 0;
  if (!val) return mx_fail("mx_device_refresh_values: val is NULL");
  if (D->plain_released) return mx_fail("mx_device_refresh_values: the plain cold CSR is released (mx_device_hub_restore_plain first)");
  if (mx_pack_restore_plain(D, false)) return 1; /* the new values go there (every one), the pack is encoded from them */
  cudaStream_t s = (cudaStream_t)stream;
  mx_device_hub_drop(D); /* its split holds the old values */
  D->rowpat_lost = 0; /* set again below if this refresh loses the row patterns */
  const bool had_rowpat = D->rowpat != nullptr;
  const mx_h2d_piece vals = {D->cold_identity ? D->cold_val : D->val_in, val, sizeof(double) * D->nnz};
  if (mx_h2d_copy(&vals, 1, s, "mx_device_refresh_values: uploading the values")) return 1;
  if (!D->cold_identity && mx_gather_launch(D->cold_val, D->cold_src, D->val_in, D->cold_nnz, s)) return 1;
  if (D->mode == MX_HOT_DU && mx_gather_launch(D->du_val, D->hot_src, D->val_in, D->hot_nvals, s)) return 1;
  if (D->mode == MX_HOT_SE && mx_gather_launch(D->se_val, D->hot_src, D->val_in, D->hot_nvals, s)) return 1;
  if (mx_spmm_whole_refresh(D, s)) return 1; /* the SpMM's whole matrix all cold beside the hot part */
  if (mx_hot_pack_dev_refresh(D, s)) return 1; /* SE values packed: chosen again */
  if (D->cold == MX_COLD_CUSPARSE && mx_cold_cusparse_refresh(D, s)) return 1;
  if (mx_cold_pack_dev_refresh(D, s)) return 1; /* packed cold CSR: values encoded again */
  if (mx_cold_rowpat_dev_refresh(D, s)) return 1; /* row-pattern form: chosen again for the new values */
  if (had_rowpat != (D->rowpat != nullptr)) mx_spmm_choice_reset(D); /* the SpMM's ways changed with the form */
  /* val may be pinned memory the caller reuses at once: finish the copy before returning */
  MX_CUDA_TRY(cudaStreamSynchronize(s));
  return 0;
}
