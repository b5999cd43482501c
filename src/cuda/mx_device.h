/* mx_device.h - the MatXtract format on an NVIDIA GPU (C-callable; CUDA stays inside src/cuda).
 *
 * The host mx_format is uploaded once (mx_device_upload); values are refreshed in place through
 * the gather map (mx_device_refresh_values); every SpMV runs on the caller's stream with no host
 * synchronisation, no allocation and no host<->device copy of the matrix.
 * Results are bitwise reproducible run to run: no floating-point atomics anywhere.
 * Streams are passed as void* (a cudaStream_t) so that C callers need no CUDA headers.
 */
#ifndef MX_DEVICE_H
#define MX_DEVICE_H

#include <stddef.h>
#include "../core/mx_format.h"
#include "../core/mx_cold_pack.h"
#include "../core/mx_cold_rowpat.h"
#include "../core/mx_features.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mx_device mx_device;

/* Cold kernel choice: the paper's Alg. 2 (segment products in shared memory, then row sums), a
 * merge-path split, or cusparseSpMV (CSR, deterministic ALG2). AUTO picks segment/merge by the
 * row-length rule documented in mx_device.cu, in O(nrows) and without running anything (the
 * predictor's cold kernel replaces it later through mx_device_set_cold_kernel); TIMED applies the
 * rule, then times both of our kernels and cuSPARSE at upload and keeps the fastest (tens of ms on
 * large matrices: the behaviour of AUTO before the predictor, kept for benchmarks and users who
 * want it). */
typedef enum {
  MX_COLD_AUTO = 0,
  MX_COLD_SEGMENT = 1,
  MX_COLD_MERGE = 2,
  MX_COLD_CUSPARSE = 3,
  MX_COLD_TIMED = 4
} mx_cold_kernel;

/* 1 if this build has CUDA and a device is visible, else 0 (never fails). */
int mx_device_count(void);

/* Wait for all work queued on the current device (cudaDeviceSynchronize); 0 or nonzero with
 * last_error set. */
int mx_device_synchronize(void);

/* Free device memory of the current GPU in *bytes (cudaMemGetInfo); 0 on success. */
int mx_device_mem_free(size_t *bytes);

/* The L2 cache of the current GPU in bytes, read once per process (0 without a device). */
size_t mx_device_l2_bytes(void);

/* Host threads that stage large host-to-device copies (the CSR a build uploads, a refresh's values)
 * through pinned buffers, 1..16 (default 4); 1 = the driver's own pageable cudaMemcpy. Process-wide.
 * Returns 0 or nonzero with last_error set. */
int mx_device_set_upload_threads(int threads);

/* Free the pools kept for the process: the pinned staging buffers (made on the first large upload)
 * and the setup steps' stream-ordered scratch pools (made on the first GPU build or compression).
 * Call before the CUDA context goes away; the next upload or setup makes them again. */
void mx_device_release_pools(void);

/* A process's first-use costs of the GPU code, off the critical path. CUDA loads a kernel's code at
 * its first launch; mx_device_warm_start() starts (once per process; later calls do nothing) a host
 * thread that runs the default plan's build and products on a tiny matrix on the current device, so
 * that their code is loaded while the caller does host work.
 * mx_device_warm_wait() waits for it; mx_device_build and mx_device_upload call it first, and the
 * process does at exit. Call start after the device is chosen (cudaSetDevice). Never fails: a failed
 * warm-up leaves the loading to the first build. */
void mx_device_warm_start(void);
void mx_device_warm_wait(void);
/* Whether mx_device_warm_start starts the warm-up (process-wide; default 1). */
void mx_device_set_warmup(int on);

/* Last error message of this thread's failing mx_device_* call ("" if none). */
const char *mx_device_last_error(void);

/* Upload F (all arrays, including the gather map). Returns 0 or nonzero with last_error set. */
int mx_device_upload(const mx_format *F, mx_cold_kernel cold, mx_device **D);

/* x-hot cache (see mx_tuning.h): MX_XHOT_AUTO = the measured rule; 0 = off; n > 0 = the n most used
 * columns (ties by index; fewer if fewer columns hold a nonzero), whatever their use count.
 * Results are bitwise the same with and without it (same products, same order).
 * mx_device_upload(F, cold, D) == mx_device_upload_xhot(F, cold, MX_XHOT_AUTO, D). */
#define MX_XHOT_AUTO (-1)
int mx_device_upload_xhot(const mx_format *F, mx_cold_kernel cold, int xhot_cols, mx_device **D);

/* Build the format of the host CSR A at crux c ON THE GPU: A is uploaded once (the upload a cuSPARSE
 * user pays too) and every step of mx_format_build runs there (mx_build.cu), so setup costs about
 * one upload at any crux. The result is the device format that mx_device_upload_xhot(F, cold,
 * xhot_cols) of F = mx_format_build_borrow(A, c, mode) gives, byte for byte. *shell receives F's
 * counts (crux, sizes, hot mode, du_nblocks/se_nslots, cold_nnz) with every array pointer NULL:
 * mx_format_bytes works on it, the CPU kernels do not (they need the host builder). Errors (bad A or
 * crux, out of device memory: the message names the bytes asked for and free) leave nothing behind. */
int mx_device_build(const mx_csr *A, mx_crux c, mx_mode_request mode, mx_cold_kernel cold, int xhot_cols,
                    mx_format *shell, mx_device **D);

/* The format arrays of D copied back into F (owned by F, mx_format_free frees them), counts from
 * shell (the one mx_device_build filled, or the host format D was uploaded from): for tests. Column
 * arrays come back as stored (x-hot codes when the cache is on); cold_src is NULL when D's cold part
 * is the input itself (identity map). */
int mx_device_download(const mx_device *D, const mx_format *shell, mx_format *F);

/* Most device bytes D held at once while it was built (scratch included) or uploaded. */
size_t mx_device_build_peak_bytes(const mx_device *D);

/* Columns in D's x-hot cache (0 when off). */
int mx_device_xhot_cols(const mx_device *D);

/* New values, same pattern: val[] is the host value array of the input CSR (nnz entries). */
int mx_device_refresh_values(mx_device *D, const double *val, void *stream);

void mx_device_free(mx_device *D);

/* Device bytes held by D. */
size_t mx_device_bytes(const mx_device *D);

/* Which cold kernel D runs (after AUTO was resolved). */
mx_cold_kernel mx_device_cold_kernel(const mx_device *D);

/* Switch D to cold kernel k (segment, merge, cusparse; auto = the row-length rule) without touching
 * the format: the new kernel's launch plan is made from D's cold row pointers (one device-to-host
 * copy of nrows+1 ints), then the old kernel's plan is freed. cusparse is refused (nonzero, D
 * unchanged) where it cannot take the cold CSR (x-hot codes in it, no nonzero, duplicates). Results
 * of every kernel are bitwise reproducible, but differ between kernels in the last bits (other
 * summation orders). Leaving the segment kernel drops a row-pattern form (its product is the segment
 * kernel's; compress again). Call it when no product of D is in flight. */
int mx_device_set_cold_kernel(mx_device *D, mx_cold_kernel k);

/* The predictor's features of the matrix D holds (mx_features_compute of the same CSR, bit for bit),
 * computed on the GPU: D must hold the whole matrix as its cold CSR with plain columns (crux (0,0),
 * no x-hot codes in the cold part), else nonzero. Scratch: about 16 bytes per nonzero, freed before
 * it returns (counted in the build peak); out of device memory is an error (the caller can fall back
 * to mx_features_compute). Synchronous: mx_device_features_start + mx_device_features_finish. */
int mx_device_features(mx_device *D, mx_features *f);

/* The same in two steps, so that the GPU passes run while the caller goes on (MatMults of the plan
 * in use on their own stream): start allocates the scratch and queues every pass on a stream of its
 * own, with no host wait (a job already pending is dropped first); ready sets *ready = 1 once the
 * passes finished, without waiting; finish waits for them, reads the counts back, frees the scratch
 * (cudaFree: it waits for the whole device) and computes f. At most one job per D; mx_device_free
 * drops a pending one. Nonzero on error (start: nothing is left pending; finish: the job is gone). */
int mx_device_features_start(mx_device *D);
int mx_device_features_ready(mx_device *D, int *ready);
int mx_device_features_finish(mx_device *D, mx_features *f);

/* y = A x (+ z if z != NULL); x, y, z are DEVICE pointers; y may equal z. */
int mx_device_spmv(mx_device *D, const double *x, const double *z, double *y, void *stream);

/* ---- many vectors (issue 43): C = A B for k dense columns ---------------------------------------------
 * B (ncols x k) and C (nrows x k) are column-major with leading dimensions ldb >= ncols, ldc >= nrows
 * (the padding rows of B are not read nor those of C written); C = A B overwrites C. k = 0 does
 * nothing. mx_device_spmm_plan chooses per k: the SpMM kernels (the cold CSR on the CUDA cores,
 * cols_per_pass columns of B per pass in registers, lanes_per_row lanes per row; a DU hot region on
 * the FP64 tensor cores and an SE one on the CUDA cores, 8-column slabs) where k >= min_k and they
 * move fewer bytes than k SpMVs of the form in use (a pack reads fewer matrix bytes than the plain
 * arrays the kernels read), or D holds row patterns, or the plain matrix fits half the L2
 * (mx_spmm_set_l2_rule), else one SpMV per column or, where the SpMV's cold kernel has them
 * (MX_SPMM_WAY_PAIRS, and _IN_PLACE), two columns at a time on the form it reads, whichever the
 * first product of the bucket of k times faster; where the rule says kernels, the first product of each bucket of k
 * (each k below 8, then by powers of two) times our kernels reading B in
 * place, our cold kernel on row-major panels of B (8, 16 or 32 columns copied per product: a
 * nonzero's values of B are then one contiguous segment, which pays on random columns), the SpMVs
 * and, where D holds the cold part in row-pattern form, that form for all k columns at once (each
 * column bitwise the SpMV's), and where they differ the padded panels (MX_SPMM_WAY_PADDED: fewer
 * panels with zero columns, which pays where a panel's fixed cost outweighs its columns), where k > 8
 * is not a multiple of 8 the panels with one SpMV per column left (MX_SPMM_WAY_PANELS_SPMV), below 8
 * columns the pairs, and keeps
 * the fastest for the bucket (our kernels alone under a forced
 * launch group); a change of the cold form (mx_device_compress, a refresh that gains or loses the
 * row patterns, mx_device_set_cold_kernel) times the buckets again. Under a hub split whose
 * plain arrays are released, the rest device decides alike and the hub part runs in groups of 8
 * columns; where D holds its plain arrays (mx_device_hub_restore_plain before an SpMM), that split
 * way is a fourth way of the timed choice beside the three on the whole matrix, and a release frees
 * nothing once the kernels ran (docs/performance.md, "Many vectors", times the split's way against
 * the whole matrix's). Column j of C is within rounding
 * of the SpMV of column j (not bitwise: other summation orders); a D's products repeat their bits
 * once the bucket's choice is made (the timed product leaves the kept way's bits in C): every way
 * repeats its bits (no floating-point atomics), which is why cuSPARSE's SpMM is not a way
 * (docs/performance.md, "Many vectors").
 * The kernels read D's plain cold arrays: where a pack released them they are decoded back on the
 * first SpMM that times or runs a kernel way, and kept while a bucket keeps such a way
 * (mx_device_pack_release_plain frees nothing meanwhile); where every timed bucket keeps a way that
 * does not read them (the SpMVs of the pack, say), a release frees them again.
 * Device pointers, queued on stream; 0 or 1 with the error recorded. */
typedef struct {
  int k;                   /* the columns the plan is for */
  int kernel;              /* 1: the SpMM kernels; 0: one SpMV per column */
  int timed;               /* 1: the choice of this k's bucket was timed (kernel, cold_panels and hub_slabs say which) */
  int cold_panels;         /* 1 (with kernel): the cold part by our kernel on row-major panels of B */
  int lanes_per_row;       /* cold kernel: lanes per row (2..32, by the mean cold row length) */
  int cols_per_pass;       /* cold kernel: B columns per pass (4 or 8) */
  int cols_per_launch;     /* columns per launch group (0: decided at the first product, from the columns'
                            * spread: all k where k columns' footprints fit half the L2, else fewer) */
  mx_hot_mode hot_mode;    /* DU: tensor cores; SE: CUDA cores; none */
  int hub_slabs;           /* 1: the hub split's way (its rest by the rest's plan, the hub part in slabs
                            * of 8 columns; k = 1: its SpMV): where D's plain arrays are released, or
                            * kept by the timed choice */
  int min_k;               /* the kernels are never taken below this k */
  int min_k_kernel;        /* the smallest k at which the byte rule takes the kernels (0: none up to 2^20) */
  double bytes_per_column; /* the rule's estimate of bytes moved by k SpMVs */
  double bytes_kernel;     /* ... and by the kernels */
  int whole;               /* 1: the whole matrix all cold, D's second device beside its hot part
                            * (mx_device_spmm_whole), kept by the timed choice */
  int rowpat;              /* 1: the cold part's row-pattern form for all k columns at once, kept by the
                            * timed choice */
  int padded_panels;       /* 1 (with cold_panels): the panels' last columns in one panel of the next
                            * power of two, padded with zero columns (MX_SPMM_WAY_PADDED), kept by the
                            * timed choice */
  int rest_spmv;           /* 1 (with cold_panels): the panels up to the last multiple of 8 columns, one SpMV
                            * per column left (MX_SPMM_WAY_PANELS_SPMV), kept by the timed choice */
  int pairs;               /* 1: two columns at a time by the segment kernel on the form in use
                            * (MX_SPMM_WAY_PAIRS or, with pairs_in_place, MX_SPMM_WAY_PAIRS_IN_PLACE;
                            * kernel 0), kept by the timed choice */
  int pairs_in_place;      /* 1 (with pairs): the pair's two columns read where they are in B, no copy */
  double way_us[10];       /* the timed choice of this k's bucket: our kernels on B in place, on the
                            * panels, k SpMVs, the hub split's way, the whole matrix all cold, the row
                            * patterns, the padded panels, the panels and SpMVs, the pairs, the pairs
                            * in place (us of one product each; 0: not timed) */
} mx_spmm_plan;
int mx_device_spmm_plan(const mx_device *D, int k, mx_spmm_plan *plan);
int mx_device_spmm(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, void *stream);
/* The way of every k forced (AUTO: the timed choice again), for tests and benchmarks; the byte rule
 * still sends a form that moves fewer bytes per SpMV to the SpMVs. 0, or 1 on a bad argument. */
typedef enum {
  MX_SPMM_WAY_AUTO     = 0,
  MX_SPMM_WAY_KERNELS  = 1, /* our kernels, B read in place (column-major) */
  MX_SPMM_WAY_COLUMNS  = 2, /* one SpMV per column */
  MX_SPMM_WAY_PANELS   = 3, /* the cold kernel on row-major panels of B (copied per product), the hot kernels */
  MX_SPMM_WAY_HUB      = 4, /* the hub split's rest and hub part (timed choice only: not forced) */
  MX_SPMM_WAY_WHOLE    = 5, /* the whole matrix all cold (forced only while mx_device_spmm_whole's device exists) */
  MX_SPMM_WAY_ROWPAT   = 6, /* the cold part in its row-pattern form, k columns a launch (forced only while D holds
                             * the form); a hot part then by the hot kernels on B in place */
  MX_SPMM_WAY_PADDED   = 7, /* the panels, the columns past the last full panel of 64 in one panel of the next power
                             * of two (zero padding columns) instead of the widest panels they fill: fewer panels,
                             * more columns; timed where the two differ (k mod 64 above 8 and not a power of two) */
  MX_SPMM_WAY_PANELS_SPMV = 8, /* the panels on the columns up to the last multiple of 8, one SpMV each for the
                             * 1-7 left (where a narrow panel's gathers miss the L2 a column's SpMV may be
                             * faster); timed where k > 8 is not a multiple of 8 */
  MX_SPMM_WAY_PAIRS    = 9, /* two columns at a time by the SpMV's cold kernel (segment or merge) on pairs, on the
                             * form the SpMV reads (plain or packed: one matrix read, one 16-byte gather a nonzero
                             * for two columns), an odd last column by the SpMV, a hot part by the hot kernels on
                             * B in place; forced only where the cold kernel has pairs (segment without x-hot
                             * codes in the cold part, merge; no hub split) */
  MX_SPMM_WAY_PAIRS_IN_PLACE = 10 /* the pairs by the segment kernel reading the two columns of B in place (two
                             * 8-byte gathers a nonzero, no copy of the pair): where the columns are local the
                             * copy's traffic is saved; timed beside the pairs where the segment kernel needs
                             * no column scale (no column-constant pack) and no SE hot part */
} mx_spmm_way;
int mx_device_spmm_set_way(mx_device *D, mx_spmm_way way);
/* The whole matrix all cold for the SpMM beside a hot part. A hot region is chosen for one vector;
 * with k columns the whole matrix in the all-cold kernels can be faster (the SE hot part adds into C
 * rows the cold part wrote, slot by slot). Where D has a hot part and k's bucket is not timed yet
 * (and the byte rule takes the kernels), mx_device_spmm_whole builds, from A (the CSR D holds,
 * checked by its counts), a second device on the GPU: A at crux (0,0), the cold kernel and x-hot by
 * their rules, no pack (what mx_device_build gives). The timed choice of the next mx_device_spmm of
 * that bucket times it as one more way; a timed choice after which no bucket keeps it frees it. A
 * value refresh of D copies its new values into it on the GPU. Elsewhere it does nothing. 0, or 1
 * with the error recorded (out of device memory: nothing is kept, the SpMM goes on without it and
 * it is not tried again for D). Synchronous. */
int mx_device_spmm_whole(mx_device *D, const mx_csr *A, int k);
/* Columns per launch group forced (0: the rule), for benchmarks; 0 or 1 on a bad argument. */
int mx_device_spmm_set_group(mx_device *D, int cols);
/* Where D's cold kernel is merge, whether a 2-column panel (k = 2, or the last 1-2 columns of a
 * larger k) runs its cold part on the merge tiles: 1 (default) where two columns of B fit half the L2
 * (the launch groups' rule), 2 always, 0 never (the lanes-per-row panel kernel); process-wide, for
 * tests and benchmarks; returns the previous mode (other values change nothing). Not thread-safe. */
int mx_spmm_set_merge_panels(int mode);
/* Whether the byte rule takes the kernels wherever the plain matrix fits half the L2 (1, default),
 * or by bytes alone there too (0: as on a matrix larger than the L2); process-wide, for tests and
 * benchmarks; returns the previous setting (other values change nothing). Not thread-safe. */
int mx_spmm_set_l2_rule(int on);
/* The same on host B and C, through device copies made for the call; synchronous. */
int mx_device_spmm_host(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, void *stream);

/* Host vectors staged through device buffers owned by D (allocated at upload); synchronous. */
int mx_device_spmv_host(mx_device *D, const double *x, const double *z, double *y, void *stream);

/* The hub split (src/core/mx_cold_hub.h) as D's product, for power-law graphs: D must be all cold
 * (no hot part) and A the CSR it holds (checked against D's counts). Splits D's cold CSR by its K
 * most used columns on the GPU (the host builder's arrays), the rest an all-cold device of D's cold
 * kernel (packed, AUTO); mx_device_spmv then
 * runs the rest, then y += hub x (each row's hub part added after its rest: deterministic, not the
 * whole-matrix kernels' bits). D keeps its own arrays (transpose, download, features): a value
 * refresh drops the split, a cold-kernel switch applies to the rest too. K = 0 drops it. 0, or 1 with
 * the error recorded and D as before. */
int mx_device_hub(mx_device *D, const mx_csr *A, int K);
/* While the split runs D's products: D's plain columns and values freed (they are read by nothing
 * else: D all cold in input order, without a pack, row patterns, x-hot, cuSPARSE or the SpMM kernels,
 * which read them once they ran; else an error and nothing freed). mx_device_hub_restore_plain(D, A)
 * uploads the columns of A (the CSR D holds) again, and its values where A has them (an SpMM reads
 * them), else allocates the values, which a value refresh then fills; until then a refresh, a new
 * split, the statistics, a compression, a cold-kernel switch and the feature passes are refused.
 * 0, or 1 with the error recorded. */
int mx_device_hub_release_plain(mx_device *D);
int mx_device_hub_restore_plain(mx_device *D, const mx_csr *A);
int mx_device_hub_plain_released(const mx_device *D);
/* The split's hub columns and hub nonzeros, 0 and 0 when D has none. */
void mx_device_hub_info(const mx_device *D, int *K, int64_t *hub_nnz);
/* mx_cold_hub_stats of D's cold CSR on the GPU (the hub nonzeros in its K most used columns and the
 * rows that have any: what mx_hub_pays decides on), without building the split. 0, or 1 with the
 * error recorded and both 0. */
int mx_device_hub_stats(mx_device *D, int K, int64_t *hub_nnz, int64_t *hub_rows);

/* Seconds of one y = A x on the GPU: the median of reps (>= 1) calls on D's staging vectors (x = 1),
 * each between two CUDA events on the default stream, after two warm-up calls; all queued before
 * one synchronisation, as in a solver loop. Overwrites D's staging vectors: call it when no
 * product of D is in flight (e.g. right after a build). 0 seconds for an empty D. */
int mx_device_time_spmv(mx_device *D, int reps, double *seconds);

/* ---- third cascade: the packed cold CSR (mx_cold_pack.h, mx_cold_pack.cu) ---------------------------
 * mx_device_compress packs D's cold CSR ON THE GPU into the bytes mx_cold_pack_build gives on the
 * host (encodings chosen by exact byte count under MX_PACK_AUTO, or forced: a forced encoding that
 * cannot hold the matrix is an error and D stays unpacked). The segment and merge cold kernels then
 * read the packed form (y bitwise equal to the plain kernels'); cuSPARSE reads the plain arrays, which
 * stay on the device until mx_device_pack_release_plain. {PLAIN, PLAIN} (= mx_pack_request_of(MX_COMPRESS_OFF)) removes a
 * pack. Off while x-hot codes the cold CSR (mx_device_compress returns 0, nothing packed). A value
 * refresh (mx_device_refresh_values) chooses the value encoding again (falls back to plain where a
 * dictionary no longer fits). Synchronous; call it when no product of D is in flight.
 * Row patterns: a request with form MX_FORM_AUTO (mx_pack_request_of(MX_COMPRESS_AUTO)) first tries
 * the row-pattern form (mx_cold_rowpat.h), built on the GPU into the bytes mx_cold_rowpat_build
 * gives, and keeps it where it holds the cold CSR in fewer bytes than any pack could
 * (mx_pack_bytes_floor) and the cold kernel is the segment kernel: its product then replaces the
 * segment kernel's (y bitwise the same); else the pack as above ({plain, plain, plain, MX_FORM_AUTO}:
 * row patterns where they pay, else nothing, without a pack's statistics). MX_FORM_ROWPAT forces it (an error
 * where it cannot hold the matrix). A value refresh chooses the form again (the patterns of the new
 * values, else a pack).
 * Hot values: a request whose val is MX_PACK_AUTO also packs the SE hot region's values (one value,
 * or one per column where that moves fewer bytes and x-hot does not code the cold CSR: the SE kernel
 * then reads only its slots' columns; y bitwise the same); a value refresh chooses again. */
int mx_device_compress(mx_device *D, const mx_pack_request *req);

/* While a pack runs D's cold products, the plain arrays it replaces are not needed on the device:
 * mx_device_pack_release_plain frees cold_col under a packed column encoding and cold_val under a
 * packed value encoding, where nothing else reads them (the pack in use by the segment or merge
 * kernel; no cuSPARSE descriptors, row patterns, hub split, x-hot codes or feature passes in
 * flight); else it frees nothing (0, not an error). Every entry point that reads the plain arrays
 * (refresh, compress, cold-kernel switch, feature passes, hub split and statistics) first brings
 * them back with mx_device_pack_restore_plain: decoded from the pack on the GPU, bit for bit the
 * arrays it was encoded from. mx_device_download refuses while they are released. Both synchronous;
 * call them when no product of D is in flight. 0, or 1 with the error recorded (a failed restore
 * leaves them released and the pack in use). mx_device_pack_plain_released: the bytes freed now. */
int mx_device_pack_release_plain(mx_device *D);
int mx_device_pack_restore_plain(mx_device *D);
size_t mx_device_pack_plain_released(const mx_device *D);

typedef struct {
  int packed;         /* 1: D holds a pack with a packed part */
  int in_use;         /* 1: packed and the cold kernel reads it: segment or merge (merge unless the
                       * tuning switch mx_cold_pack_set_merge(0), src/cuda/mx_cold_pack_dev.h) */
  mx_val_enc val_enc; /* plain when not packed */
  mx_idx_enc idx_enc;
  mx_row_enc row_enc; /* plain when not packed (packed row pointers alone are not read) */
  int32_t ndict;      /* dictionary entries (DICT*) or column constants (COLCONST) */
  size_t bytes;       /* cold bytes the kernel reads: row pointers + values + columns (mx_cold_pack_bytes) */
  size_t plain_bytes; /* the same cold CSR plain: mx_csr_bytes(nrows, cold_nnz) */
  mx_val_enc prev_val_enc; /* the last refresh: value encoding before it, */
  int fell_back;           /* and 1 if it fell back to plain values */
  /* the row-pattern form (mx_cold_rowpat.h, mx_cold_rowpat.cu) instead of a pack: the encodings
   * above are then plain and ndict 0; packed, in_use and bytes are the form's */
  int rowpat;          /* 1: D's cold region is in row-pattern form */
  int32_t npat, nent;  /* its patterns and their entries */
  int id_bytes;        /* bytes per row id (1 or 2) */
  int rowpat_lost;     /* 1: the last value refresh found the patterns no longer hold the values (a
                        * pack, or plain, took over) */
  /* the SE hot region's values (mx_hot_pack.cu; plain in the DU and no-hot modes) */
  mx_val_enc hot_val_enc;      /* plain, dict0 (one value) or colconst (one per column) */
  mx_val_enc hot_prev_val_enc; /* the last refresh: the encoding before it, */
  int hot_fell_back;           /* and 1 if it fell back to plain values */
  size_t hot_bytes;            /* bytes the SE kernel moves for its slots: 4 per slot + the values' */
  size_t hot_plain_bytes;      /* the same with plain values: 12 per slot */
} mx_device_pack_info;

/* The encodings and bytes of D's cold part (for -mat_view, -info). */
int mx_device_compress_info(const mx_device *D, mx_device_pack_info *info);

/* D's cold part as a host mx_cold_pack (owned arrays; mx_cold_pack_free), plain when not packed:
 * for tests (compare with mx_cold_pack_build byte for byte). */
int mx_device_download_pack(const mx_device *D, mx_cold_pack *P);
/* D's cold part in row-pattern form as a host mx_cold_rowpat (owned arrays; mx_cold_rowpat_free);
 * an error when D does not hold that form. For tests (compare with mx_cold_rowpat_build). */
int mx_device_download_rowpat(const mx_device *D, mx_cold_rowpat *R);

#ifdef __cplusplus
}
#endif
#endif
