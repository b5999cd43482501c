/* matxtract_compat.h - the few PETSc API differences between 3.18 (Debian 12) and 3.22+ (GPU host). */
#ifndef MATXTRACT_COMPAT_H
#define MATXTRACT_COMPAT_H

#include <petscversion.h>

#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif
#if PETSC_VERSION_LT(3, 19, 0)
  /* 3.18 has no memory-type access to dense arrays (and Debian's PETSc no device arrays): host */
  #define MatDenseGetArrayReadAndMemType(A, a, m)  (*(m) = PETSC_MEMTYPE_HOST, MatDenseGetArrayRead((A), (a)))
  #define MatDenseRestoreArrayReadAndMemType(A, a) MatDenseRestoreArrayRead((A), (a))
  #define MatDenseGetArrayWriteAndMemType(A, a, m) (*(m) = PETSC_MEMTYPE_HOST, MatDenseGetArrayWrite((A), (a)))
  #define MatDenseRestoreArrayWriteAndMemType(A, a) MatDenseRestoreArrayWrite((A), (a))
  #define MatDenseGetArrayAndMemType(A, a, m)      (*(m) = PETSC_MEMTYPE_HOST, MatDenseGetArray((A), (a)))
  #define MatDenseRestoreArrayAndMemType(A, a)     MatDenseRestoreArray((A), (a))
#endif
#if PETSC_VERSION_LT(3, 20, 0)
  #define PetscAssertPointer(p, a) PetscValidPointer(p, a)
#endif

#endif
