/* mx_cold_cusparse.cu - the cold CSR through cusparseSpMV (CSR, CUSPARSE_SPMV_CSR_ALG2: bitwise
 * deterministic run to run, so the no-atomics/reproducibility promise of mx_device.h holds).
 *
 * Used where it measures faster than our own cold kernels (MX_COLD_AUTO times both at upload; see
 * mx_device.cu) or when asked for (MX_COLD_CUSPARSE): "do not hand-write what a well-kept library
 * does well unless a measurement says ours is better". The descriptors point at the uploaded cold
 * arrays (values refreshed in place) and at x/y through cusparseDnVecSetValues, so a call allocates
 * nothing; the work buffer is sized and preprocessed once at setup. */
#include <cusparse.h>
#include "mx_device_impl.h"

struct mx_cusparse_cold {
  cusparseHandle_t handle;
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t x, y;
  void *buffer;
};

static int sp_check(cusparseStatus_t st, const char *what) {
  if (st == CUSPARSE_STATUS_SUCCESS) return 0;
  return mx_fail("%s: %s", what, cusparseGetErrorString(st));
}
#define MX_SP_TRY(call)                      \
  do {                                       \
    if (sp_check((call), #call)) return 1;   \
  } while (0)

static const double one = 1.0, zero = 0.0;

void mx_cold_cusparse_free(mx_device *D) {
  mx_cusparse_cold *c = D->csp;
  if (!c) return;
  if (c->A) cusparseDestroySpMat(c->A);
  if (c->x) cusparseDestroyDnVec(c->x);
  if (c->y) cusparseDestroyDnVec(c->y);
  if (c->handle) cusparseDestroy(c->handle);
  if (c->buffer) cudaFree(c->buffer);
  free(c);
  D->csp = nullptr;
  mx_device_staging_release(D); /* the descriptors pointed at them */
}

/* Descriptors over the cold CSR and the staging vectors, work buffer, preprocess (stream 0). */
int mx_cold_cusparse_setup(mx_device *D) {
  size_t bytes = 0;
  mx_cusparse_cold *c = (mx_cusparse_cold *)calloc(1, sizeof *c);
  if (!c) return mx_fail("cusparse cold: out of host memory");
  D->csp = c;
  if (mx_device_staging(D, false)) return 1; /* the descriptors' vectors until a product sets its own (kept while D->csp) */
  MX_SP_TRY(cusparseCreate(&c->handle));
  MX_SP_TRY(cusparseCreateCsr(&c->A, D->nrows, D->ncols, D->cold_nnz, D->cold_rowptr, D->cold_col, D->cold_val,
                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  MX_SP_TRY(cusparseCreateDnVec(&c->x, D->ncols, D->x_stage, CUDA_R_64F));
  MX_SP_TRY(cusparseCreateDnVec(&c->y, D->nrows, D->y_stage, CUDA_R_64F));
  MX_SP_TRY(cusparseSpMV_bufferSize(c->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, c->A, c->x, &zero, c->y,
                                    CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG2, &bytes));
  MX_CUDA_TRY(cudaMalloc(&c->buffer, bytes ? bytes : 1));
  D->bytes += bytes;
  MX_SP_TRY(cusparseSpMV_preprocess(c->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, c->A, c->x, &zero, c->y,
                                    CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG2, c->buffer));
  MX_CUDA_TRY(cudaDeviceSynchronize());
  return 0;
}

/* After a value refresh (the preprocess data may depend on the values). */
int mx_cold_cusparse_refresh(mx_device *D, cudaStream_t s) {
  mx_cusparse_cold *c = D->csp;
  MX_SP_TRY(cusparseSetStream(c->handle, s));
  MX_SP_TRY(cusparseSpMV_preprocess(c->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, c->A, c->x, &zero, c->y,
                                    CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG2, c->buffer));
  return 0;
}

/* y = C x + z on stream s (z == NULL: beta 0, y not read; z != y: z is copied into y first). */
int mx_cold_cusparse_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s) {
  mx_cusparse_cold *c = D->csp;
  if (z && z != y) MX_CUDA_TRY(cudaMemcpyAsync(y, z, sizeof(double) * D->nrows, cudaMemcpyDeviceToDevice, s));
  MX_SP_TRY(cusparseSetStream(c->handle, s));
  MX_SP_TRY(cusparseDnVecSetValues(c->x, (void *)x));
  MX_SP_TRY(cusparseDnVecSetValues(c->y, (void *)y));
  MX_SP_TRY(cusparseSpMV(c->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, c->A, c->x, z ? &one : &zero, c->y,
                         CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG2, c->buffer));
  return 0;
}
