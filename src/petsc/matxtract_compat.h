/* matxtract_compat.h - the few PETSc API differences between 3.18 (Debian 12) and 3.22+ (GPU host). */
#ifndef MATXTRACT_COMPAT_H
#define MATXTRACT_COMPAT_H

#include <petscversion.h>

#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif
#if PETSC_VERSION_LT(3, 20, 0)
  #define PetscAssertPointer(p, a) PetscValidPointer(p, a)
#endif

#endif
