/* matxtract_convert.c - conversions from other matrix types into matxtract go through AIJ.
 *
 * MatConvert(X, "matxtract") finds no converter of X's type to ours and would fall back to
 * MatConvert_Basic (a default preallocation, so inserting a new nonzero afterwards mallocs where AIJ
 * raises "new nonzero caused a malloc"). Rule: the result equals what AIJ gives: PETSc's own
 * X -> AIJ conversion (its exact preallocation and error semantics), then AIJ -> matxtract in place.
 * PETSc queries "MatConvert_<X>_<new type as the user named it>_C" on a matrix of the new type, so
 * the types register this converter under the names of the source types listed here, for both
 * "matxtract" and the full type name. */
#include "matxtract_impl.h"

static const char *const MatXtractConvertSources[] = {"dense", "baij", "sbaij", "sell", "maij", "densecuda"};

static PetscErrorCode MatConvert_Any_MatXtract(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat T;

  PetscFunctionBegin;
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &T));
  if (reuse == MAT_REUSE_MATRIX) { /* *newmat: a matxtract of an earlier conversion of A, same pattern */
    PetscCall(MatCopy(T, *newmat, SAME_NONZERO_PATTERN));
    PetscCall(MatDestroy(&T));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatConvert(T, MATMATXTRACT, MAT_INPLACE_MATRIX, &T));
  if (reuse == MAT_INPLACE_MATRIX) PetscCall(MatHeaderReplace(A, &T));
  else *newmat = T;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Compose (on) or remove (off) the converters on B, a matrix of our type prefix "seq" or "mpi". */
PetscErrorCode MatXtractComposeConverters(Mat B, const char *prefix, PetscBool on)
{
  char name[128];

  PetscFunctionBegin;
  for (size_t i = 0; i < sizeof MatXtractConvertSources / sizeof MatXtractConvertSources[0]; i++) {
    PetscCall(PetscSNPrintf(name, sizeof name, "MatConvert_%s%s_%saijmatxtract_C", prefix, MatXtractConvertSources[i], prefix));
    PetscCall(PetscObjectComposeFunction((PetscObject)B, name, on ? MatConvert_Any_MatXtract : NULL));
    PetscCall(PetscSNPrintf(name, sizeof name, "MatConvert_%s%s_matxtract_C", prefix, MatXtractConvertSources[i]));
    PetscCall(PetscObjectComposeFunction((PetscObject)B, name, on ? MatConvert_Any_MatXtract : NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
