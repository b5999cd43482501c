/* example_util.h - the few helpers every example shares (header-only; examples use only the public
 * API of matxtract plus PETSc). */
#ifndef EXAMPLE_UTIL_H
#define EXAMPLE_UTIL_H

#include <matxtract.h>

#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

/* -vec_type (cuda, ...) for the vectors that MatCreateVecs makes; without it they get the Mat type's
 * default (aijcusparse: cuda). */
static inline PetscErrorCode SetVecTypeFromOptions(Mat A)
{
  char      vtype[64];
  PetscBool set;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-vec_type", vtype, sizeof(vtype), &set));
  if (set) PetscCall(MatSetVecType(A, vtype));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Wall clock after a barrier, so every rank's interval covers the same work. */
static inline PetscErrorCode Now(MPI_Comm comm, PetscLogDouble *t)
{
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Barrier(comm));
  PetscCall(PetscTime(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif
