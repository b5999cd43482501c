#include <matxtract.h>
int main(int argc, char **argv)
{
  Mat A; MatXtractInfo info;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(MatXtractRegister());
  PetscCall(MatXtractGenerate(PETSC_COMM_WORLD, "lap2d:10", NULL, &A));
  PetscCall(MatConvert(A, MATMATXTRACT, MAT_INPLACE_MATRIX, &A));
  PetscCall(MatXtractGetInfo(A, &info));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "consumer ok: cold nnz %d\n", (int)info.cold_nnz));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
