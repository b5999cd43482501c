/* amortize - setup cost vs per-iteration gain of each Mat type on one matrix and one solver.
 *
 * The matrix is generated (-gen SPEC) or read (-f FILE) once as AIJ on the host. For each type in
 * -types (default aijcusparse,matxtract): setup = MatConvert from AIJ + the first MatMult (which
 * uploads; for matxtract the format is built inside MatConvert), then -its iterations of the
 * solver, timed with MPI_Wtime around the loop (a VecNorm at the end synchronises the device).
 * Solvers: -solver cg (CG + Jacobi, fixed iteration count: rtol 0) or power (x <- A x / ||A x||).
 * One CSV line per type on stdout: matrix,type,solver,setup_s,per_it_s,its,crux_tc,crux_tr,hot_share
 * The break-even iteration count against type B is k* = (setup_A - setup_B) / (t_B - t_A). */
#include <matxtract.h>
#include <petscksp.h>

static const char help[] = "Amortization study: setup and per-iteration time of Mat types.\n"
                           "  -gen SPEC | -f FILE    the matrix\n"
                           "  -types LIST            comma-separated Mat types (default aijcusparse,matxtract)\n"
                           "  -solver cg|power       solver (default power)\n"
                           "  -its N                 iterations (default 200)\n"
                           "  -name NAME             matrix name in the CSV (default: the spec or file)\n";

/* One power-method step per iteration: y = A x, x = y / ||y||. */
static PetscErrorCode RunPower(Mat M, PetscInt its, PetscLogDouble *t)
{
  Vec       x, y;
  PetscReal nrm;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(M, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(VecNorm(x, NORM_2, &nrm));
  *t = MPI_Wtime();
  for (PetscInt k = 0; k < its; k++) {
    PetscCall(MatMult(M, x, y));
    PetscCall(VecNorm(y, NORM_2, &nrm));
    PetscCall(VecAXPBY(x, 1.0 / nrm, 0.0, y));
  }
  PetscCall(VecNorm(x, NORM_2, &nrm));
  *t = MPI_Wtime() - *t;
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

/* CG + Jacobi for exactly its iterations (rtol 0). */
static PetscErrorCode RunCG(Mat M, PetscInt its, PetscLogDouble *t)
{
  KSP       ksp;
  PC        pc;
  Vec       x, b;
  PetscReal nrm;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(M, &x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)M), &ksp));
  PetscCall(KSPSetOperators(ksp, M, M));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 0.0, 0.0, PETSC_DEFAULT, its));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  PetscCall(KSPSetConvergenceTest(ksp, KSPConvergedSkip, NULL, NULL));
  PetscCall(KSPSetUp(ksp));
  PetscCall(VecNorm(b, NORM_2, &nrm));
  *t = MPI_Wtime();
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(VecNorm(x, NORM_2, &nrm));
  *t = MPI_Wtime() - *t;
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char           types[256] = "aijcusparse,matxtract", solver[16] = "power", name[256] = "";
  PetscInt       its = 200;
  Mat            A;
  char          *tok, *save = NULL;
  PetscBool      has_name;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatXtractRegister());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-types", types, sizeof types, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-solver", solver, sizeof solver, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-name", name, sizeof name, &has_name));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-its", &its, NULL));
  if (!has_name) {
    PetscCall(PetscOptionsGetString(NULL, NULL, "-gen", name, sizeof name, NULL));
    if (!name[0]) PetscCall(PetscOptionsGetString(NULL, NULL, "-f", name, sizeof name, NULL));
  }
  PetscCall(MatXtractCreateFromOptions(PETSC_COMM_WORLD, NULL, &A)); /* AIJ: no -mat_type is given */
  for (tok = strtok_r(types, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    Mat            M;
    Vec            x, y;
    PetscLogDouble t0, setup, tloop = 0;
    PetscReal      nrm, tc = -1, tr = -1, hot = 0;
    PetscBool      ours;

    PetscCall(MPI_Barrier(PETSC_COMM_WORLD));
    t0 = MPI_Wtime();
    PetscCall(MatConvert(A, tok, MAT_INITIAL_MATRIX, &M));
    PetscCall(MatCreateVecs(M, &x, &y));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(M, x, y));
    PetscCall(VecNorm(y, NORM_2, &nrm)); /* waits for the device */
    setup = MPI_Wtime() - t0;
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)M, &ours, MATSEQAIJMATXTRACT, MATMPIAIJMATXTRACT, ""));
    if (ours) {
      MatXtractInfo info;
      PetscCall(MatXtractGetInfo(M, &info));
      tc  = info.tau_c;
      tr  = info.tau_r;
      hot = (info.hot_nnz + info.cold_nnz) ? (PetscReal)info.hot_nnz / (PetscReal)(info.hot_nnz + info.cold_nnz) : 0;
    }
    if (!strcmp(solver, "cg")) PetscCall(RunCG(M, its, &tloop));
    else PetscCall(RunPower(M, its, &tloop));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s,%s,%s,%.6e,%.6e,%" PetscInt_FMT ",%g,%g,%.4f\n", name, tok, solver, setup, tloop / (PetscLogDouble)its, its, (double)tc, (double)tr, (double)hot));
    PetscCall(MatDestroy(&M));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
