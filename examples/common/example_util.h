/* example_util.h - the few helpers every example shares (header-only; examples use only the public
 * API of matxtract plus PETSc). */
#ifndef EXAMPLE_UTIL_H
#define EXAMPLE_UTIL_H

#include <matxtract.h>
#include <petscksp.h>

#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

/* A dense N x k matrix in A's row layout (MatSetUp done, entries not set), MATDENSECUDA when the
 * vectors are on the device (vtype *cuda), else MATDENSE: the blocks of the many-vector examples. */
static inline PetscErrorCode CreateDenseBlock(Mat A, PetscInt k, VecType vtype, Mat *X)
{
  PetscInt  n;
  PetscBool cuda;

  PetscFunctionBeginUser;
  PetscCall(MatGetLocalSize(A, &n, NULL));
  PetscCall(PetscStrendswith(vtype, "cuda", &cuda));
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), X));
  PetscCall(MatSetSizes(*X, n, PETSC_DECIDE, PETSC_DETERMINE, k));
  PetscCall(MatSetType(*X, cuda ? MATDENSECUDA : MATDENSE));
  PetscCall(MatSetUp(*X));
  PetscFunctionReturn(PETSC_SUCCESS);
}

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

/* The matrix source options of an example, -f FILE and -gen SPEC, once read: refuses both at once;
 * "-gen help" prints the generator families and sets *done (the example then exits). */
static inline PetscErrorCode CheckMatrixSource(MPI_Comm comm, PetscBool hasfile, PetscBool hasgen, const char *spec, PetscBool *done)
{
  PetscBool isgenhelp;

  PetscFunctionBeginUser;
  PetscCall(PetscStrcmp(spec, "help", &isgenhelp));
  *done = (PetscBool)(hasgen && isgenhelp);
  if (*done) {
    PetscCall(PetscPrintf(comm, "%s\n", MatXtractGenerateHelp()));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(!(hasfile && hasgen), comm, PETSC_ERR_ARG_INCOMP, "Give -f FILE or -gen SPEC, not both");
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

/* What a timed linear solve reports. */
typedef struct {
  PetscInt           its;
  KSPConvergedReason reason;
  char               ktype[64], ptype[64];
  PetscLogDouble     t_setup, t_solve; /* KSPSetUp (the preconditioner), KSPSolve */
  PetscReal          rnorm, bnorm;     /* true residual ||b - A x||_2, and ||b||_2 */
} SolveResult;

/* Solve A x = b from x = 0 with a KSP of type dflt (NULL: PETSc's default; -ksp_type, -pc_type ...
 * win), KSPSetUp and KSPSolve timed apart, then the true residual. */
static inline PetscErrorCode SolveTimed(Mat A, Vec b, Vec x, KSPType dflt, SolveResult *s)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)A);
  KSP            ksp;
  PC             pc;
  KSPType        kt;
  PCType         pt;
  Vec            r;
  PetscLogDouble t0, t1, t2, t3;

  PetscFunctionBeginUser;
  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  if (dflt) PetscCall(KSPSetType(ksp, dflt));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(Now(comm, &t0));
  PetscCall(KSPSetUp(ksp));
  PetscCall(Now(comm, &t1));
  PetscCall(VecSet(x, 0.0));
  PetscCall(Now(comm, &t2));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(Now(comm, &t3));
  s->t_setup = t1 - t0;
  s->t_solve = t3 - t2;
  PetscCall(KSPGetIterationNumber(ksp, &s->its));
  PetscCall(KSPGetConvergedReason(ksp, &s->reason));
  PetscCall(KSPGetType(ksp, &kt));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCGetType(pc, &pt));
  PetscCall(PetscStrncpy(s->ktype, kt, sizeof s->ktype));
  PetscCall(PetscStrncpy(s->ptype, pt, sizeof s->ptype));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &s->rnorm));
  PetscCall(VecNorm(b, NORM_2, &s->bnorm));
  PetscCall(VecDestroy(&r));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solver lines every solve example prints (compared by the tests). */
static inline PetscErrorCode PrintSolve(MPI_Comm comm, const SolveResult *s)
{
  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(comm, "ksp: %s, pc: %s\n", s->ktype, s->ptype));
  PetscCall(PetscPrintf(comm, "iterations: %" PetscInt_FMT "\n", s->its));
  PetscCall(PetscPrintf(comm, "converged reason: %s\n", KSPConvergedReasons[s->reason]));
  if (s->bnorm > 0.0) PetscCall(PetscPrintf(comm, "true residual ||b - A x||_2 / ||b||_2: %.3e\n", (double)(s->rnorm / s->bnorm)));
  else PetscCall(PetscPrintf(comm, "true residual ||b - A x||_2 (b = 0): %.3e\n", (double)s->rnorm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The timing lines ("time:" prefix: the tests skip them); matrix_what names the matrix setup. */
static inline PetscErrorCode PrintSolveTimes(MPI_Comm comm, const char *matrix_what, PetscLogDouble t_matrix, PetscLogDouble t_first_mult, const SolveResult *s)
{
  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(comm, "time: setup, matrix (%s): %.6f s\n", matrix_what, t_matrix));
  PetscCall(PetscPrintf(comm, "time: setup, first MatMult: %.6f s\n", t_first_mult));
  PetscCall(PetscPrintf(comm, "time: setup, KSPSetUp (preconditioner): %.6f s\n", s->t_setup));
  PetscCall(PetscPrintf(comm, "time: solve: %.6f s\n", s->t_solve));
  PetscCall(PetscPrintf(comm, "time: per iteration: %.3e s\n", s->its > 0 ? s->t_solve / s->its : 0.0));
  PetscCall(PetscPrintf(comm, "time: total: %.6f s\n", t_matrix + t_first_mult + s->t_setup + s->t_solve));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One line on the plan a matxtract A runs (rank 0's diagonal block under MPI) after `when`: the crux,
 * hot mode and cold kernel in use and where they came from, the predicted plan, and whether an online
 * upgrade was tried (tuning/e2e/ reads it). Nothing for other types. */
static inline PetscErrorCode PrintMatXtractPlan(Mat A, const char *when)
{
  PetscBool                ours;
  MatXtractInfo            xi;
  char                     pred[128] = "none";

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &ours, MATSEQAIJMATXTRACT, MATMPIAIJMATXTRACT, ""));
  if (!ours) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatXtractGetInfo(A, &xi));
  if (xi.predicted) PetscCall(PetscSNPrintf(pred, sizeof pred, "crux (%g, %g) %s %s", (double)xi.pred_tau_c, (double)xi.pred_tau_r, xi.pred_hot_mode, xi.pred_cold_kernel));
  PetscCall(PetscPrintf(PetscObjectComm((PetscObject)A), "matxtract: plan after the %s: crux (%g, %g) from %s, hot mode %s (requested %s, from %s), cold kernel %s (from %s), builds %" PetscInt_FMT ", predicted %s, upgrade %s, MatMult on the %s, %.4g us measured\n", when, (double)xi.tau_c,
                        (double)xi.tau_r, MatXtractCruxSourceName(xi.crux_source), xi.hot_mode, xi.hot_mode_requested, MatXtractCruxSourceName(xi.mode_source), xi.cold_kernel, MatXtractCruxSourceName(xi.cold_source), xi.builds, pred,
                        !xi.upgrade_tried ? "not tried" : (xi.crux_source == MATXTRACT_CRUX_GUARD || xi.mode_source == MATXTRACT_CRUX_GUARD || xi.cold_source == MATXTRACT_CRUX_GUARD) ? "tried, guard kept the previous plan" : "kept", xi.on_device ? "GPU" : "CPU", 1e6 * (double)xi.mult_seconds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif
