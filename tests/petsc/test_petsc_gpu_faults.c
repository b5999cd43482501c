/* test_petsc_gpu_faults - what a user sees when the GPU cannot hold the format: the device is filled
 * with plain cudaMalloc blocks until about 16 MB stay free, then for a matrix whose build needs more:
 *   -mat_matxtract_device gpu:  MatConvert to matxtract + its first use fails with PETSC_ERR_LIB and a message that
 *                               names the bytes asked for and the bytes free; the AIJ matrix it was
 *                               converted from is intact (same MatMult as before);
 *   -mat_matxtract_device auto: MatConvert succeeds, the products run on the CPU (MatXtractInfo
 *                               on_device false, host vectors from MatCreateVecs) and equal AIJ's;
 * and once the filler is freed the same conversion runs on the GPU again.
 * Exit 77 (ctest: skipped) without PETSc+CUDA or without a GPU. Usage: test_petsc_gpu_faults */
#include <matxtract.h>
#include <petscdevice.h>
#include "../common/petsc_check.h"

static const char help[] = "MatXtract when the GPU is out of memory.\n";

#if !defined(PETSC_HAVE_CUDA) || !defined(MX_TEST_HAVE_CUDART)
int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "skipped: no PETSc+CUDA or no CUDA runtime in this build\n"));
  PetscCall(PetscFinalize());
  return 77;
}
#else
  #include <cuda_runtime.h>

  #define MAX_BLOCKS 4096

/* Allocate blocks (halving their size down to 1 MB) until at most `margin` bytes stay free. */
static size_t FillDevice(void **blocks, int *nblocks, size_t margin)
{
  size_t free_b, total_b, chunk = (size_t)1 << 30, held = 0;
  *nblocks = 0;
  while (*nblocks < MAX_BLOCKS && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && free_b > margin) {
    while (chunk > ((size_t)1 << 20) && chunk > free_b - margin) chunk /= 2;
    if (cudaMalloc(&blocks[*nblocks], chunk) != cudaSuccess) {
      cudaGetLastError();
      if (chunk <= ((size_t)1 << 20)) break;
      chunk /= 2;
      continue;
    }
    held += chunk;
    (*nblocks)++;
  }
  return held;
}

static void FreeDevice(void **blocks, int nblocks)
{
  for (int i = 0; i < nblocks; i++) cudaFree(blocks[i]);
}

/* MatConvert(A -> matxtract) with -mat_matxtract_device `device`, then MatXtractGetInfo, which
 * builds the format (a conversion builds it at the first use); *ierr the first error code. */
static PetscErrorCode TryConvert(Mat A, const char *device, Mat *B, PetscErrorCode *ierr)
{
  MatXtractInfo info;

  PetscFunctionBegin;
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_device", device));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  *B    = NULL;
  *ierr = MatConvert(A, MATMATXTRACT, MAT_INITIAL_MATRIX, B);
  if (!*ierr) *ierr = MatXtractGetInfo(*B, &info);
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_device"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat           A, B, T;
  Vec           x, y0, y1;
  MatXtractInfo info;
  void         *blocks[MAX_BLOCKS];
  int           nblocks, ndev = 0;
  PetscErrorCode ierr;
  PetscReal     d0, d1;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatXtractRegister());
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "skipped: no GPU visible\n"));
    PetscCall(PetscFinalize());
    return 77;
  }
  /* PETSc's CUDA context and handles first, with a small matrix, so that the filler only starves
   * the format build that follows */
  PetscCall(MatXtractGenerate(PETSC_COMM_WORLD, "lap2d:8", "probe_", &T));
  PetscCall(MatConvert(T, MATMATXTRACT, MAT_INPLACE_MATRIX, &T));
  PetscCall(MatXtractGetInfo(T, &info));
  PetscCall(MatDestroy(&T));
  if (!info.on_device) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "skipped: matxtract does not run on the GPU here\n"));
    PetscCall(PetscFinalize());
    return 77;
  }
  PetscCall(MatXtractGenerate(PETSC_COMM_WORLD, "lap2d:1000", "aij_", &A)); /* 5M nnz: 60 MB of CSR alone */
  PetscCall(MatCreateVecs(A, &x, &y0));
  PetscCall(VecDuplicate(y0, &y1));
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(MatMult(A, x, y0));

  const size_t held = FillDevice(blocks, &nblocks, (size_t)16 << 20);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "filled the device with %zu bytes in %d blocks\n", held, nblocks));

  /* gpu: a clear error, A intact */
  PetscCall(TryConvert(A, "gpu", &B, &ierr));
  {
    const char *text = NULL, *specific = NULL;
    PetscErrorMessage(ierr, &text, (char **)&specific);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "-mat_matxtract_device gpu: error %d: %s\n", (int)ierr, specific ? specific : "(none)"));
    PetscCall(Expect((PetscBool)(ierr == PETSC_ERR_LIB), "device gpu: MatConvert fails with PETSC_ERR_LIB", "lap2d:1000"));
    PetscCall(Expect((PetscBool)(specific && strstr(specific, "bytes free") && strstr(specific, "cudaMalloc of")), "device gpu: the message names the bytes asked for and free", "lap2d:1000"));
  }
  PetscCall(MatDestroy(&B));
  PetscCall(MatMult(A, x, y1));
  PetscCall(VecAXPY(y1, -1.0, y0));
  PetscCall(VecNorm(y1, NORM_2, &d1));
  PetscCall(VecNorm(y0, NORM_2, &d0));
  PetscCall(Record((PetscBool)(d1 == 0.0), "AIJ intact after the failed conversion", "lap2d:1000", d0, d1));

  /* auto: the CPU path, same products as AIJ (with host vectors from MatCreateVecs) */
  PetscCall(TryConvert(A, "auto", &B, &ierr));
  PetscCall(Expect((PetscBool)(ierr == 0), "device auto: MatConvert succeeds", "lap2d:1000"));
  if (!ierr) {
    VecType vt;
    Vec     xb;
    PetscCall(MatXtractGetInfo(B, &info));
    PetscCall(Expect((PetscBool)!info.on_device, "device auto: falls back to the CPU", "lap2d:1000"));
    PetscCall(MatCreateVecs(B, &xb, NULL));
    PetscCall(VecGetType(xb, &vt));
    PetscCall(Expect((PetscBool)(strcmp(vt, VECSEQ) == 0 || strcmp(vt, VECSTANDARD) == 0), "device auto: MatCreateVecs gives host vectors", vt));
    PetscCall(VecDestroy(&xb));
    PetscCall(CheckProducts(A, B, "lap2d:1000 on the CPU fallback", 5));
  }
  PetscCall(MatDestroy(&B));

  FreeDevice(blocks, nblocks);
  PetscCall(TryConvert(A, "auto", &B, &ierr));
  PetscCall(Expect((PetscBool)(ierr == 0), "after freeing: MatConvert succeeds", "lap2d:1000"));
  if (!ierr) {
    PetscCall(MatXtractGetInfo(B, &info));
    PetscCall(Expect(info.on_device, "after freeing: on the GPU again", "lap2d:1000"));
  }
  PetscCall(MatDestroy(&B));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y0));
  PetscCall(VecDestroy(&y1));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", nchecks - nfail, nfail));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
#endif
