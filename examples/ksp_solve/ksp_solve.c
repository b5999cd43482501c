static char help[] = "Solve A x = b with any PETSc KSP/PC; A from a file or a generator, in the type given by -mat_type\n\
(aij, aijcusparse, matxtract). Vectors come from MatCreateVecs, so -vec_type cuda works.\n\n\
Input (one of):\n\
  -f <file>                 Matrix Market (.mtx) or PETSc binary (any other name)\n\
  -gen <spec>               generated matrix, e.g. lap2d:1000 (-gen help lists the generators; -gen_seed <0> picks the seed)\n\
Right-hand side:\n\
  -rhs <ones|random|FILE>   b = ones (default), uniform random in [0,1) (rand48, seed -rhs_seed, the same\n\
                            vector on any number of ranks), or a PETSc binary Vec file\n\
  -rhs_seed <1>             seed for -rhs random\n\
Setup:\n\
  -convert                  read/generate A in AIJ, then MatConvert it to -mat_type (the two timed apart: the\n\
                            conversion, as the first MatMult, is what the Mat type costs); default: A is\n\
                            assembled in -mat_type directly\n\
Solver: -ksp_type, -pc_type, -ksp_rtol, ... (KSPSetFromOptions; default gmres with the default PC)\n\
Output: iterations, converged reason, true residual ||b - A x||_2/||b||_2, ||x||_2; timing lines start with 'time:';\n\
with -mat_type matxtract a line 'matxtract: plan after the solve: ...' says which plan MatMult ended on\n\
(-ksp_view_mat ::ascii_info_detail shows it in full).\n\n";

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

/* -convert: A from -f/-gen in AIJ (read under the options prefix ksp_solve_aij_, so -mat_type does not
 * apply to it; the prefix is dropped afterwards), then converted in place to the type -mat_type names
 * (none: A stays AIJ). */
static PetscErrorCode CreateThenConvert(MPI_Comm comm, PetscBool hasfile, const char *file, const char *spec, PetscInt genseed, Mat *A, PetscLogDouble *t_read, PetscLogDouble *t_convert)
{
  char           type[256];
  PetscBool      set, isaij;
  PetscLogDouble t0, t1, t2;

  PetscFunctionBeginUser;
  PetscCall(Now(comm, &t0));
  if (hasfile) PetscCall(MatXtractLoad(comm, file, "ksp_solve_aij_", A));
  else PetscCall(MatXtractGenerateSeeded(comm, spec, genseed, "ksp_solve_aij_", A));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)*A, &isaij, MATSEQAIJ, MATMPIAIJ, ""));
  if (!isaij) PetscCall(MatConvert(*A, MATAIJ, MAT_INPLACE_MATRIX, A));
  PetscCall(MatSetOptionsPrefix(*A, NULL)); /* from here on -mat_type, -mat_matxtract_* ... apply */
  PetscCall(Now(comm, &t1));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_type", type, sizeof(type), &set));
  if (set) {
    Mat      T;
    MatType  concrete;
    PetscInt m, n, M, N;

    PetscCall(MatGetLocalSize(*A, &m, &n));
    PetscCall(MatGetSize(*A, &M, &N));
    PetscCall(MatCreate(comm, &T));
    PetscCall(MatSetSizes(T, m, n, M, N));
    PetscCall(MatSetType(T, type)); /* resolves a root name such as aij or matxtract */
    PetscCall(MatGetType(T, &concrete));
    PetscCall(PetscStrncpy(type, concrete, sizeof(type)));
    PetscCall(MatDestroy(&T));
    PetscCall(MatConvert(*A, type, MAT_INPLACE_MATRIX, A));
  }
  PetscCall(MatSetFromOptions(*A)); /* type-specific options, e.g. -mat_matxtract_crux */
  PetscCall(Now(comm, &t2));
  *t_read    = t1 - t0;
  *t_convert = t2 - t1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  MPI_Comm           comm;
  char               file[PETSC_MAX_PATH_LEN] = "", spec[256] = "", rhs[PETSC_MAX_PATH_LEN] = "ones";
  PetscBool          hasfile = PETSC_FALSE, hasgen = PETSC_FALSE, genhelp = PETSC_FALSE, convert = PETSC_FALSE, isones, israndom;
  PetscInt           seed = 1, genseed = 0, M, N;
  Mat                A;
  Vec                x, b, r;
  MatType            mtype;
  VecType            vtype;
  MatInfo            info;
  SolveResult        sol;
  PetscReal          rnorm, xnorm;
  PetscLogDouble     t0, t1, t6, t7, t_read = 0.0, t_convert = 0.0;
  PetscMPIInt        size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatXtractRegister());
  /* -f, -gen (and -gen_seed) are read again, and listed in -help, by MatXtractCreateFromOptions (not used
   * with -convert) */
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), &hasfile));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-gen", spec, sizeof(spec), &hasgen));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-gen_seed", &genseed, NULL));

  PetscOptionsBegin(comm, NULL, "ksp_solve options", NULL);
  PetscCall(PetscOptionsString("-rhs", "Right-hand side: ones, random or a PETSc binary Vec file", NULL, rhs, rhs, sizeof(rhs), NULL));
  PetscCall(PetscOptionsInt("-rhs_seed", "Seed for -rhs random", NULL, seed, &seed, NULL));
  PetscCall(PetscOptionsBool("-convert", "Read/generate A in AIJ, then MatConvert it to -mat_type (timed apart)", NULL, convert, &convert, NULL));
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
  if (convert) PetscCall(CreateThenConvert(comm, hasfile, file, spec, genseed, &A, &t_read, &t_convert));
  else PetscCall(MatXtractCreateFromOptions(comm, NULL, &A));
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
  if (convert) {
    PetscCall(PetscPrintf(comm, "time: setup, read/generate in AIJ: %.6f s\n", t_read));
    PetscCall(PetscPrintf(comm, "time: setup, convert to %s: %.6f s\n", mtype, t_convert));
  }
  PetscCall(PrintSolveTimes(comm, convert ? "read/generate in AIJ, then convert" : "read/generate, assembly, conversion", t1 - t0, t7 - t6, &sol));
  PetscCall(PrintMatXtractPlan(A, "solve"));

  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&r));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
