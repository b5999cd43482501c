/* mx_device_impl.h - the device-side struct behind mx_device and the kernel launchers.
 * Internal to src/cuda: each kernel family lives in its own .cu with one host launcher. */
#ifndef MX_DEVICE_IMPL_H
#define MX_DEVICE_IMPL_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <vector>
#include "mx_device.h"
#include "mx_tuning.h"

/* One hot work item = one warp: TC blocks [begin, end) (DU, absolute block indices) or slot columns
 * [begin, end) (SE, relative to se_ptr[chunk]) of chunk `chunk`.
 * slot < 0: the warp owns the whole chunk and adds into y directly; slot >= 0: it writes 8
 * partials at partials[slot*8 .. slot*8+7], summed in slot order by the split pass. */
struct mx_hot_work {
  int chunk, begin, end, slot;
};
/* A chunk split over npieces warps whose partials occupy slots first_slot .. first_slot+npieces-1. */
struct mx_hot_split {
  int chunk, first_slot, npieces, pad;
};

struct mx_cusparse_cold; /* mx_cold_cusparse.cu */
struct mx_cold_pack_dev; /* mx_cold_pack_dev.h */
struct mx_cold_rowpat_dev; /* mx_cold_rowpat.cu */
struct mx_hot_pack_dev; /* mx_hot_pack_dev.h */

#define MX_SPMM_NWAYS 10 /* the ways a timed SpMM choice can time (mx_spmm_ways.cu) */

struct mx_device {
  int nrows, ncols, nnz;
  mx_cold_kernel cold; /* resolved: SEGMENT, MERGE or CUSPARSE */
  mx_cusparse_cold *csp; /* cuSPARSE descriptors when cold == MX_COLD_CUSPARSE, else NULL */
  mx_cold_pack_dev *pack; /* packed cold CSR (mx_device_compress), read by the segment kernel; NULL = off */
  mx_cold_rowpat_dev *rowpat; /* the cold CSR in row-pattern form (mx_device_compress), its product
                               * replacing the segment kernel's; NULL = none (never beside a pack) */
  int rowpat_lost; /* the last value refresh found the row patterns no longer hold the values */
  mx_hot_pack_dev *hot_pack; /* the SE values as one value or column constants (mx_device_compress); NULL = plain */
  struct mx_hub_split_dev *hub_split; /* mx_device_hub: the product runs its rest device, then the hub part; NULL = off */
  int plain_released; /* mx_device_hub_release_plain: cold_col and cold_val freed while the split runs the
                       * products (cold_rowptr stays); mx_device_hub_restore_plain brings them back */

  struct mx_spmm_long *spmm_long; /* the SpMM's long cold rows in pieces (mx_spmm.cu); NULL until the first SpMM */
  char spmm_choice[MX_SPMM_BUCKETS]; /* per bucket of k (spmm_bucket): 0 not timed yet, else MX_SPMM_KERNELS, _COLUMNS, _PANELS, _HUB,
                                      * _WHOLE, _ROWPAT, _PADDED, _PANELS_SPMV, _PAIRS or _PAIRS_IN_PLACE */
  float spmm_way_us[MX_SPMM_BUCKETS][MX_SPMM_NWAYS]; /* the timed choice's times (us): kernels, panels, k SpMVs, the hub
                                                      * split's way, the whole matrix all cold, the row patterns, the padded panels,
                                                      * the panels and SpMVs, the pairs, the pairs in place */
  mx_device *spmm_whole; /* the whole matrix all cold beside D's hot part (mx_device_spmm_whole); NULL = none */
  int spmm_whole_failed; /* its build failed: not tried again */
  int spmm_group;       /* mx_device_spmm_set_group: columns per launch group forced (0: the rule) */
  int spmm_reads_plain; /* the SpMM kernels read the plain cold arrays (mx_spmm_ways.cu): set while they
                         * run a timed choice or a forced way, and after a timed choice while a
                         * bucket keeps a way that reads them (cleared when the choices are reset);
                         * a pack release frees nothing meanwhile */
  int spmm_kernels_ran; /* the SpMM kernels ran once on D: a hub split never frees the plain arrays from then on */

  int pack_released; /* mx_device_pack_release_plain: MX_PLAIN_COLS | MX_PLAIN_VALS of cold_col / cold_val
                      * freed while the pack replaces them (never beside plain_released: a split drops
                      * the pack first); mx_device_pack_restore_plain decodes them back */

  /* cold CSR */
  int cold_nnz;
  int64_t cold_maxlen; /* its longest row when the cold rule measured it (AUTO), else -1 */
  int *cold_rowptr, *cold_col, *cold_src;
  double *cold_val;
  /* segment plan: block b multiplies segment seg_plan[b].z and owns rows seg_plan[b].x .. .y-1 */
  int seg_nblocks;
  int4 *seg_plan;
  /* the segment kernel's long rows in parts (mx_cold_segment.cuh): per segment (seg_nseg), two slots for
   * the sum of the split row it starts or covers (the SpMV's one, the SpMM pairs' two; 0 between launches) */
  int seg_nseg;
  unsigned long long *seg_parts;
  int seg_split; /* its longest cold row may be split (> MX_SEG_SPLIT_TAIL): the kernels with the split's code */
  /* merge plan: tile t starts at merge_coord[t] = (row, nnz) on the merge path */
  int merge_ntiles;
  int2 *merge_coord;
  int *carry_row;
  double *carry_val;
  unsigned long long *carry_slot; /* the carries in the kernel instead (mx_cold_merge.cu); 0 between launches */

  /* hot */
  mx_hot_mode mode;
  int nchunks, hot_nnz, du_nblocks, se_nslots, hot_nvals;
  int *hot_row, *du_chunkptr, *du_col, *du_valptr, *se_ptr, *se_col, *hot_src;
  uint32_t *du_bitmap;
  double *du_val, *se_val;
  int hot_nwork, hot_nsplit, hot_nslots;
  mx_hot_work *hot_work;
  mx_hot_split *hot_split;
  double *hot_partials;

  /* x-hot cache (mx_xhot.cu): xhot[i] = x[xhot_col[i]] gathered once per SpMV; stored column codes
   * <= -2 name rank -2-code in xhot. xhot_mode: MX_XH_OFF / MX_XH_ON (mx_kernel_common.cuh). */
  int xhot_mode, xhot_n, xhot_cold; /* xhot_cold: the cold CSR holds codes too */
  int *xhot_col;
  double *xhot;

  /* staging for refresh and the host-vector entry point; cold_identity: the cold CSR is the whole
   * matrix in input order (a borrowed cold part, no hot part), so refresh copies values straight
   * into cold_val and there is no val_in or cold_src. The x/y/z staging vectors exist only while
   * something needs them (mx_device_staging): a timing holds them for its length; products on host
   * vectors (staging_host) and cuSPARSE's descriptors (csp) keep them */
  double *val_in, *x_stage, *y_stage, *z_stage;
  bool cold_identity;
  bool staging_host;

  size_t bytes;            /* device bytes held now */
  size_t build_peak_bytes; /* most device bytes held at once while building and uploading */

  /* the feature passes queued by mx_device_features_start and not yet finished (mx_features_gpu.cu):
   * they read cold_rowptr and cold_col, which stay until mx_device_free drops the job first */
  struct mx_features_job *features_job;
};

/* mx_device::spmm_choice: the timed way of a bucket of k */
enum {
  MX_SPMM_KERNELS  = MX_SPMM_WAY_KERNELS,
  MX_SPMM_COLUMNS  = MX_SPMM_WAY_COLUMNS,
  MX_SPMM_PANELS   = MX_SPMM_WAY_PANELS,
  MX_SPMM_HUB      = MX_SPMM_WAY_HUB,
  MX_SPMM_WHOLE    = MX_SPMM_WAY_WHOLE,
  MX_SPMM_ROWPAT   = MX_SPMM_WAY_ROWPAT,
  MX_SPMM_PADDED   = MX_SPMM_WAY_PADDED,
  MX_SPMM_PANELS_SPMV = MX_SPMM_WAY_PANELS_SPMV,
  MX_SPMM_PAIRS    = MX_SPMM_WAY_PAIRS,
  MX_SPMM_PAIRS_IN_PLACE = MX_SPMM_WAY_PAIRS_IN_PLACE
};

/* bits of mx_device::pack_released */
enum { MX_PLAIN_COLS = 1, MX_PLAIN_VALS = 2 };

/* Record a message for mx_device_last_error; returns 1 so callers can `return mx_fail(...)`. */
int mx_fail(const char *fmt, ...);
/* Check a CUDA status; on error records "what: cudaGetErrorString" and returns 1. */
int mx_cuda_check(cudaError_t e, const char *what);
#define MX_CUDA_TRY(call)                                   \
  do {                                                      \
    if (mx_cuda_check((call), #call)) return 1;             \
  } while (0)
#define MX_LAUNCH_CHECK(name)                               \
  do {                                                      \
    if (mx_cuda_check(cudaGetLastError(), name)) return 1;  \
  } while (0)

/* Whether the current device takes programmatic dependent launches (compute capability >= 9.0). */
bool mx_pdl_supported(void);
/* *nsm = the current device's SM count (what grid sizes per SM are counted against) */
int mx_sm_count(int *nsm);

/* kernel<<<grid, block, smem, s>>>(args...), with programmatic stream serialization where pdl and the
 * device takes it: the kernel may then be scheduled while the stream's previous kernel runs, after
 * that one's mx_pdl_trigger, and must mx_pdl_wait (mx_kernel_common.cuh) before it touches what the
 * kernels before it write or read; args are converted to the kernel's parameter types.
 * Launched early: the segment kernel, plain or packed, always, and it never signals its own next
 * kernel (that one is scheduled at its end); the merge kernel where it adds its carries itself (at
 * most MX_MERGE_INLINE_WAVES waves), signalling at its start. The measurements behind both:
 * docs/performance.md, "Launched early". */
template <typename... KArgs, typename... Args>
static inline cudaError_t mx_launch_pdl(bool pdl, void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem, cudaStream_t s,
                                        Args... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at;
  cfg.numAttrs = pdl && mx_pdl_supported() ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, ((KArgs)args)...);
}

/* True when the MX_FAULT_INJECT countdown (mx_device.cu) says this checked call fails (tests only). */
bool mx_fault_injected(void);
/* Record the failure e of allocation call `call` of `bytes` (clears it: not sticky) with the device's
 * free and total memory; returns 1. */
int mx_alloc_failed(cudaError_t e, size_t bytes, const char *call, const char *what);

/* cudaMalloc of `bytes`; on failure the message names the bytes asked for and the device's free
 * and total memory. */
int mx_cuda_alloc(void **p, size_t bytes, const char *what);

/* *p = count T's on the device, counted in D->bytes (count 0: nullptr, nothing allocated). */
template <typename T>
static inline int mx_cuda_alloc_on(mx_device *D, T **p, size_t count, const char *what) {
  *p = nullptr;
  if (count == 0) return 0;
  if (mx_cuda_alloc((void **)p, count * sizeof(T), what)) return 1;
  D->bytes += count * sizeof(T);
  return 0;
}

/* *p = count value slots on the device (mx_kernel_common.cuh), all 0 (empty) before any product:
 * cleared and waited for here, since the products run on other streams, which need not wait for
 * this one. */
static inline int mx_slots_alloc_on(mx_device *D, unsigned long long **p, size_t count, const char *what) {
  if (mx_cuda_alloc_on(D, p, count, what)) return 1;
  if (count == 0) return 0;
  return mx_cuda_check(cudaMemset(*p, 0, count * sizeof(unsigned long long)), what) || mx_cuda_check(cudaStreamSynchronize(0), what);
}

/* *host = a malloc'd host copy of count T's of the device array dev (NULL, nothing copied, for count
 * 0 or dev NULL): the downloads that tests compare with host encoders byte for byte. */
template <typename T>
static inline int mx_download_array(const T *dev, size_t count, T **host, const char *what) {
  *host = nullptr;
  if (count == 0 || !dev) return 0;
  *host = (T *)malloc(count * sizeof(T));
  if (!*host) return mx_fail("%s: out of host memory", what);
  return mx_cuda_check(cudaMemcpy(*host, dev, count * sizeof(T), cudaMemcpyDeviceToHost), what);
}

/* Free what mx_cuda_alloc_on gave *p (count T's; nothing if NULL) and set it NULL. */
template <typename T>
static inline void mx_cuda_free_on(mx_device *D, T **p, size_t count) {
  if (*p) {
    cudaFree(*p);
    D->bytes -= count * sizeof(T);
  }
  *p = nullptr;
}

/* Setup scratch (mx_scratch_pool.cu): bytes from the current device's stream-ordered pool, ordered
 * on `stream`, when the pool exists or make_pool allows making it (*from_pool = true; freed on the
 * same stream without a synchronisation), else cudaMalloc (*from_pool = false: cudaFree). Scratch
 * never outlives its setup step. mx_scratch_pools_release destroys the pools (before the CUDA
 * context goes; the next scratch allowed to make them makes them again). */
int mx_scratch_malloc(void **p, size_t bytes, cudaStream_t stream, bool make_pool, bool *from_pool, const char *what);
void mx_scratch_free(void *p, cudaStream_t stream, bool from_pool);
void mx_scratch_pools_release(void);

/* A device's kept workspace for a short job started by one call and collected by a later one
 * (mx_workspace.cu): a stream, an event, device scratch and a pinned host buffer, handed out with
 * buffers of at least the bytes asked and given back once nothing queued on the stream is left.
 * mx_workspaces_release destroys the idle ones (before the CUDA context goes). */
struct mx_workspace {
  int dev;
  cudaStream_t stream;
  cudaEvent_t done;
  void *dev_buf;
  size_t dev_bytes;
  void *host_buf; /* pinned */
  size_t host_bytes;
};
int mx_workspace_take(size_t dev_bytes, size_t host_bytes, mx_workspace **w);
void mx_workspace_give(mx_workspace *w);
void mx_workspaces_release(void);

/* Wait for D's pending feature passes (if any) and free what they hold (mx_features_gpu.cu). */
void mx_features_job_drop(mx_device *D);

/* Setup tracing for diagnosis: with MX_TRACE_SETUP=1 in the environment, each setup step of an
 * upload, a GPU build or a compression prints its wall time since the previous call (device
 * synchronised) to stderr; MX_TRACE_SETUP=host: the host's time alone (no synchronisation: what
 * queueing work costs the caller); what NULL starts the clock. Unset: one test per step. */
void mx_trace_step(const char *what);

/* The GPU builder (mx_build.cu): every array of the format of A at crux c into D (counts, cold and
 * hot arrays, gather maps, values, val_in) and the counts into *shell (arrays NULL). D->cold, plans,
 * x-hot and staging are left to the caller (the plans: mx_plans_gpu.cu). */
int mx_build_on_device(const mx_csr *A, mx_crux c, mx_mode_request mode, mx_device *D, mx_format *shell);

/* bad (device, zeroed by the caller) = 1 if one of the nnz column indices col is outside [0, n):
 * queued on the default stream (mx_build_check.cu). 0 or 1 with the error recorded. */
int mx_check_columns_launch(int64_t nnz, int n, const int *col, int *bad);

/* mx_device_build without waiting for the warm-up (mx_warm.cu): the warm-up's own build. */
int mx_device_build_unwarmed(const mx_csr *A, mx_crux c, mx_mode_request mode, mx_cold_kernel cold, int xhot_cols,
                             mx_format *shell, mx_device **D);

/* Launch plans made on the GPU from D's cold_rowptr and chunk pointers (mx_plans_gpu.cu; equal to the
 * host planners of mx_device.cu): the segment plan (seg_plan, seg_nblocks), the merge plan
 * (merge_coord, merge_ntiles, carry arrays), the hot plan of D->mode (hot_work, hot_split,
 * hot_partials and their counts); and the cold-kernel rule's max and sum of squares of the cold row
 * lengths. Synchronous; 0 or 1 with the error recorded. */
int mx_plan_segments_dev(mx_device *D);
int mx_plan_merge_dev(mx_device *D);
int mx_plan_hot_dev(mx_device *D);
int mx_cold_row_stats_dev(mx_device *D, int64_t *maxlen, int64_t *sumsq);

/* Launchers (0 or 1 with the error recorded). Cold ones write every row of y (= cold x + z). */
int mx_cold_segment_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s);
int mx_cold_merge_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s);
/* cusparseSpMV (CSR ALG2) on the cold CSR: setup at upload (after the staging vectors exist),
 * preprocess again after a value refresh, free. */
int mx_cold_cusparse_setup(mx_device *D);

/* The staging vectors x (ncols), y and z (nrows) allocated where missing (mx_device.cu); for_host:
 * products on host vectors use them from now on. mx_device_staging_release frees them unless host
 * products or cuSPARSE's descriptors (D->csp) use them. */
int mx_device_staging(mx_device *D, bool for_host);
void mx_device_staging_release(mx_device *D);
int mx_cold_cusparse_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s);
int mx_cold_cusparse_refresh(mx_device *D, cudaStream_t s);
void mx_cold_cusparse_free(mx_device *D);
/* Hot ones add into y at hot_row[]. */
int mx_hot_du_launch(const mx_device *D, const double *x, double *y, cudaStream_t s);
int mx_hot_se_launch(const mx_device *D, const double *x, double *y, cudaStream_t s);
int mx_hot_split_launch(const mx_device *D, double *y, cudaStream_t s);
/* packed cold CSR (mx_cold_pack.cu): after D's cold_val was refreshed on stream s, choose and
 * encode the values again (synchronises s; nothing without a pack); free the pack (its bytes leave
 * D->bytes; nothing without one) */
int mx_cold_pack_dev_refresh(mx_device *D, cudaStream_t s);
/* mx_device_pack_restore_plain; decode_values false: the released values are allocated, not decoded
 * (a value refresh, which writes every one of them) */
int mx_pack_restore_plain(mx_device *D, bool decode_values);
void mx_cold_pack_dev_free(mx_device *D);
/* row-pattern form (mx_cold_rowpat.cu). build: D's cold CSR into D->rowpat when it holds it and,
 * unless req->form is MX_FORM_ROWPAT, takes fewer bytes than any pack could (*kept = 1; else 0 and
 * *why says why; forced: an error); needs the segment kernel's plan. launch: y = C x + z in the
 * segment kernel's summation order. refresh: after D's cold_val was refreshed on stream s, the form
 * chosen again by its request (mx_device_compress). info: the form's fields of *info (left as they
 * are without one). free: nothing without one. */
int mx_cold_rowpat_dev_build(mx_device *D, const mx_pack_request *req, int *kept, const char **why);
/* the cold half of mx_device_compress (mx_cold_pack.cu): D's pack and row-pattern form freed, then
 * made again by req (row patterns where they pay, else a pack); the hot values are left alone */
int mx_cold_compress_dev(mx_device *D, const mx_pack_request *req);
int mx_cold_rowpat_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s);
/* C = (the cold CSR in row-pattern form) B for k columns (column-major, leading dimensions ldb,
 * ldc), each column bitwise mx_cold_rowpat_launch's y of that column with z = NULL. */
int mx_cold_rowpat_spmm_launch(const mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s);
int mx_cold_rowpat_dev_refresh(mx_device *D, cudaStream_t s);
int mx_cold_rowpat_dev_info(const mx_device *D, mx_device_pack_info *info);
void mx_cold_rowpat_dev_free(mx_device *D);
/* Free what the SpMM kernels keep on D (mx_spmm.cu; nothing without it). */
void mx_spmm_dev_free(mx_device *D);
/* The SpMM of a device whose products the hub split runs (mx_device_hub.cu): the rest device's SpMM
 * (mx_device_spmm), then the hub part added in groups of 8 columns (mx_hub_dev_spmm_add). */
int mx_device_hub_spmm(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s);
/* Every bucket's SpMM way timed again at its next product (mx_spmm_ways.cu): the ways changed (a hub split made or dropped). */
void mx_spmm_choice_reset(mx_device *D);
/* A value refresh of D (mx_device_refresh_values, after D->val_in received the values): the SpMM's
 * whole-matrix device (mx_device_spmm_whole) takes them too, on the GPU (mx_spmm_ways.cu; nothing without it). */
int mx_spmm_whole_refresh(mx_device *D, cudaStream_t s);
/* The rest device of D's hub split (NULL without one). */
mx_device *mx_device_hub_rest(const mx_device *D);
/* hub split built on the GPU (mx_cold_hub.cu): the m x n CSR (device arrays, nnz nonzeros) split by
 * its K most used columns: the hub part into *hub (the arrays mx_hub_dev_upload gives for
 * mx_cold_hub_build's split of the same CSR) and the rest into rest's cold CSR (allocated on rest,
 * its counts set); *hub_nnz the hub nonzeros. 0 or 1 (error recorded; rest's arrays then freed by its
 * mx_device_free) */
int mx_hub_dev_build(const int *rowptr, const int *col, const double *val, int m, int n, int nnz, int K, mx_device *rest,
                     struct mx_hub_dev **hub, int64_t *hub_nnz);
/* mx_cold_hub_stats on the GPU (the same CSR as device arrays): *hub_nnz, *hub_rows. 0 or 1 (error
 * recorded; both then 0). */
int mx_hub_dev_stats(const int *rowptr, const int *col, int m, int n, int nnz, int K, int64_t *hub_nnz, int64_t *hub_rows);
/* an all-cold D whose counts and cold CSR the caller set on the GPU, finished as mx_device_build
 * finishes one (mx_device.cu); D freed on failure */
int mx_device_finish_cold(mx_device *D, mx_cold_kernel cold);
/* hub split (mx_device_hub.cu): y = rest x (+ z), then y += hub x; drop: the split freed (nothing
 * without one); kernel: the rest device switched to cold kernel k (the split dropped if it cannot) */
int mx_device_hub_launch(mx_device *D, const double *x, const double *z, double *y, void *stream);
void mx_device_hub_drop(mx_device *D);
void mx_device_hub_kernel(mx_device *D, mx_cold_kernel k);
/* x-hot cache (mx_xhot.cu), set up on the device arrays already in D: request as in
 * mx_device_upload_xhot, cap_auto the most columns AUTO takes, cold = 1 codes the cold CSR too. */
int mx_xhot_setup(mx_device *D, int request, int cap_auto, int cold);
/* xhot[i] = x[xhot_col[i]] on stream s (nothing when the cache is off) */
int mx_xhot_launch(const mx_device *D, const double *x, cudaStream_t s);
/* The preferred carveout of cold kernel k (MX_MERGE_CARVEOUT / MX_SEG_CARVEOUT of mx_tuning.h, or the
 * environment's override, read once); -1: none */
int mx_cold_carveout(mx_cold_kernel k);
/* Before a cold kernel's first launch (*done false): its preferred carveout, when mx_cold_carveout(k)
 * says one (the caller keeps *done, one flag per kernel instantiation). */
template <class K>
static inline int mx_cold_carveout_once(K *kernel, mx_cold_kernel k, bool *done) {
  if (*done) return 0;
  *done = true;
  const int percent = mx_cold_carveout(k);
  if (percent >= 0) MX_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, percent));
  return 0;
}
/* preferred shared-memory carveout (percent) of the cold kernels' cached instantiations */
int mx_cold_merge_set_carveout(int percent);
/* the merge plan's carries for ntiles tiles: carry_row/val for the fixup kernel, or carry_slot (all
 * 0) for the carries in the kernel (mx_cold_merge.cu) */
int mx_merge_carries_alloc(mx_device *D, int ntiles);
/* y[carry_row[t]] += the carries carry_val of ntiles merge tiles, run by run in tile order (the
 * fixup of the merge kernel without carries in the kernel; nothing for one tile) */
int mx_merge_fixup_launch(int ntiles, int nrows, const int *carry_row, const double *carry_val, double *y, cudaStream_t s);
/* C[:, 0..kb) = the cold CSR times a 2-column row-major panel Bp2 of B (kb = 1 or 2 columns used) on
 * D's merge plan (D->cold == MX_COLD_MERGE): the merge kernel's tiles with two sums a row; column j
 * is bitwise the merge SpMV of B's column j (mx_spmm_merge.cu). packed: read through D's pack (in
 * use; Bp2 then scaled by the column constants under COLCONST), else the plain arrays. */
int mx_spmm_merge_panel2(const mx_device *D, int kb, const double2 *Bp2, double *C, long long ldc, bool packed, cudaStream_t s);
/* *small = whether the merge grid of `items` merge items (rows + cold nonzeros) is at most
 * MX_MERGE_INLINE_WAVES waves of MX_MERGE_MIN_BLOCKS tiles per SM of the current device. */
int mx_merge_grid_small(int64_t items, bool *small);
/* tests and benchmarks: -1 (default) the carries in the kernel by MX_MERGE_INLINE_WAVES, 0 never, 1
 * always, for merge plans made after the call; returns the previous mode */
extern "C" int mx_cold_merge_set_inline(int mode);
int mx_cold_segment_set_carveout(int percent);

/* dst[i] = src[i] >= 0 ? val[src[i]] : 0 for i < n */
int mx_gather_launch(double *dst, const int *src, const double *val, int n, cudaStream_t s);

#endif
