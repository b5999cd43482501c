static char help[] = "BiCGStab on a nonsymmetric convection-diffusion operator, in the Mat type given by -mat_type\n\
(aij, aijcusparse, matxtract). Vectors come from MatCreateVecs, so -vec_type cuda works.\n\n\
Operator (default): -laplace(u) + c . grad(u) on the unit square/cube, n points per direction, zero Dirichlet\n\
boundary, 5-point (2D) / 7-point (3D) diffusion and first-order upwind convection, scaled by h^2\n\
(h = 1/(n+1)). Rows are assembled with MatSetValues on the ranks that own them (any number of ranks).\n\
  -n <64>                   grid points per direction\n\
  -dim <2>                  2 or 3\n\
  -conv_x <20> -conv_y <10> -conv_z <5>   velocity c (any sign)\n\
Or a matrix from a file or a generator (one of):\n\
  -f <file>                 Matrix Market (.mtx) or PETSc binary (any other name)\n\
  -gen <spec>               e.g. convdiff2d:100 (-gen help lists the generators; -gen_seed <0> picks the seed)\n\
Right-hand side: b = A * ones, so the exact solution is ones and the error ||x - 1||_2/||1||_2 is printed.\n\
Solver: KSPBCGS by default; -ksp_type, -pc_type, -ksp_rtol, ... override (KSPSetFromOptions).\n\
Output: iterations, converged reason, true residual, error; timing lines start with 'time:'.\n\n";

#include <petscksp.h>
#include <petsctime.h>
#include <matxtract.h>
#include "example_util.h"


/* Convection-diffusion on an n^dim grid, lexicographic order (x fastest), assembled row by row. */
static PetscErrorCode CreateConvectionDiffusion(MPI_Comm comm, PetscInt n, PetscInt dim, const PetscReal conv[3], Mat *A)
{
  const PetscInt64 imax = sizeof(PetscInt) == 8 ? (PetscInt64)INT64_MAX : (PetscInt64)INT32_MAX;
  PetscInt         N = 1, stride[3] = {1, 1, 1}, rstart, rend, row, d;
  PetscReal        h = 1.0 / (PetscReal)(n + 1), diag = 2.0 * (PetscReal)dim;

  PetscFunctionBeginUser;
  for (d = 0; d < dim; d++) {
    PetscCheck((PetscInt64)N * n <= imax, comm, PETSC_ERR_ARG_OUTOFRANGE, "-n %" PetscInt_FMT " -dim %" PetscInt_FMT ": too many unknowns for this PetscInt", n, dim);
    stride[d] = N;
    N *= n;
  }
  for (d = 0; d < dim; d++) diag += h * PetscAbsReal(conv[d]);

  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 2 * dim + 1, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 2 * dim + 1, NULL, 2 * dim, NULL));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (row = rstart; row < rend; row++) {
    PetscInt    cols[7], nc = 0;
    PetscScalar vals[7];

    for (d = dim - 1; d >= 0; d--) { /* lower neighbours, in increasing column order */
      PetscInt c = (row / stride[d]) % n;
      if (c > 0) {
        cols[nc] = row - stride[d];
        vals[nc] = -1.0 - h * PetscMax(conv[d], 0.0);
        nc++;
      }
    }
    cols[nc] = row;
    vals[nc] = diag;
    nc++;
    for (d = 0; d < dim; d++) { /* upper neighbours */
      PetscInt c = (row / stride[d]) % n;
      if (c < n - 1) {
        cols[nc] = row + stride[d];
        vals[nc] = -1.0 - h * PetscMax(-conv[d], 0.0);
        nc++;
      }
    }
    PetscCall(MatSetValues(*A, 1, &row, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  MPI_Comm           comm;
  char               file[PETSC_MAX_PATH_LEN] = "", spec[256] = "";
  PetscBool          hasfile = PETSC_FALSE, hasgen = PETSC_FALSE, genhelp = PETSC_FALSE;
  PetscInt           n = 64, dim = 2, M, N;
  PetscReal          conv[3] = {20.0, 10.0, 5.0}, bnorm, enorm, xsnorm;
  Mat                A;
  Vec                x, b, xs;
  MatType            mtype;
  VecType            vtype;
  MatInfo            info;
  SolveResult        sol;
  PetscLogDouble     t0, t1, t6, t7;
  PetscMPIInt        size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatXtractRegister());
  /* -f, -gen (and -gen_seed) are read again, and listed in -help, by MatXtractCreateFromOptions */
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), &hasfile));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-gen", spec, sizeof(spec), &hasgen));

  PetscOptionsBegin(comm, NULL, "bicgstab options", NULL);
  PetscCall(PetscOptionsInt("-n", "Grid points per direction", NULL, n, &n, NULL));
  PetscCall(PetscOptionsInt("-dim", "Dimension: 2 or 3", NULL, dim, &dim, NULL));
  PetscCall(PetscOptionsReal("-conv_x", "Velocity, x component", NULL, conv[0], &conv[0], NULL));
  PetscCall(PetscOptionsReal("-conv_y", "Velocity, y component", NULL, conv[1], &conv[1], NULL));
  PetscCall(PetscOptionsReal("-conv_z", "Velocity, z component (3D)", NULL, conv[2], &conv[2], NULL));
  PetscOptionsEnd();

  PetscCall(CheckMatrixSource(comm, hasfile, hasgen, spec, &genhelp));
  if (genhelp) {
    PetscCall(PetscFinalize());
    return 0;
  }
  PetscCheck(n >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-n %" PetscInt_FMT ": need n >= 1", n);
  PetscCheck(dim == 2 || dim == 3, comm, PETSC_ERR_ARG_OUTOFRANGE, "-dim %" PetscInt_FMT ": need 2 or 3", dim);

  /* ---- setup: the matrix in the requested type (for matxtract the format is built at assembly) ---- */
  PetscCall(Now(comm, &t0));
  if (hasfile || hasgen) PetscCall(MatXtractCreateFromOptions(comm, NULL, &A));
  else PetscCall(CreateConvectionDiffusion(comm, n, dim, conv, &A));
  PetscCall(Now(comm, &t1));
  PetscCall(MatGetSize(A, &M, &N));
  PetscCheck(M == N, comm, PETSC_ERR_ARG_SIZ, "A must be square for a linear solve; it is %" PetscInt_FMT " x %" PetscInt_FMT, M, N);
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  PetscCall(MatGetType(A, &mtype));

  PetscCall(SetVecTypeFromOptions(A));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(x, &xs));
  PetscCall(VecGetType(b, &vtype));
  PetscCall(VecSet(xs, 1.0));
  /* b = A * ones is the first MatMult: it pays for what a type builds or uploads lazily (aijcusparse: the
   * copy to the GPU) */
  PetscCall(Now(comm, &t6));
  PetscCall(MatMult(A, xs, b));
  PetscCall(VecNorm(b, NORM_2, &bnorm)); /* waits for the device */
  PetscCall(Now(comm, &t7));

  PetscCall(SolveTimed(A, b, x, KSPBCGS, &sol));
  PetscCall(VecNorm(xs, NORM_2, &xsnorm));
  PetscCall(VecAXPY(xs, -1.0, x));
  PetscCall(VecNorm(xs, NORM_2, &enorm));

  if (hasfile) PetscCall(PetscPrintf(comm, "bicgstab: %s\n", file));
  else if (hasgen) PetscCall(PetscPrintf(comm, "bicgstab: -gen %s\n", spec));
  else if (dim == 2) PetscCall(PetscPrintf(comm, "bicgstab: convection-diffusion %" PetscInt_FMT "x%" PetscInt_FMT ", velocity (%g, %g), upwind\n", n, n, (double)conv[0], (double)conv[1]));
  else PetscCall(PetscPrintf(comm, "bicgstab: convection-diffusion %" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT ", velocity (%g, %g, %g), upwind\n", n, n, n, (double)conv[0], (double)conv[1], (double)conv[2]));
  PetscCall(PetscPrintf(comm, "rows: %" PetscInt_FMT ", nonzeros: %.0f\n", M, (double)info.nz_used));
  PetscCall(PetscPrintf(comm, "matrix type: %s\n", mtype));
  PetscCall(PetscPrintf(comm, "vector type: %s\n", vtype));
  PetscCall(PetscPrintf(comm, "processes: %d\n", (int)size));
  PetscCall(PrintSolve(comm, &sol));
  PetscCall(PetscPrintf(comm, "error ||x - 1||_2 / ||1||_2: %.3e\n", (double)(enorm / xsnorm)));
  PetscCall(PrintSolveTimes(comm, "create/read, assembly, conversion", t1 - t0, t7 - t6, &sol));

  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xs));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
