/* mx_device_hub.cu - the hub split as a device format's product (mx_device_hub in mx_device.h): the
 * split of D's cold CSR built on the GPU (mx_hub_dev_build, src/cuda/mx_cold_hub.cu: the arrays the
 * host builder src/core/mx_cold_hub.c gives), the rest as an all-cold device of its own, packed. */
#include <stdlib.h>
#include "mx_cold_hub_dev.h"
#include "mx_device_impl.h"
#include "mx_kernel_common.cuh"
#include "mx_upload.h"
extern "C" {
#include "../core/mx_cold_pack.h"
}

struct mx_hub_split_dev {
  int K;           /* hub columns */
  int64_t hub_nnz; /* their nonzeros */
  mx_device *rest; /* every other nonzero, all cold, D's cold kernel, packed (AUTO) */
  mx_hub_dev *hub;
};

static void hub_free(mx_hub_split_dev *h) {
  if (!h) return;
  mx_hub_dev_free(h->hub);
  mx_device_free(h->rest);
  free(h);
}

/* The split gone (and the SpMM's timed choices with it: the split's way is one of their ways). */
void mx_device_hub_drop(mx_device *D) {
  if (!D->hub_split) return;
  hub_free(D->hub_split);
  D->hub_split = nullptr;
  mx_spmm_choice_reset(D);
}

/* the split of D's cold CSR by K columns, built on the GPU; the rest finished with kernel cold and packed */
static int hub_make(const mx_device *D, int K, mx_cold_kernel cold, mx_hub_split_dev **out) {
  mx_hub_split_dev *h = (mx_hub_split_dev *)calloc(1, sizeof *h);
  mx_device *rest = (mx_device *)calloc(1, sizeof *rest);
  if (!h || !rest) {
    free(h);
    free(rest);
    return mx_fail("mx_device_hub: out of host memory");
  }
  mx_trace_step(nullptr);
  if (mx_hub_dev_build(D->cold_rowptr, D->cold_col, D->cold_val, D->nrows, D->ncols, D->cold_nnz, K, rest, &h->hub, &h->hub_nnz)) {
    mx_device_free(rest);
    free(h);
    return 1;
  }
  const mx_pack_request rq = mx_pack_request_of(MX_COMPRESS_AUTO);
  if (mx_device_finish_cold(rest, cold)) { /* frees rest */
    hub_free(h);
    return 1;
  }
  mx_trace_step("hub split: the rest's cold kernel");
  h->rest = rest;
  mx_hub_dev_info(h->hub, &h->K);
  if (mx_device_compress(h->rest, &rq)) {
    hub_free(h);
    return 1;
  }
  mx_trace_step("hub split: the rest packed");
  *out = h;
  return 0;
}

extern "C" int mx_device_hub(mx_device *D, const mx_csr *A, int K) {
  if (!D || !A) return mx_fail("mx_device_hub: NULL argument");
  if (D->plain_released) return mx_fail("mx_device_hub: D's plain cold CSR is released (mx_device_hub_restore_plain first)");
  if (K == 0) {
    mx_device_hub_drop(D);
    return 0;
  }
  if (mx_device_pack_restore_plain(D)) return 1; /* the split is made from the plain arrays */
  if (D->mode != MX_HOT_NONE) return mx_fail("mx_device_hub: the device format has a hot part (the split needs an all-cold one)");
  if (A->nrows != D->nrows || A->ncols != D->ncols || !A->rowptr || A->rowptr[A->nrows] != D->nnz)
    return mx_fail("mx_device_hub: the CSR (%d x %d) is not the one the device format holds (%d x %d, %d nonzeros)", A->nrows,
                   A->ncols, D->nrows, D->ncols, D->nnz);
  if (K < 0 || K > MX_HUB_MAX_COLS) return mx_fail("mx_device_hub: %d hub columns (0 .. %d)", K, MX_HUB_MAX_COLS);
  mx_hub_split_dev *h = nullptr;
  if (hub_make(D, K, D->cold, &h)) return 1;
  mx_device_hub_drop(D);
  D->hub_split = h;
  mx_spmm_choice_reset(D); /* the split's way joins the timed choices */
  return 0;
}

extern "C" int mx_device_hub_stats(mx_device *D, int K, int64_t *hub_nnz, int64_t *hub_rows) {
  if (!D || !hub_nnz || !hub_rows) return mx_fail("mx_device_hub_stats: NULL argument");
  if (D->plain_released) return mx_fail("mx_device_hub_stats: D's plain cold CSR is released");
  if (mx_device_pack_restore_plain(D)) return 1;
  mx_trace_step(nullptr);
  const int rc = mx_hub_dev_stats(D->cold_rowptr, D->cold_col, D->nrows, D->ncols, D->cold_nnz, K, hub_nnz, hub_rows);
  mx_trace_step("hub statistics");
  return rc;
}

extern "C" void mx_device_hub_info(const mx_device *D, int *K, int64_t *hub_nnz) {
  const mx_hub_split_dev *h = D ? D->hub_split : nullptr;
  if (K) *K = h ? h->K : 0;
  if (hub_nnz) *hub_nnz = h ? h->hub_nnz : 0;
}

mx_device *mx_device_hub_rest(const mx_device *D) { return D && D->hub_split ? D->hub_split->rest : nullptr; }

int mx_device_hub_spmm(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  mx_hub_split_dev *h = D->hub_split;
  if (mx_device_spmm(h->rest, k, B, ldb, C, ldc, s)) return 1;
  return k == 1 ? mx_hub_dev_spmv_add(h->hub, B, C, s) : mx_hub_dev_spmm_add(h->hub, k, B, ldb, C, ldc, s);
}

int mx_device_hub_launch(mx_device *D, const double *x, const double *z, double *y, void *stream) {
  mx_hub_split_dev *h = D->hub_split;
  /* The staging first: a rest with nonzeros launches a kernel of its own (a plain launch), after
   * which the hub kernel may start while the rest's last kernel runs (mx_hub_dev_add_staged) */
  return mx_hub_dev_stage(h->hub, x, stream) || mx_device_spmv(h->rest, x, z, y, stream) ||
         mx_hub_dev_add_staged(h->hub, y, stream, h->rest->cold_nnz > 0);
}

void mx_device_hub_kernel(mx_device *D, mx_cold_kernel k) {
  if (D->hub_split && mx_device_set_cold_kernel(D->hub_split->rest, k)) mx_device_hub_drop(D);
}

/* While the split runs D's products, D's own columns and values are read by nothing else when D is
 * the whole matrix in input order (cold_identity), without a pack, row patterns, x-hot codes or
 * cuSPARSE descriptors over them: they are freed (the feature passes, which read them, dropped). */
extern "C" int mx_device_hub_release_plain(mx_device *D) {
  if (!D || !D->hub_split) return mx_fail("mx_device_hub_release_plain: no hub split in use");
  if (D->plain_released) return 0;
  if (!D->cold_identity || D->csp || D->pack || D->rowpat || D->hot_pack || D->xhot_n || D->spmm_kernels_ran)
    return mx_fail("mx_device_hub_release_plain: D's plain cold CSR is read by more than the split (a pack, row patterns, x-hot, cuSPARSE "
                   "or the SpMM kernels)");
  mx_features_job_drop(D);
  mx_cuda_free_on(D, &D->cold_col, (size_t)D->cold_nnz);
  mx_cuda_free_on(D, &D->cold_val, (size_t)D->cold_nnz);
  D->plain_released = 1;
  return 0;
}

/* D's columns uploaded again from A (the CSR it holds, in input order), and its values where A has
 * them, else the value array allocated (a value refresh fills it); the split stays until a refresh
 * drops it. */
extern "C" int mx_device_hub_restore_plain(mx_device *D, const mx_csr *A) {
  if (!D || !A) return mx_fail("mx_device_hub_restore_plain: NULL argument");
  if (!D->plain_released) return 0;
  if (A->nrows != D->nrows || !A->rowptr || A->rowptr[A->nrows] != D->cold_nnz)
    return mx_fail("mx_device_hub_restore_plain: the CSR is not the one the device format holds");
  if (mx_cuda_alloc_on(D, &D->cold_col, (size_t)D->cold_nnz, "restoring the plain columns") ||
      mx_cuda_alloc_on(D, &D->cold_val, (size_t)D->cold_nnz, "restoring the plain values")) {
    mx_cuda_free_on(D, &D->cold_col, (size_t)D->cold_nnz);
    return 1;
  }
  const mx_h2d_piece pieces[2] = {{D->cold_col, A->colidx, sizeof(int) * (size_t)D->cold_nnz},
                                  {D->cold_val, A->val, sizeof(double) * (size_t)D->cold_nnz}};
  if (mx_h2d_copy(pieces, A->val ? 2 : 1, 0, "mx_device_hub_restore_plain: uploading the columns and values")) {
    mx_cuda_free_on(D, &D->cold_col, (size_t)D->cold_nnz);
    mx_cuda_free_on(D, &D->cold_val, (size_t)D->cold_nnz);
    return 1;
  }
  D->plain_released = 0;
  if (D->bytes > D->build_peak_bytes) D->build_peak_bytes = D->bytes;
  return 0;
}

extern "C" int mx_device_hub_plain_released(const mx_device *D) { return D ? D->plain_released : 0; }
