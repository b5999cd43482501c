/* test_petsc_predictor - the plan predictor and the online upgrade through the PETSc type, on the
 * CPU, on one rank (seqaijmatxtract) or several (mpiaijmatxtract: the diagonal block's plan).
 * A model file with known trees (written here with the core's writer) prefers crux (0.7,0.5) with
 * hot mode se over (0,0) and costs 200 ns per nonzero to build, so that:
 *   - upgrade now builds the predicted plan at once (source "predictor", -mat_view says so);
 *   - upgrade auto starts at (0,0) and upgrades only after enough MatMults (guard off: the upgraded
 *     plan stays; guard on: the faster of the two stays, either way one attempt), and at once with
 *     a large -mat_matxtract_expected_mults, never with a small one;
 *   - upgrade never and -mat_matxtract_predictor 0 never predict;
 *   - a crux fixed by an option or MatXtractSetCrux is never overridden (the hot mode still is
 *     predicted: the model prefers se at any hot crux);
 *   - a missing or malformed model file is a clear PETSc error naming the file;
 *   - -mat_matxtract_lever_period: the levers weighed every P-th MatMult only, the same on every rank;
 * and every product equals AIJ's (relative error <= 1e-12) before and after every change of plan.
 * Usage: test_petsc_predictor (any number of ranks) */
#include <matxtract.h>
#include "core/mx_predictor.h"
#include "../common/petsc_check.h"

static const char help[] = "MatXtract predictor and online upgrade vs AIJ.\n";

#define MAX_MULTS 50000

static char model_path[PETSC_MAX_PATH_LEN], bad_path[PETSC_MAX_PATH_LEN], view_path[PETSC_MAX_PATH_LEN];

/* The known model: one tree, log(t / t_ref) = 0 without hot nonzeros (tau_r <= 0.25), else -0.3
 * (hot mode auto or du) or -0.7 (se); candidates (0,0) auto auto and (0.7,0.5) se merge; the extra
 * setup 200 ns per nonzero. Written by rank 0. */
static PetscErrorCode WriteModels(void)
{
  static const int32_t tree_start[2] = {0, 5};
  static const double  weight[1]     = {1.0};
  static const int32_t feature[5]    = {MX_NFEATURES + 1, -1, MX_NFEATURES + 2, -1, -1};
  static const double  threshold[5]  = {0.25, 0, 1.5, 0, 0};
  static const int32_t left[5]       = {1, -1, 3, -1, -1};
  static const int32_t right[5]      = {2, -1, 4, -1, -1};
  static const double  value[5]      = {0, 0, 0, -0.3, -0.7};
  static const mx_plan candidates[2] = {{{0.0, 0.0}, MX_MODE_AUTO, MX_PLAN_COLD_AUTO}, {{0.7, 0.5}, MX_MODE_SE, MX_PLAN_COLD_MERGE}};
  mx_model_node        node[5];
  mx_model             M = {0};
  char                 err[512];
  PetscMPIInt          rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (!rank) {
    FILE *f;
    M.version = MX_MODEL_VERSION;
    snprintf(M.trained_on, sizeof M.trained_on, "hand-written test trees");
    M.ensemble    = MX_ENSEMBLE_SUM;
    M.ntrees      = 1;
    M.nnodes      = 5;
    M.tree_start  = tree_start;
    M.tree_weight = weight;
    M.feature     = feature;
    M.threshold   = threshold;
    M.left        = left;
    M.right       = right;
    M.value       = value;
    M.node        = node;
    mx_model_nodes_fill(&M, node);
    M.ncandidates = 2;
    M.candidates  = candidates;
    M.setup       = (mx_setup_model){200.0, 0.0, 0.0};
    PetscCheck(mx_model_write(&M, model_path, err, sizeof err) == MX_MODEL_OK, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "writing the test model: %s", err);
    f = fopen(bad_path, "w");
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", bad_path);
    fputs("matxtract-model 1\ntrained_on a broken file\nensemble bogus\n", f);
    fclose(f);
  }
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

/* Expect on every rank (each rank checks its own diagonal block). */
static PetscErrorCode ExpectAll(PetscBool ok, const char *what, const char *name)
{
  PetscMPIInt mine = ok ? 1 : 0, all;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
  PetscCall(Expect((PetscBool)all, what, name));
  PetscFunctionReturn(0);
}

/* B = A converted to matxtract (CPU, the test model) under `opts`; the -mat_matxtract_* options
 * hold for this conversion only. */
static PetscErrorCode Convert(Mat A, const char *opts, Mat *B)
{
  static const char *const names[] = {"crux", "mode", "cold", "device", "predictor", "model", "upgrade", "expected_mults", "guard", "lever_period"};
  char                     common[PETSC_MAX_PATH_LEN + 64];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(common, sizeof common, "-mat_matxtract_device cpu -mat_matxtract_model %s", model_path));
  PetscCall(PetscOptionsInsertString(NULL, common));
  PetscCall(PetscOptionsInsertString(NULL, opts));
  PetscCall(MatConvert(A, MATMATXTRACT, MAT_INITIAL_MATRIX, B));
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    char name[64];
    PetscCall(PetscSNPrintf(name, sizeof name, "-mat_matxtract_%s", names[k]));
    PetscCall(PetscOptionsClearValue(NULL, name));
  }
  PetscFunctionReturn(0);
}

/* MatMults of B until `done` holds on every rank for the info of B's (diagonal) block, at most
 * MAX_MULTS; *n the MatMults made. done = NULL: exactly *n MatMults. */
static PetscErrorCode MultUntil(Mat B, PetscBool (*done)(const MatXtractInfo *), PetscInt *n)
{
  Vec           x, y;
  MatXtractInfo info;
  PetscInt      k, limit = done ? MAX_MULTS : *n;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecSet(x, 1.0));
  for (k = 0; k < limit; k++) {
    if (done) {
      PetscMPIInt mine, all;
      PetscCall(MatXtractGetInfo(B, &info));
      mine = done(&info) ? 1 : 0;
      PetscCallMPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
      if (all) break;
    }
    PetscCall(MatMult(B, x, y));
  }
  *n = k;
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

static PetscBool UpgradeTried(const MatXtractInfo *info) { return info->upgrade_tried; }

static PetscBool Settled(const MatXtractInfo *info) { return info->plan_settled; }

static PetscBool IsCrux(const MatXtractInfo *info, PetscReal tc, PetscReal tr) { return (PetscBool)(info->tau_c == tc && info->tau_r == tr); }

/* upgrade now: the predicted plan at the first build, shown by MatXtractGetInfo and -mat_view. */
static PetscErrorCode CheckNow(Mat A)
{
  Mat           B;
  MatXtractInfo info;
  PetscViewer   viewer;
  static char   buf[1 << 20]; /* MPIAIJ's ::ascii_info_detail lists its scatter before our lines */

  PetscFunctionBegin;
  PetscCall(Convert(A, "-mat_matxtract_upgrade now", &B));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(ExpectAll((PetscBool)(IsCrux(&info, 0.7, 0.5) && info.crux_source == MATXTRACT_CRUX_PREDICTOR && info.hot_nnz > 0), "upgrade now: predicted crux (0.7,0.5) from the predictor", "now"));
  PetscCall(ExpectAll((PetscBool)(!strcmp(info.hot_mode, "se") && info.mode_source == MATXTRACT_CRUX_PREDICTOR && info.cold_source == MATXTRACT_CRUX_PREDICTOR && !strcmp(info.pred_cold_kernel, "merge")), "upgrade now: hot mode se, cold kernel merge from the predictor", "now"));
  PetscCall(ExpectAll((PetscBool)(info.predicted && !strcmp(info.model_trained_on, "hand-written test trees")), "upgrade now: predicted with the model file", "now"));
  PetscCall(CheckProducts(A, B, "upgrade now", 11));
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_WORLD, view_path, &viewer));
  PetscCall(PetscViewerPushFormat(viewer, PETSC_VIEWER_ASCII_INFO_DETAIL));
  PetscCall(MatView(B, viewer));
  PetscCall(PetscViewerPopFormat(viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  {
    FILE  *f = fopen(view_path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n]   = 0;
    if (f) fclose(f);
  }
  PetscCall(Expect((PetscBool)(strstr(buf, "crux (tau_c, tau_r) = (0.7, 0.5) from predictor") && strstr(buf, "hot mode se from predictor") && strstr(buf, "trained on: hand-written test trees") && strstr(buf, "predicted plan crux (0.7, 0.5)")), "-mat_view shows the predicted plan and the model", "now"));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* upgrade auto: (0,0) first, the upgrade after more than a few MatMults; guard off keeps it. */
static PetscErrorCode CheckAuto(Mat A, PetscBool guard)
{
  Mat           B;
  MatXtractInfo info;
  PetscInt      n = 2;
  const char   *name = guard ? "auto, guard on" : "auto, guard off";

  PetscFunctionBegin;
  PetscCall(Convert(A, guard ? "-mat_matxtract_upgrade auto" : "-mat_matxtract_guard 0", &B));
  PetscCall(CheckProducts(A, B, name, 21));
  PetscCall(MultUntil(B, NULL, &n));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(ExpectAll((PetscBool)(IsCrux(&info, 0, 0) && info.crux_source == MATXTRACT_CRUX_DEFAULT && !info.upgrade_tried), "auto: (0,0) after a few MatMults", name));
  PetscCall(MultUntil(B, UpgradeTried, &n));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: upgrade tried after %" PetscInt_FMT " more MatMults\n", name, n));
  PetscCall(ExpectAll((PetscBool)(info.upgrade_tried && info.predicted && info.pred_tau_c == (PetscReal)0.7 && info.mult_seconds_predicted > 0), "auto: predicted and upgraded", name));
  if (guard) PetscCall(ExpectAll((PetscBool)((info.crux_source == MATXTRACT_CRUX_UPGRADE && IsCrux(&info, 0.7, 0.5)) || (info.crux_source == MATXTRACT_CRUX_GUARD && IsCrux(&info, 0, 0))), "auto: the guard kept one of the two plans", name));
  else PetscCall(ExpectAll((PetscBool)(info.crux_source == MATXTRACT_CRUX_UPGRADE && IsCrux(&info, 0.7, 0.5) && !strcmp(info.hot_mode, "se")), "auto without guard: the upgraded plan", name));
  PetscCall(CheckProducts(A, B, name, 22));
  n = 20;
  PetscCall(MultUntil(B, NULL, &n));
  PetscCall(MatXtractGetInfo(B, &info));
  /* the rebuild is made beside the plan in use, which the guard puts back without building it again */
  PetscCall(ExpectAll((PetscBool)(info.builds == 2), "auto: one attempt (no further builds)", name));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* Value refresh keeps the upgraded plan; a new pattern starts again from (0,0). */
static PetscErrorCode CheckRefreshAndPattern(Mat A)
{
  Mat           B, A2;
  MatXtractInfo info;
  PetscInt      n, rstart, rend, N;

  PetscFunctionBegin;
  PetscCall(Convert(A, "-mat_matxtract_guard 0 -mat_matxtract_expected_mults 100000 -mat_matxtract_lever_period 1", &B));
  PetscCall(MultUntil(B, UpgradeTried, &n));
  PetscCall(Expect((PetscBool)(n <= 3), "expected_mults large: upgrade at the second MatMult", "expected 100000"));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &A2));
  PetscCall(MatScale(A2, -2.0));
  PetscCall(MatScale(B, -2.0));
  PetscCall(CheckProducts(A2, B, "upgraded, after MatScale", 31));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(ExpectAll((PetscBool)(IsCrux(&info, 0.7, 0.5) && info.crux_source == MATXTRACT_CRUX_UPGRADE), "value refresh keeps the upgraded plan", "refresh"));
  /* a new nonzero on every rank's first row: new pattern */
  PetscCall(MatGetOwnershipRange(A2, &rstart, &rend));
  PetscCall(MatGetSize(A2, NULL, &N));
  PetscCall(MatSetOption(A2, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (PetscInt j = 0; j < N; j += 97) {
    PetscCall(MatSetValue(A2, rstart, j, 1.0, ADD_VALUES));
    PetscCall(MatSetValue(B, rstart, j, 1.0, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(A2, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A2, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(ExpectAll((PetscBool)(IsCrux(&info, 0, 0) && !info.upgrade_tried && !info.predicted && info.mults == 0), "new pattern: (0,0) and a fresh prediction state", "pattern"));
  PetscCall(CheckProducts(A2, B, "new pattern", 32));
  PetscCall(MultUntil(B, UpgradeTried, &n));
  PetscCall(CheckProducts(A2, B, "new pattern, upgraded", 33));
  PetscCall(MatDestroy(&A2));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* -mat_matxtract_lever_period P (an MPI option: default 32 on several ranks; the sequential type
 * weighs every MatMult, P = 1): the levers are weighed before MatMults 1, P + 1, 2P + 1, ... only.
 * With a large expected_mults: at MatMult 1 the prediction waits for a time per MatMult (none yet on
 * the CPU), at P + 1 it is applied, at 2P + 1 the rebuild: after 2P MatMults every rank has
 * predicted and none has tried the upgrade, after one more every rank has. */
static PetscErrorCode CheckLeverPeriod(Mat A)
{
  static const PetscInt periods[] = {1, 8, 0}; /* 0: the option not given */
  PetscMPIInt           size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  for (size_t k = 0; k < sizeof periods / sizeof periods[0]; k++) {
    Mat           B;
    MatXtractInfo info;
    char          opts[160], name[64], given[64] = "";
    PetscInt      period = size == 1 ? 1 : periods[k] ? periods[k] : 32, n = 2 * period;
    PetscMPIInt   mine, any;
    PetscCall(PetscSNPrintf(name, sizeof name, "lever period %" PetscInt_FMT " (option %" PetscInt_FMT ")", period, periods[k]));
    if (periods[k]) PetscCall(PetscSNPrintf(given, sizeof given, " -mat_matxtract_lever_period %" PetscInt_FMT, periods[k]));
    PetscCall(PetscSNPrintf(opts, sizeof opts, "-mat_matxtract_guard 0 -mat_matxtract_expected_mults 100000%s", given));
    PetscCall(Convert(A, opts, &B));
    PetscCall(MultUntil(B, NULL, &n));
    PetscCall(MatXtractGetInfo(B, &info));
    mine = info.upgrade_tried ? 1 : 0;
    PetscCallMPI(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD));
    PetscCall(ExpectAll((PetscBool)(!any && info.predicted), "after 2P MatMults: predicted, no rank upgraded", name));
    n = 1;
    PetscCall(MultUntil(B, NULL, &n));
    PetscCall(MatXtractGetInfo(B, &info));
    PetscCall(ExpectAll((PetscBool)(info.upgrade_tried && info.crux_source == MATXTRACT_CRUX_UPGRADE && info.mults == 1), "every rank upgraded at MatMult 2P + 1", name));
    PetscCall(CheckProducts(A, B, name, 61 + (int)k));
    PetscCall(MatDestroy(&B));
  }
  PetscCall(PetscOptionsInsertString(NULL, "-mat_matxtract_lever_period 0"));
  {
    Mat            B;
    PetscErrorCode ierr;
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = MatConvert(A, MATMATXTRACT, MAT_INITIAL_MATRIX, &B);
    PetscCall(PetscPopErrorHandler());
    PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_lever_period"));
    PetscCall(ExpectAll((PetscBool)(size == 1 || ierr == PETSC_ERR_ARG_OUTOFRANGE), "-mat_matxtract_lever_period 0: a PETSc error on several ranks", "lever period 0"));
    if (!ierr) PetscCall(MatDestroy(&B));
  }
  PetscFunctionReturn(0);
}

/* No upgrade where the options say so, or where the rule says it cannot pay. */
static PetscErrorCode CheckNoUpgrade(Mat A)
{
  static const char *const opts[] = {"-mat_matxtract_upgrade never", "-mat_matxtract_predictor 0", "-mat_matxtract_expected_mults 3"};

  PetscFunctionBegin;
  for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
    Mat           B;
    MatXtractInfo info;
    PetscInt      n = 3000;
    PetscCall(Convert(A, opts[k], &B));
    PetscCall(MultUntil(B, NULL, &n));
    PetscCall(MatXtractGetInfo(B, &info));
    PetscCall(ExpectAll((PetscBool)(IsCrux(&info, 0, 0) && info.crux_source == MATXTRACT_CRUX_DEFAULT && !info.upgrade_tried && info.builds == 1), "no upgrade", opts[k]));
    if (k < 2) PetscCall(ExpectAll((PetscBool)!info.predicted, "no prediction", opts[k]));
    PetscCall(CheckProducts(A, B, opts[k], 41 + k));
    PetscCall(MatDestroy(&B));
  }
  PetscFunctionReturn(0);
}

/* A crux fixed by an option or by MatXtractSetCrux stays; the hot mode is still predicted (se). */
static PetscErrorCode CheckFixedCrux(Mat A)
{
  Mat           B;
  MatXtractInfo info;
  PetscInt      n;

  PetscFunctionBegin;
  PetscCall(Convert(A, "-mat_matxtract_upgrade now -mat_matxtract_crux 0.9,0.8", &B));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(ExpectAll((PetscBool)(IsCrux(&info, 0.9, 0.8) && info.crux_source == MATXTRACT_CRUX_OPTION && info.pred_tau_c == (PetscReal)0.9), "-mat_matxtract_crux is not overridden", "fixed crux"));
  PetscCall(ExpectAll((PetscBool)(!strcmp(info.hot_mode_requested, "se") && info.mode_source == MATXTRACT_CRUX_PREDICTOR), "the hot mode is predicted under a fixed crux", "fixed crux"));
  PetscCall(CheckProducts(A, B, "fixed crux (option)", 51));
  PetscCall(MatDestroy(&B));

  /* MatXtractSetCrux: (0.6,0.4) with the hot mode auto resolves to du or se by bytes at the build,
   * and the model sees the resolved mode: du (-0.3) is upgraded to se (-0.7), the crux kept; se is
   * already the predicted plan (no rebuild). Either way the plan settles on (0.6,0.4) se. */
  PetscCall(Convert(A, "-mat_matxtract_guard 0", &B));
  PetscCall(MatXtractSetCrux(B, 0.6, 0.4));
  PetscCall(MultUntil(B, Settled, &n));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(ExpectAll((PetscBool)(IsCrux(&info, 0.6, 0.4) && info.crux_source == MATXTRACT_CRUX_USER && !strcmp(info.hot_mode, "se") && (info.mode_source == MATXTRACT_CRUX_UPGRADE ? info.builds == 2 : info.builds == 1 && !info.upgrade_tried)), "MatXtractSetCrux is not overridden by an upgrade of the hot mode", "fixed crux"));
  PetscCall(CheckProducts(A, B, "fixed crux (user)", 52));
  PetscCall(MatDestroy(&B));

  /* crux and hot mode fixed: the model ties on what is left (the cold kernel; one CPU kernel): no upgrade */
  PetscCall(Convert(A, "-mat_matxtract_mode du", &B));
  PetscCall(MatXtractSetCrux(B, 0.6, 0.4));
  n = 3000;
  PetscCall(MultUntil(B, NULL, &n));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(ExpectAll((PetscBool)(IsCrux(&info, 0.6, 0.4) && !strcmp(info.hot_mode, "du") && info.mode_source == MATXTRACT_CRUX_OPTION && !info.upgrade_tried && info.builds == 1), "crux and mode fixed: nothing to upgrade", "fixed crux and mode"));
  PetscCall(CheckProducts(A, B, "fixed crux and mode", 53));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* A missing and a malformed model file: the error code and a message naming the file. */
static PetscErrorCode CheckBadModel(Mat A)
{
  const char *paths[2] = {"/nonexistent/dir/none.model", bad_path};
  const int   codes[2] = {PETSC_ERR_FILE_OPEN, PETSC_ERR_FILE_UNEXPECTED};

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    Mat            B = NULL;
    PetscErrorCode ierr;
    const char    *text = NULL, *specific = NULL;
    char           opt[PETSC_MAX_PATH_LEN + 32];
    PetscCall(PetscSNPrintf(opt, sizeof opt, "-mat_matxtract_model %s", paths[k]));
    PetscCall(PetscOptionsInsertString(NULL, opt));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = MatConvert(A, MATMATXTRACT, MAT_INITIAL_MATRIX, &B);
    PetscCall(PetscPopErrorHandler());
    PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_model"));
    PetscErrorMessage(ierr, &text, (char **)&specific);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "bad model %s: error %d: %s\n", paths[k], (int)ierr, specific ? specific : "(none)"));
    PetscCall(Expect((PetscBool)(ierr == codes[k]), "bad model file: error code", paths[k]));
    PetscCall(Expect((PetscBool)(specific && strstr(specific, paths[k]) && strstr(specific, "-mat_matxtract_model")), "bad model file: the message names the file", paths[k]));
    if (k == 1) PetscCall(Expect((PetscBool)(specific && strstr(specific, ":3:")), "bad model file: the message names the line", paths[k]));
    PetscCall(Expect((PetscBool)(B == NULL), "bad model file: no matrix", paths[k]));
  }
  PetscFunctionReturn(0);
}

/* MatXtractCruxSourceName: one word per source, in the enum's order; "unknown" outside it. */
static PetscErrorCode CheckSourceNames(void)
{
  static const char *const want[] = {"default", "option", "user", "predictor", "upgrade", "guard"};

  PetscFunctionBegin;
  for (int s = MATXTRACT_CRUX_DEFAULT; s <= MATXTRACT_CRUX_GUARD; s++) PetscCall(Expect((PetscBool)!strcmp(MatXtractCruxSourceName((MatXtractCruxSource)s), want[s]), want[s], "MatXtractCruxSourceName"));
  PetscCall(Expect((PetscBool)!strcmp(MatXtractCruxSourceName((MatXtractCruxSource)(MATXTRACT_CRUX_GUARD + 1)), "unknown"), "past the enum: unknown", "MatXtractCruxSourceName"));
  PetscCall(Expect((PetscBool)!strcmp(MatXtractCruxSourceName((MatXtractCruxSource)-1), "unknown"), "negative: unknown", "MatXtractCruxSourceName"));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat         A;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatXtractRegister());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  /* files per rank count: the 1- and 2-rank tests may run at once */
  PetscCall(PetscSNPrintf(model_path, sizeof model_path, "%s/test_predictor_np%d.model", MX_TEST_TMPDIR, (int)size));
  PetscCall(PetscSNPrintf(bad_path, sizeof bad_path, "%s/test_predictor_bad_np%d.model", MX_TEST_TMPDIR, (int)size));
  PetscCall(PetscSNPrintf(view_path, sizeof view_path, "%s/test_predictor_view_np%d.txt", MX_TEST_TMPDIR, (int)size));
  PetscCall(WriteModels());
  PetscCall(CheckSourceNames());
  PetscCall(MatXtractGenerate(PETSC_COMM_WORLD, "rand:3000:8", "aij_", &A));
  PetscCall(CheckBadModel(A));
  PetscCall(CheckNow(A));
  PetscCall(CheckAuto(A, PETSC_FALSE));
  PetscCall(CheckAuto(A, PETSC_TRUE));
  PetscCall(CheckRefreshAndPattern(A));
  PetscCall(CheckLeverPeriod(A));
  PetscCall(CheckNoUpgrade(A));
  PetscCall(CheckFixedCrux(A));
  {
    PetscInt all;
    PetscCallMPI(MPI_Allreduce(&nfail, &all, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
    nfail = all;
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", nchecks - nfail, nfail));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
