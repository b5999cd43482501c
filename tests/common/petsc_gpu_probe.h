/* petsc_gpu_probe.h - whether matxtract's products run on a GPU in this process (a tiny matrix
 * converted and asked): the PETSc-level GPU tests skip (exit 77) otherwise, and this says why. Needs
 * <matxtract.h> and the matxtract library. */
#ifndef MX_PETSC_GPU_PROBE_H
#define MX_PETSC_GPU_PROBE_H

#include <matxtract.h>

static inline PetscErrorCode MatXtractTestGpuUsable(PetscBool *usable)
{
  PetscFunctionBegin;
  *usable = PETSC_FALSE;
#if !defined(PETSC_HAVE_CUDA)
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "skipped: PETSc was built without CUDA\n"));
#else
  {
    Mat           T;
    MatXtractInfo info;
    PetscCall(MatXtractGenerate(PETSC_COMM_WORLD, "lap2d:4", "probe_", &T));
    PetscCall(MatConvert(T, MATMATXTRACT, MAT_INPLACE_MATRIX, &T));
    PetscCall(MatXtractGetInfo(T, &info));
    PetscCall(MatDestroy(&T));
    *usable = info.on_device;
    if (!*usable) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "skipped: no usable GPU\n"));
  }
#endif
  PetscFunctionReturn(0);
}

#endif
