static char help[] = "Solve A x = b with any PETSc KSP/PC; A from a file or a generator, in the type given by -mat_type\n\
(aij, aijcusparse, matxtract). Vectors come from MatCreateVecs, so -vec_type cuda works.\n\n\
Input (one of):\n\
  -f <file>                 Matrix Market (.mtx) or PETSc binary (any other name)\n\
  -gen <spec>               generated matrix, e.g. lap2d:1000 (-gen help lists the generators; -gen_seed <0> picks the seed)\n\
Right-hand side:\n\
  -rhs <ones|random|FILE>   b = ones (default), uniform random in [0,1) (rand48, seed -rhs_seed, the same\n\
                            vector on any number of ranks), or a PETSc binary Vec file\n\
  -rhs_seed <1>             seed for -rhs random\n\
Solver: -ksp_type, -pc_type, -ksp_rtol, ... (KSPSetFromOptions; default gmres with the default PC)\n\
Output: iterations, converged reason, true residual ||b - A x||_2/||b||_2, ||x||_2; timing lines start with 'time:'.\n\n";

#include <petscksp.h>
#include <petsctime.h>
#include <matxtract.h>
#include "example_util.h"


/* b_i = the i-th draw of rand48 seeded with seed: independent of the number of ranks and of the Vec type. */
static PetscErrorCode FillRandom(Vec b, unsigned long seed)
{
  PetscRandom  rnd;
  PetscInt     lo, hi, i;
  PetscScalar *a, val;

  PetscFunctionBeginUser;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
  PetscCall(PetscRandomSetType(rnd, PETSCRANDER48));
  PetscCall(PetscRandomSetSeed(rnd, seed));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecGetOwnershipRange(b, &lo, &hi));
  PetscCall(VecGetArrayWrite(b, &a));
  for (i = 0; i < hi; i++) {
    PetscCall(PetscRandomGetValue(rnd, &val));
    if (i >= lo) a[i - lo] = val;
  }
  PetscCall(VecRestoreArrayWrite(b, &a));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  MPI_Comm           comm;
  char               file[PETSC_MAX_PATH_LEN] = "", spec[256] = "", rhs[PETSC_MAX_PATH_LEN] = "ones";
  PetscBool          hasfile = PETSC_FALSE, hasgen = PETSC_FALSE, genhelp = PETSC_FALSE, isones, israndom;
  PetscInt           seed = 1, M, N;
  Mat                A;
  Vec                x, b, r;
  MatType            mtype;
  VecType            vtype;
  MatInfo            info;
  SolveResult        sol;
  PetscReal          rnorm, xnorm;
  PetscLogDouble     t0, t1, t6, t7;
  PetscMPIInt        size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatXtractRegister());
  /* -f, -gen (and -gen_seed) are read again, and listed in -help, by MatXtractCreateFromOptions */
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), &hasfile));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-gen", spec, sizeof(spec), &hasgen));

  PetscOptionsBegin(comm, NULL, "ksp_solve options", NULL);
  PetscCall(PetscOptionsString("-rhs", "Right-hand side: ones, random or a PETSc binary Vec file", NULL, rhs, rhs, sizeof(rhs), NULL));
  PetscCall(PetscOptionsInt("-rhs_seed", "Seed for -rhs random", NULL, seed, &seed, NULL));
  PetscOptionsEnd();

  PetscCall(CheckMatrixSource(comm, hasfile, hasgen, spec, &genhelp));
  if (genhelp) {
    PetscCall(PetscFinalize());
    return 0;
  }
  PetscCheck(hasfile || hasgen, comm, PETSC_ERR_USER_INPUT, "Give the matrix with -f FILE (.mtx or PETSc binary) or -gen SPEC (-gen help lists the generators)");
  PetscCheck(seed >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-rhs_seed %" PetscInt_FMT ": need a nonnegative seed", seed);

  /* ---- setup: the matrix in the requested type (for matxtract the format is built at assembly) ---- */
  PetscCall(Now(comm, &t0));
  PetscCall(MatXtractCreateFromOptions(comm, NULL, &A));
  PetscCall(Now(comm, &t1));
  PetscCall(MatGetSize(A, &M, &N));
  PetscCheck(M == N, comm, PETSC_ERR_ARG_SIZ, "A must be square for a linear solve; it is %" PetscInt_FMT " x %" PetscInt_FMT, M, N);
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  PetscCall(MatGetType(A, &mtype));

  PetscCall(SetVecTypeFromOptions(A));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecGetType(b, &vtype));
  PetscCall(PetscStrcmp(rhs, "ones", &isones));
  PetscCall(PetscStrcmp(rhs, "random", &israndom));
  if (isones) PetscCall(VecSet(b, 1.0));
  else if (israndom) PetscCall(FillRandom(b, (unsigned long)seed));
  else {
    PetscViewer viewer;
    PetscCall(PetscViewerBinaryOpen(comm, rhs, FILE_MODE_READ, &viewer));
    PetscCall(VecLoad(b, viewer));
    PetscCall(PetscViewerDestroy(&viewer));
  }

  /* the first MatMult pays for what a type builds or uploads lazily (aijcusparse: the copy to the GPU) */
  PetscCall(Now(comm, &t6));
  PetscCall(MatMult(A, b, r));
  PetscCall(VecNorm(r, NORM_2, &rnorm)); /* waits for the device */
  PetscCall(Now(comm, &t7));

  PetscCall(SolveTimed(A, b, x, NULL, &sol));
  PetscCall(VecNorm(x, NORM_2, &xnorm));

  if (hasfile) PetscCall(PetscPrintf(comm, "ksp_solve: %s\n", file));
  else PetscCall(PetscPrintf(comm, "ksp_solve: -gen %s\n", spec));
  PetscCall(PetscPrintf(comm, "rows: %" PetscInt_FMT ", nonzeros: %.0f\n", M, (double)info.nz_used));
  PetscCall(PetscPrintf(comm, "rhs: %s\n", rhs));
  PetscCall(PetscPrintf(comm, "matrix type: %s\n", mtype));
  PetscCall(PetscPrintf(comm, "vector type: %s\n", vtype));
  PetscCall(PetscPrintf(comm, "processes: %d\n", (int)size));
  PetscCall(PrintSolve(comm, &sol));
  PetscCall(PetscPrintf(comm, "solution ||x||_2: %.6e\n", (double)xnorm));
  PetscCall(PrintSolveTimes(comm, "read/generate, assembly, conversion", t1 - t0, t7 - t6, &sol));

  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&r));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
