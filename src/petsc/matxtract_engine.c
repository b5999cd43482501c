/* matxtract_engine.c - the plan engine of a sequential block (issue 39): the first plan of a pattern,
 * the levers armed after each build, and before each product one step of core's decision loop
 * (mx_engine_step: ski rental, one guard, one state per lever). The Mat ops call it; it calls the
 * shadow (build, refresh, compress, split, time: no decisions) and the prediction.
 *
 * Rules:
 *   - A part of the plan fixed by an option or MatXtractSetCrux is never changed by a lever.
 *   - Levers are weighed in the table's order (predict, cold kernel, rebuild, row patterns, pack, hub
 *     split); each pays once the products spent on the plan in use, saving its gain, would have paid
 *     for its estimated cost (with -mat_matxtract_expected_mults N: at once if the products left
 *     can, else never). The guard times what a lever changed and undoes it unless strictly faster.
 *   - Decided at the build instead, where deciding is cheap or the user asked: the prediction under
 *     -mat_matxtract_upgrade now, and the cold region's compression under -mat_matxtract_compress on
 *     (and on the CPU path).
 *   - A lever that fails leaves the plan in use as it was, on the device it ran on (a rebuild is made
 *     beside the plan in use and replaces it only once built), never a silent move to the CPU.
 *   - A lever needing more device memory than is free is declined.
 *   - The pack's assumed gain is lower where the cold region fits half the GPU's L2
 *     (mx_pack_assumed_gain).
 *   - Before each product, the plain device arrays that a pack in use replaces are freed (the shadow's
 *     MatXtractShadowReleasePackPlain: nothing to do, no synchronisation, once they are); whatever
 *     reads them later (a refresh, a lever, the feature passes) has them decoded back first.
 * The table's constants and the measurements behind them: docs/performance.md, "Plan engine costs". */
#include "matxtract_impl.h"
#include <math.h>

/* Decided at the build: a compression lever whose estimated cost (fixed + per nonzero, its guard's
 * products aside) is at most this fraction of the build just made (upload included) is applied at
 * once, so the solve runs the right form from its first product; costlier ones wait for the rule. */
#define MATXTRACT_BUILD_FRACTION 0.02

/* Seconds of a GPU product that no lever shortens (launch and latency: the product of a matrix of
 * next to no bytes; docs/performance.md, "Plan engine costs"): a lever saves at most t_cur minus
 * this, so the products of small matrices decline every lever. The CPU path has no floor. */
#define MATXTRACT_GPU_PRODUCT_FLOOR_S 5e-6

/* name, fixed seconds, ns per nonzero, assumed gain, guard products, guard times the old plan too.
 * predict and rebuild: costs set per matrix (the prediction's by where its features run, the
 * rebuild's from the measured build); cold and rebuild: gains from the model (predict callback). */
static const mx_lever_row MatXtractLeverTable[MATXTRACT_NLEVERS] = {
  {"predict", 0.0, 0.0, 0.0, 0, 0},
  {"cold-kernel", 1.5e-3, 0.2, 0.0, MATXTRACT_GPU_TIME_REPS + 2, 0},
  {"rebuild", 0.0, 0.0, 0.0, MATXTRACT_GPU_TIME_REPS + 2, 1},
  {"row-patterns", 1.2e-3, 0.1, 0.5, MATXTRACT_GPU_TIME_REPS + 2, 0},
  {"pack", 1.5e-3, 0.2, 0.2, MATXTRACT_GPU_TIME_REPS + 2, 0},
  {"hub-split", 1.5e-3, 0.4, 0.30, 2 * MATXTRACT_GPU_TIME_REPS, 0},
};

const char *MatXtractLeverName(int i) { return MatXtractLeverTable[i].name; }

/* A PETSc error inside a lever's callback: kept for MatXtractEngineBeforeMult, which raises it. */
#define MatXtractLeverCall(A, call) \
  do { \
    PetscErrorCode ierr_ = (call); \
    if (ierr_) { \
      ((Mat_MatXtract *)(A)->spptr)->engine_err = ierr_; \
      return MX_LEVER_HARD_ERROR; \
    } \
  } while (0)

/* The pack's note while the pack lever waits for the rule. */
static const char MatXtractPackWaits[] = "not packed yet (auto: packed once the MatMult time spent, saving the pack's assumed gain, would pay for packing)";

/* A PETSc error kept by a lever's callback (MatXtractLeverCall), raised now. */
static PetscErrorCode MatXtractEngineRaise(Mat_MatXtract *x)
{
  PetscErrorCode e = x->engine_err ? x->engine_err : PETSC_ERR_PLIB;

  PetscFunctionBegin;
  x->engine_err = 0;
  PetscCall(e);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What the engine's rule knows now: the plan's time and the time spent on it, the expected products,
 * the nonzeros, the free device bytes (read after builds and levers), the guard, the product's
 * floor (on the GPU). */
static mx_engine_clock MatXtractEngineClock(const Mat_MatXtract *x, PetscLogDouble t_cur, PetscLogDouble spent)
{
  mx_engine_clock clk = {t_cur, spent, (double)x->set.expected_mults, (double)x->F.nnz, x->bytes_free, x->set.guard ? 1 : 0, x->D ? MATXTRACT_GPU_PRODUCT_FLOOR_S : 0.0};
  return clk;
}

static Mat_MatXtract *MatXtractOf(void *ctx) { return (Mat_MatXtract *)((Mat)ctx)->spptr; }

/* The parts of the plan in use that the settings leave free get `source`. */
static void MatXtractPlanSetFreeSources(const MatXtractSettings *set, MatXtractPlanState *st, MatXtractCruxSource source)
{
  if (!MatXtractCruxFixed(set)) st->src_crux = source;
  if (!set->mode_fixed) st->src_mode = source;
  if (!set->cold_fixed) st->src_cold = source;
}

/* Measured seconds per MatMult of the plan in use (0 while unknown) and the seconds spent on it: on
 * the GPU the plan is timed after its build (MatMult is asynchronous); on the CPU every kernel is
 * timed, and a guard's timing, once made, is the time per MatMult. */
void MatXtractPlanTimes(const Mat_MatXtract *x, PetscLogDouble *t_cur, PetscLogDouble *spent)
{
  const MatXtractPlanState *st = &x->plan;

  if (x->D) {
    *t_cur = st->t_mult;
    *spent = (PetscLogDouble)st->mults * st->t_mult;
  } else {
    *t_cur = st->t_mult > 0 ? st->t_mult : st->mults ? st->spent / (PetscLogDouble)st->mults : 0.0;
    *spent = st->spent;
  }
}

/* Whether nothing more is weighed for this pattern (no lever pending, no prediction in flight). */
PetscBool MatXtractPlanSettled(const Mat_MatXtract *x)
{
  return (PetscBool)(!mx_engine_pending(x->levers, MATXTRACT_NLEVERS) && !x->plan.predict_pending);
}

/* ---------------- the levers' callbacks (ctx: the Mat) ---------------- */

/* The prediction, collected when its GPU passes ran: OK, NOT_YET, or NOT_NEEDED when the hub split
 * runs the products (the predicted plans are whole-matrix plans). */
static int MatXtractLeverPredicted(Mat A, const char **why)
{
  Mat_MatXtract *x = MatXtractOf(A);
  PetscBool      collected;

  if (MatXtractHubInUse(x)) {
    *why = "the hub split is in use (where its rule admits it, it gains more than the whole-matrix plans the model predicts)";
    return MX_LEVER_NOT_NEEDED;
  }
  if (x->levers[MATXTRACT_LEVER_PREDICT].state == MX_LEVER_PENDING) return MX_LEVER_NOT_YET;
  MatXtractLeverCall(A, MatXtractPredictCollect(A, &collected));
  return collected ? MX_LEVER_OK : MX_LEVER_NOT_YET;
}

/* Whether the model prefers, for the crux and hot mode in use, another cold kernel than the GPU runs. */
static PetscBool MatXtractColdPreferred(const Mat_MatXtract *x)
{
  const MatXtractPlanState *st = &x->plan;

  return (PetscBool)(x->D && !x->set.cold_fixed && (mx_cold_kernel)st->cold_pred != mx_device_cold_kernel(x->D) && st->log_ratio_cold < st->log_ratio_cur);
}

static int MatXtractLeverReady(void *ctx, int i, const char **why)
{
  Mat                 A  = (Mat)ctx;
  Mat_MatXtract      *x  = MatXtractOf(ctx);
  MatXtractPlanState *st = &x->plan;
  int                 r;
  mx_cold_kernel      k;

  switch (i) {
  case MATXTRACT_LEVER_PREDICT:
    if (MatXtractHubInUse(x)) {
      *why = "the hub split is in use (where its rule admits it, it gains more than the whole-matrix plans the model predicts)";
      return MX_LEVER_NOT_NEEDED;
    }
    return MX_LEVER_OK;
  case MATXTRACT_LEVER_COLD:
    if ((r = MatXtractLeverPredicted(A, why)) != MX_LEVER_OK) return r;
    if (!MatXtractColdPreferred(x)) {
      *why = "the model prefers the cold kernel in use";
      return MX_LEVER_NOT_NEEDED;
    }
    if (st->cold_pred == MX_PLAN_COLD_CUSPARSE && MatXtractPackInUse(x)) {
      *why = "cusparse not tried: the kernel in use reads the packed cold region (the model knows unpacked kernel times only)";
      return MX_LEVER_NOT_NEEDED;
    }
    return MX_LEVER_OK;
  case MATXTRACT_LEVER_REBUILD:
    if ((r = MatXtractLeverPredicted(A, why)) != MX_LEVER_OK) return r;
    if (x->levers[MATXTRACT_LEVER_COLD].state == MX_LEVER_PENDING) return MX_LEVER_NOT_YET; /* the kernel first */
    if (MatXtractPlanSameFormat(&st->pred_plan, &st->plan, (PetscBool)(x->D != NULL))) {
      *why = "the predicted plan is the plan in use";
      return MX_LEVER_NOT_NEEDED;
    }
    if (MatXtractPlanSameFormat(&st->pred_plan, &st->plan, PETSC_FALSE) && st->pred_plan.cold == st->cold_pred && (x->levers[MATXTRACT_LEVER_COLD].state == MX_LEVER_DECLINED || x->levers[MATXTRACT_LEVER_COLD].state == MX_LEVER_FAILED)) {
      *why = "the predicted plan differs from the plan in use by its cold kernel only, which the cold-kernel lever tried";
      return MX_LEVER_NOT_NEEDED;
    }
    if (!(st->log_ratio_pred < st->log_ratio_cur)) {
      *why = "the model predicts no plan faster than the plan in use";
      return MX_LEVER_NOT_NEEDED;
    }
    return MX_LEVER_OK;
  case MATXTRACT_LEVER_ROWPAT:
    if (mx_device_cold_kernel(x->D) != MX_COLD_SEGMENT) {
      *why = "the cold kernel in use is not the segment kernel (the one that reads row patterns)";
      return MX_LEVER_NOT_NEEDED;
    }
    return MX_LEVER_OK;
  case MATXTRACT_LEVER_PACK:
    if (x->levers[MATXTRACT_LEVER_ROWPAT].state == MX_LEVER_PENDING) return MX_LEVER_NOT_YET;
    if (x->levers[MATXTRACT_LEVER_ROWPAT].state == MX_LEVER_KEPT) {
      *why = "the row-pattern form holds the cold region";
      return MX_LEVER_NOT_NEEDED;
    }
    k = mx_device_cold_kernel(x->D);
    return (k == MX_COLD_SEGMENT || k == MX_COLD_MERGE) ? MX_LEVER_OK : MX_LEVER_NOT_YET;
  default:
    return MX_LEVER_OK;
  }
}

/* Predicted seconds per product after lever i; the per-matrix costs of predict and rebuild. */
static int MatXtractLeverPredict(void *ctx, int i, double t_cur, double *t_new)
{
  Mat_MatXtract      *x  = MatXtractOf(ctx);
  MatXtractPlanState *st = &x->plan;
  const mx_model     *M  = MatXtractSettingsModel(&x->set);
  const double        nnz = (double)x->F.nnz;

  *t_new = 0.0;
  switch (i) {
  case MATXTRACT_LEVER_PREDICT:
    x->rows[i].fixed_s = MatXtractPredictCostNow(M, x);
    *t_new             = (1.0 - MatXtractPredictGain(x)) * t_cur;
    break;
  case MATXTRACT_LEVER_COLD:
    *t_new = t_cur * exp(st->log_ratio_cold - st->log_ratio_cur);
    break;
  case MATXTRACT_LEVER_REBUILD: /* the base build again (the last build less its plan's extra) and the predicted plan's extra */
    x->rows[i].fixed_s = PetscMax(0.0, x->build_seconds - mx_setup_extra_seconds(&M->setup, &st->plan, nnz)) + mx_setup_extra_seconds(&M->setup, &st->pred_plan, nnz);
    *t_new = st->t_pred = t_cur * exp(st->log_ratio_pred - st->log_ratio_cur);
    break;
  default:
    break;
  }
  return MX_LEVER_OK;
}

/* Device bytes a lever needs at its peak beyond what is held: a rebuild holds both formats until
 * its guard decides; a hub split copies the matrix's CSR (12 bytes per nonzero); the others work
 * within the format's own arrays. */
static int MatXtractLeverBytes(void *ctx, int i, size_t *bytes)
{
  Mat_MatXtract *x = MatXtractOf(ctx);

  *bytes = 0;
  if (!x->D) return MX_LEVER_OK;
  if (i == MATXTRACT_LEVER_REBUILD) *bytes = mx_device_bytes(x->D);
  if (i == MATXTRACT_LEVER_HUB) *bytes = (size_t)12 * (size_t)x->F.nnz;
  return MX_LEVER_OK;
}

/* The products still queued on PETSc's stream finish before a lever's work on the default stream. */
static int MatXtractLeverSync(Mat A)
{
  Mat_MatXtract *x = MatXtractOf(A);

  if (x->D) MatXtractLeverCall(A, MatXtractCheckDevice(A, mx_device_synchronize(), "waiting for the products in flight"));
  return MX_LEVER_OK;
}

/* The predict lever: the features' passes queued (GPU) or computed (host, collected at once). */
static int MatXtractApplyPredict(Mat A)
{
  PetscBool collected;

  MatXtractLeverCall(A, MatXtractPredictStart(A));
  if (!MatXtractOf(A)->plan.predict_pending) MatXtractLeverCall(A, MatXtractPredictCollect(A, &collected));
  return MX_LEVER_OK;
}

/* Whether the cold region is to be compressed as the plan in use is (so that a new kernel or format
 * is compared like with like). */
static PetscBool MatXtractKeepsPack(const Mat_MatXtract *x)
{
  return (PetscBool)(x->set.compress == MATXTRACT_COMPRESS_ON || x->levers[MATXTRACT_LEVER_PACK].state == MX_LEVER_KEPT || x->levers[MATXTRACT_LEVER_ROWPAT].state == MX_LEVER_KEPT);
}

/* The cold region compressed again after its kernel or format changed, when the plan in use was. */
static int MatXtractRecompress(Mat A)
{
  Mat_MatXtract  *x   = MatXtractOf(A);
  mx_pack_request req = mx_pack_request_of(MX_COMPRESS_AUTO);
  PetscBool       packed;

  if (!MatXtractKeepsPack(x)) return MX_LEVER_OK;
  if (x->levers[MATXTRACT_LEVER_ROWPAT].state != MX_LEVER_KEPT) req.form = MX_FORM_PACK;
  MatXtractLeverCall(A, MatXtractShadowUncompress(A));
  MatXtractLeverCall(A, MatXtractShadowCompress(A, &req, &packed));
  return MX_LEVER_OK;
}

/* The cold lever: the predicted kernel in place (a launch plan, no rebuild). */
static int MatXtractApplyCold(Mat A, const char **why)
{
  Mat_MatXtract *x = MatXtractOf(A);

  x->cold_prev = mx_device_cold_kernel(x->D);
  if (mx_device_set_cold_kernel(x->D, (mx_cold_kernel)x->plan.cold_pred)) {
    MatXtractLeverCall(A, PetscInfo(A, "matxtract: predicted cold kernel %s not taken: %s\n", mx_plan_cold_name(x->plan.cold_pred), mx_device_last_error()));
    *why = "the device refused the predicted cold kernel";
    return MX_LEVER_SOFT_FAIL;
  }
  return MatXtractRecompress(A);
}

/* The rebuild lever: the predicted plan built beside the plan in use, which it replaces only once
 * built (on the device the plan in use runs on); the plan in use is kept in Fprev/Dprev until the
 * guard decides. */
static int MatXtractApplyRebuild(Mat A, const char **why)
{
  Mat_MatXtract      *x  = MatXtractOf(A);
  MatXtractPlanState *st = &x->plan;
  mx_format           F  = {0};
  mx_device          *D  = NULL;
  PetscLogDouble      t0, t1;

  MatXtractLeverCall(A, PetscInfo(A, "matxtract: upgrading to crux (%g,%g) hot mode %s cold kernel %s after %" PetscInt_FMT " MatMults: predicted %g s per MatMult, estimated at %g s\n", st->pred_plan.crux.tau_c, st->pred_plan.crux.tau_r, mx_plan_mode_name(st->pred_plan.mode), mx_plan_cold_name(st->pred_plan.cold), st->mults, (double)st->t_pred, x->levers[MATXTRACT_LEVER_REBUILD].cost_s));
  MatXtractLeverCall(A, PetscTime(&t0));
  MatXtractLeverCall(A, MatXtractShadowBuildInto(A, &st->pred_plan, PETSC_FALSE, &F, &D));
  MatXtractLeverCall(A, PetscTime(&t1));
  if ((x->D != NULL) != (D != NULL)) { /* the GPU build failed: the plan in use stays */
    mx_format_free(&F);
    *why = "the predicted plan could not be built on the GPU (-info says why)";
    return MX_LEVER_SOFT_FAIL;
  }
  x->Fprev     = x->F;
  x->Dprev     = x->D;
  x->plan_prev = st->plan;
  x->F         = F;
  x->D         = D;
  x->build_seconds = t1 - t0;
  x->nbuilds++;
  st->plan = st->pred_plan;
  if (x->D && !x->set.cold_fixed) st->plan.cold = (mx_plan_cold)mx_device_cold_kernel(x->D);
  if (!x->set.mode_fixed && x->F.mode != MX_HOT_NONE) st->plan.mode = (mx_mode_request)x->F.mode;
  return MatXtractRecompress(A);
}

/* The row-pattern lever: kept only where the rows repeat few patterns. */
static int MatXtractApplyRowPatterns(Mat A, const char **why)
{
  Mat_MatXtract        *x  = MatXtractOf(A);
  const mx_pack_request rq = {MX_VAL_PLAIN, MX_IDX_PLAIN, MX_ROW_PLAIN, MX_FORM_AUTO};
  mx_device_pack_info   pi;
  PetscBool             packed;

  MatXtractLeverCall(A, MatXtractShadowCompress(A, &rq, &packed));
  MatXtractLeverCall(A, MatXtractCheckDevice(A, mx_device_compress_info(x->D, &pi), "reading the cold region's encodings"));
  if (pi.rowpat) return MX_LEVER_OK;
  MatXtractLeverCall(A, MatXtractShadowUncompress(A));
  x->pack_note = MatXtractPackWaits;
  *why         = "the cold rows do not repeat few patterns";
  return MX_LEVER_SOFT_FAIL;
}

/* The cold kernel before the lever being applied (cold_prev) again, where another one runs. */
static PetscErrorCode MatXtractColdKernelBack(Mat A)
{
  Mat_MatXtract *x = MatXtractOf(A);

  PetscFunctionBegin;
  if (x->D && mx_device_cold_kernel(x->D) != x->cold_prev) PetscCall(MatXtractCheckDevice(A, mx_device_set_cold_kernel(x->D, x->cold_prev), "switching the cold kernel back"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the pack lever may time the pack on the segment kernel too: on the GPU, an all-cold plan
 * on the merge kernel, the cold kernel left free by the settings. A pack shortens the matrix's
 * stream, which bounds the segment kernel more than the merge kernel (bound by the gathers of x), so
 * their order on the plain arrays need not hold on the pack. (The other way, segment to merge, is
 * the cold-kernel lever's: trying it here would load the packed merge kernel's module for nothing
 * where segment stays faster.) */
static PetscBool MatXtractPackMayPickKernel(const Mat_MatXtract *x)
{
  return (PetscBool)(x->D && !x->set.cold_fixed && x->F.hot_nnz == 0 && mx_device_cold_kernel(x->D) == MX_COLD_MERGE);
}

static int MatXtractHubRule(Mat, const char **);

/* Whether the pack lever times the pack on the segment kernel too (MatXtractPackMayPickKernel), asked
 * before packing: not while a hub split is still to be weighed (the split's rest runs the matrix's
 * kernel, and the split was measured on merge): under hub auto its rule is asked now, and a split
 * it refuses is settled here (off). */
static int MatXtractPackPicksKernel(Mat A, PetscBool *picks)
{
  Mat_MatXtract *x   = MatXtractOf(A);
  const char    *why = NULL;
  int            r;

  *picks = PETSC_FALSE;
  if (!MatXtractPackMayPickKernel(x)) return MX_LEVER_OK;
  if (x->levers[MATXTRACT_LEVER_HUB].state == MX_LEVER_PENDING) {
    if (x->set.hub != MATXTRACT_HUB_AUTO) return MX_LEVER_OK;
    if ((r = MatXtractHubRule(A, &why)) != MX_LEVER_SOFT_FAIL) return r; /* OK: the split may run, on merge */
    mx_engine_arm(x->levers, MATXTRACT_LEVER_HUB, 0, why);
    MatXtractLeverCall(A, PetscInfo(A, "matxtract: hub-split off before the pack: %s\n", why));
  }
  *picks = PETSC_TRUE;
  return MX_LEVER_OK;
}

/* A new pack read by the faster of the kernel in use (cold_prev: merge) and the segment kernel, timed alike. */
static int MatXtractPackKernel(Mat A)
{
  Mat_MatXtract       *x     = MatXtractOf(A);
  const mx_cold_kernel other = MX_COLD_SEGMENT;
  PetscLogDouble       t_in_use, t_other;

  MatXtractLeverCall(A, MatXtractShadowTime(A, &t_in_use));
  if (mx_device_set_cold_kernel(x->D, other)) { /* refused: the kernel in use stays */
    MatXtractLeverCall(A, PetscInfo(A, "matxtract: the pack not timed on the %s kernel: %s\n", mx_plan_cold_name((mx_plan_cold)other), mx_device_last_error()));
    return MX_LEVER_OK;
  }
  MatXtractLeverCall(A, MatXtractShadowTime(A, &t_other));
  MatXtractLeverCall(A, PetscInfo(A, "matxtract: the pack read by the %s kernel takes %g s per MatMult, by the %s kernel %g s: %s\n", mx_plan_cold_name((mx_plan_cold)x->cold_prev), (double)t_in_use, mx_plan_cold_name((mx_plan_cold)other), (double)t_other, mx_plan_cold_name((mx_plan_cold)(t_other < t_in_use ? other : x->cold_prev))));
  if (!(t_other < t_in_use)) MatXtractLeverCall(A, MatXtractColdKernelBack(A));
  return MX_LEVER_OK;
}

/* The pack lever: the pack, read by the faster kernel where it picks (MatXtractPackPicksKernel). */
static int MatXtractApplyPack(Mat A, const char **why)
{
  Mat_MatXtract  *x   = MatXtractOf(A);
  mx_pack_request req = mx_pack_request_of(MX_COMPRESS_AUTO);
  PetscBool       packed, picks;
  int             r;

  req.form     = MX_FORM_PACK;
  x->cold_prev = mx_device_cold_kernel(x->D);
  if ((r = MatXtractPackPicksKernel(A, &picks)) != MX_LEVER_OK) return r; /* the hub rule reads the plain arrays: before packing */
  MatXtractLeverCall(A, MatXtractShadowCompress(A, &req, &packed));
  if (packed) return picks ? MatXtractPackKernel(A) : MX_LEVER_OK;
  *why = x->pack_note ? x->pack_note : "not packed";
  return MX_LEVER_SOFT_FAIL;
}

/* The hub split's rule under auto (mx_hub_pays on the hub statistics computed on the GPU): OK, or
 * SOFT_FAIL with *why. Asked by the pack lever and then the hub lever: a pattern's statistics are
 * computed once where the split pays (hub_rule_pays; where it does not, the hub lever is settled). */
static int MatXtractHubRule(Mat A, const char **why)
{
  Mat_MatXtract *x    = MatXtractOf(A);
  int64_t        hnnz = 0, hrows = 0;

  if (x->hub_rule_pays) return MX_LEVER_OK;
  if (mx_device_hub_stats(x->D, MX_HUB_MAX_COLS, &hnnz, &hrows)) {
    *why = "the hub statistics failed on the GPU";
    return MX_LEVER_SOFT_FAIL;
  }
  MatXtractLeverCall(A, PetscInfo(A, "matxtract: -mat_matxtract_hub auto: the %d most used columns hold %lld nonzeros in %lld rows (the split needs %d and %d per row)\n", MX_HUB_MAX_COLS, (long long)hnnz, (long long)hrows, MX_HUB_AUTO_MIN_NNZ, MX_HUB_AUTO_MIN_ROW));
  if (!mx_hub_pays(hnnz, hrows)) {
    *why = "auto: the hub columns hold too few nonzeros per row for the split (mx_hub_pays)";
    return MX_LEVER_SOFT_FAIL;
  }
  x->hub_rule_pays = PETSC_TRUE;
  return MX_LEVER_OK;
}

/* The hub lever: under auto, its rule first. */
static int MatXtractApplyHub(Mat A, const char **why)
{
  Mat_MatXtract *x = MatXtractOf(A);
  PetscBool      made;
  int            r;

  if (x->set.hub == MATXTRACT_HUB_AUTO && (r = MatXtractHubRule(A, why)) != MX_LEVER_OK) return r;
  MatXtractLeverCall(A, MatXtractShadowHub(A, MatXtractShadowHubColumns(x), &made));
  if (made) return MX_LEVER_OK;
  *why = "the hub split failed on the GPU (-info says why)";
  return MX_LEVER_SOFT_FAIL;
}

static int MatXtractLeverApply(void *ctx, int i, const char **why)
{
  Mat A = (Mat)ctx;
  int r;

  if (i == MATXTRACT_LEVER_PREDICT) return MatXtractApplyPredict(A);
  if ((r = MatXtractLeverSync(A)) != MX_LEVER_OK) return r;
  switch (i) {
  case MATXTRACT_LEVER_COLD:
    return MatXtractApplyCold(A, why);
  case MATXTRACT_LEVER_REBUILD:
    return MatXtractApplyRebuild(A, why);
  case MATXTRACT_LEVER_ROWPAT:
    return MatXtractApplyRowPatterns(A, why);
  case MATXTRACT_LEVER_PACK:
    return MatXtractApplyPack(A, why);
  default:
    return MatXtractApplyHub(A, why);
  }
}

static int MatXtractLeverTime(void *ctx, double *seconds)
{
  PetscLogDouble t;

  MatXtractLeverCall((Mat)ctx, MatXtractShadowTime((Mat)ctx, &t));
  *seconds = t;
  return MX_LEVER_OK;
}

/* The plan before lever i again. */
static int MatXtractLeverUndo(void *ctx, int i)
{
  Mat                 A  = (Mat)ctx;
  Mat_MatXtract      *x  = MatXtractOf(ctx);
  MatXtractPlanState *st = &x->plan;
  PetscBool           made;

  switch (i) {
  case MATXTRACT_LEVER_COLD:
    MatXtractLeverCall(A, MatXtractColdKernelBack(A));
    return MatXtractRecompress(A);
  case MATXTRACT_LEVER_REBUILD:
    mx_device_free(x->D);
    mx_format_free(&x->F);
    x->F     = x->Fprev;
    x->D     = x->Dprev;
    x->Dprev = NULL;
    PetscMemzero(&x->Fprev, sizeof x->Fprev);
    st->plan = x->plan_prev;
    return x->D ? MX_LEVER_OK : MatXtractRecompress(A); /* the host's packs were made for the new format; the device's stayed with it */
  case MATXTRACT_LEVER_ROWPAT:
    MatXtractLeverCall(A, MatXtractShadowUncompress(A));
    return MX_LEVER_OK;
  case MATXTRACT_LEVER_PACK:
    MatXtractLeverCall(A, MatXtractShadowUncompress(A));
    MatXtractLeverCall(A, MatXtractColdKernelBack(A));
    return MX_LEVER_OK;
  case MATXTRACT_LEVER_HUB:
    MatXtractLeverCall(A, MatXtractShadowHub(A, 0, &made));
    return MX_LEVER_OK;
  default:
    return MX_LEVER_OK;
  }
}

static const mx_lever_ops MatXtractLeverOps = {MatXtractLeverReady, MatXtractLeverPredict, MatXtractLeverBytes, MatXtractLeverApply, MatXtractLeverTime, MatXtractLeverUndo};

/* Free device memory now, for the levers' bytes check (no bound without a device or a reading). */
static void MatXtractReadBytesFree(Mat_MatXtract *x)
{
  if (!x->D || mx_device_mem_free(&x->bytes_free)) x->bytes_free = SIZE_MAX;
}

/* ---------------- arming after a build ---------------- */

/* The prediction's levers: predict (under upgrade auto), then the cold kernel and the rebuild it may
 * propose; OFF with the reason otherwise. */
static void MatXtractArmPrediction(Mat A)
{
  Mat_MatXtract     *x   = (Mat_MatXtract *)A->spptr;
  MatXtractSettings *set = &x->set;
  const char        *off = NULL;

  if (!set->predictor) off = "predictor off (-mat_matxtract_predictor)";
  else if (set->upgrade == MATXTRACT_UPGRADE_NEVER) off = "-mat_matxtract_upgrade never";
  else if (set->upgrade == MATXTRACT_UPGRADE_NOW) off = "predicted at the build (-mat_matxtract_upgrade now)";
  else if (!MatXtractPlanHasAlternative(MatXtractSettingsModel(set), set, &x->plan.plan, (PetscBool)(x->D != NULL))) off = "the model offers no other plan within what the options leave free";
  mx_engine_arm(x->levers, MATXTRACT_LEVER_PREDICT, off == NULL, off);
  mx_engine_arm(x->levers, MATXTRACT_LEVER_REBUILD, off == NULL, off);
  if (!x->D) off = off ? off : "the CPU path has one cold kernel";
  else if (set->cold_fixed) off = off ? off : "fixed by -mat_matxtract_cold";
  mx_engine_arm(x->levers, MATXTRACT_LEVER_COLD, off == NULL, off);
}

/* The row-pattern lever declined at once where a sample of the cold rows proves that the form cannot
 * hold them (mx_rowpat_cannot_hold): its attempt on the GPU would fail after paying its cost. Only at
 * an all-cold plan, whose cold rows are A's rows (the GPU's format keeps no host arrays). */
static PetscErrorCode MatXtractRowPatternsProven(Mat A)
{
  Mat_MatXtract *x   = (Mat_MatXtract *)A->spptr;
  const char    *why = "the cold rows cannot be held as row patterns (a sample of them is too long or has too many patterns)";
  mx_csr         C;

  PetscFunctionBegin;
  if (x->F.hot_nnz > 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatXtractGetCSR_SeqAIJ(A, &C));
  if (!mx_rowpat_cannot_hold(&C, MX_ROWPAT_PROOF_ROWS)) PetscFunctionReturn(PETSC_SUCCESS);
  mx_engine_arm(x->levers, MATXTRACT_LEVER_ROWPAT, 0, why);
  PetscCall(PetscInfo(A, "matxtract: row-patterns declined at the build: %s\n", why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The compression levers: on the GPU under compress auto, pending (the row-pattern form first);
 * under on, or on the CPU path, the cold region is compressed at the build (the GPU's guarded). */
static PetscErrorCode MatXtractArmCompression(Mat A)
{
  Mat_MatXtract  *x   = (Mat_MatXtract *)A->spptr;
  const PetscBool gpu = (PetscBool)(x->D != NULL);
  const char     *off = NULL;

  PetscFunctionBegin;
  if (x->set.compress == MATXTRACT_COMPRESS_OFF) off = "compression off";
  else if (!gpu && x->set.compress == MATXTRACT_COMPRESS_AUTO) off = "not packed on the CPU (auto packs for the GPU; -mat_matxtract_compress on packs here too)";
  else if (x->set.compress == MATXTRACT_COMPRESS_ON) off = "compressed at the build (-mat_matxtract_compress on)";
  mx_engine_arm(x->levers, MATXTRACT_LEVER_ROWPAT, gpu && off == NULL, off ? off : gpu ? NULL : "the GPU only");
  mx_engine_arm(x->levers, MATXTRACT_LEVER_PACK, gpu && off == NULL, off ? off : gpu ? NULL : "the GPU only");
  if (MatXtractPackMayPickKernel(x)) x->rows[MATXTRACT_LEVER_PACK].guard_reps *= 3; /* timed on both kernels, then guarded (the kernel when armed) */
  if (gpu && off == NULL) PetscCall(MatXtractRowPatternsProven(A));
  x->pack_note = off;
  if (!off) x->pack_note = MatXtractPackWaits;
  if (x->set.compress == MATXTRACT_COMPRESS_ON) {
    mx_pack_request req = mx_pack_request_of(MX_COMPRESS_AUTO);
    PetscBool       packed;
    PetscLogDouble  t_plain = 0, t_pack;
    if (gpu && x->set.guard) PetscCall(MatXtractShadowTime(A, &t_plain));
    PetscCall(MatXtractShadowCompress(A, &req, &packed));
    if (packed && gpu && x->set.guard) {
      PetscCall(MatXtractShadowTime(A, &t_pack));
      PetscCall(PetscInfo(A, "matxtract: guard: the packed cold region takes %g s per MatMult, plain %g s: %s kept\n", t_pack, t_plain, t_pack < t_plain ? "pack" : "plain"));
      if (!(t_pack < t_plain)) {
        PetscCall(MatXtractShadowUncompress(A));
        x->pack_note = "not packed (the guard timed the pack slower than plain)";
      }
      x->plan.t_mult = PetscMin(t_pack, t_plain);
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The hub lever: under -mat_matxtract_hub K, on the GPU at an all-cold plan; under auto only where
 * the merge kernel runs the matrix (the row-length rule's verdict for power-law rows) and it has
 * MX_HUB_AUTO_MIN_NNZ nonzeros. */
static PetscErrorCode MatXtractArmHub(Mat A)
{
  Mat_MatXtract  *x       = (Mat_MatXtract *)A->spptr;
  const PetscBool is_auto = (PetscBool)(x->set.hub == MATXTRACT_HUB_AUTO);
  const char     *off     = NULL;

  PetscFunctionBegin;
  if (x->set.hub == 0) off = "off (-mat_matxtract_hub 0)";
  else if (!x->D) off = "the GPU only";
  else if (x->F.hot_nnz > 0) off = "needs an all-cold plan";
  else if (x->F.nnz < MX_HUB_AUTO_MIN_NNZ && is_auto) off = "auto: too few nonzeros";
  else if (is_auto && mx_device_cold_kernel(x->D) != MX_COLD_MERGE) off = "auto: the cold kernel is not merge (no power-law rows)";
  mx_engine_arm(x->levers, MATXTRACT_LEVER_HUB, off == NULL, off);
  x->hub_rule_pays = PETSC_FALSE; /* a new pattern or plan: the rule not asked yet */
  if (off && !is_auto && x->set.hub > 0) PetscCall(PetscInfo(A, "matxtract: -mat_matxtract_hub: no split: %s\n", off));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatXtractEngineAfterLever(Mat, int, PetscLogDouble);

/* The row-pattern form and the pack decided at the build where they cost little next to it
 * (MATXTRACT_BUILD_FRACTION): applied now, guarded as the loop would. */
static PetscErrorCode MatXtractDecideAtBuild(Mat A)
{
  Mat_MatXtract  *x     = (Mat_MatXtract *)A->spptr;
  const int       ids[] = {MATXTRACT_LEVER_ROWPAT, MATXTRACT_LEVER_PACK};
  const double    nnz   = (double)x->F.nnz;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    const int        i    = ids[k];
    const double     cost = x->rows[i].fixed_s + 1e-9 * x->rows[i].ns_per_nnz * nnz;
    mx_engine_clock  clk  = MatXtractEngineClock(x, x->plan.t_mult, 0.0);
    mx_engine_result r;
    if (x->levers[i].state != MX_LEVER_PENDING || !(x->plan.t_mult > 0) || cost > MATXTRACT_BUILD_FRACTION * x->build_seconds) continue;
    PetscCall(PetscInfo(A, "matxtract: %s decided at the build: estimated %g s, the build took %g s\n", x->rows[i].name, cost, (double)x->build_seconds));
    PetscCall(MatXtractCheckDevice(A, mx_device_synchronize(), "waiting for the build"));
    x->engine_err = 0;
    r             = mx_engine_apply_now(x->levers, MATXTRACT_NLEVERS, i, &MatXtractLeverOps, A, &clk);
    if (r == MX_ENGINE_ERROR) PetscCall(MatXtractEngineRaise(x));
    if (r == MX_ENGINE_CHANGED) PetscCall(MatXtractEngineAfterLever(A, i, clk.t_cur));
    else if (x->levers[i].state != MX_LEVER_PENDING) PetscCall(PetscInfo(A, "matxtract: %s %s at the build: %s\n", x->rows[i].name, mx_lever_state_name(x->levers[i].state), x->levers[i].why ? x->levers[i].why : ""));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The pack's assumed gain on this GPU (mx_pack_assumed_gain: lower where the cold region fits half
 * the L2). */
static PetscErrorCode MatXtractWeighPackInL2(Mat A)
{
  Mat_MatXtract *x    = (Mat_MatXtract *)A->spptr;
  const size_t   l2   = x->D ? mx_device_l2_bytes() : 0;
  mx_lever_row  *row  = &x->rows[MATXTRACT_LEVER_PACK];
  const double   gain = mx_pack_assumed_gain(row->gain, x->F.nrows, x->F.ncols, x->F.cold_nnz, l2);

  PetscFunctionBegin;
  if (gain == row->gain) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscInfo(A, "matxtract: the cold region with x and y fits half the GPU's L2 (%zu bytes): the pack's assumed gain is %g, not %g\n", l2, gain, row->gain));
  row->gain = gain;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a build of the pattern's first plan: the plan's resolved parts, the levers armed, and on the
 * GPU the plan timed when a lever waits for the time spent (unless the build's guard timed it). */
static PetscErrorCode MatXtractEngineArm(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  for (int i = 0; i < MATXTRACT_NLEVERS; i++) {
    x->rows[i]         = MatXtractLeverTable[i];
    x->levers[i].row   = &x->rows[i];
  }
  if (x->D && !x->set.cold_fixed) x->plan.plan.cold = (mx_plan_cold)mx_device_cold_kernel(x->D); /* AUTO resolved by the rule */
  if (!x->set.mode_fixed && x->F.mode != MX_HOT_NONE) x->plan.plan.mode = (mx_mode_request)x->F.mode; /* AUTO resolved by bytes */
  PetscCall(MatXtractWeighPackInL2(A));
  MatXtractArmPrediction(A);
  PetscCall(MatXtractArmCompression(A));
  PetscCall(MatXtractArmHub(A));
  if (x->D && !(x->plan.t_mult > 0) && (mx_engine_pending(x->levers, MATXTRACT_NLEVERS) || x->plan.predicted)) PetscCall(MatXtractShadowTime(A, &x->plan.t_mult));
  MatXtractReadBytesFree(x);
  if (x->D) PetscCall(MatXtractDecideAtBuild(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The first plan of a new pattern or new settings (the plan state starts afresh): the fixed parts
 * from the settings, the free ones (0,0)/auto/auto, or predicted at once under upgrade now. */
static PetscErrorCode MatXtractEngineFirstPlan(Mat A, mx_plan *plan)
{
  Mat_MatXtract      *x   = (Mat_MatXtract *)A->spptr;
  MatXtractSettings  *set = &x->set;
  MatXtractPlanState *st  = &x->plan;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(st, sizeof *st));
  st->plan.crux = set->crux; /* (0,0) unless fixed */
  st->plan.mode = set->mode;
  st->plan.cold = (mx_plan_cold)set->cold_kernel;
  st->src_crux  = set->crux_source;
  st->src_mode  = set->mode_fixed ? MATXTRACT_CRUX_OPTION : MATXTRACT_CRUX_DEFAULT;
  st->src_cold  = set->cold_fixed ? MATXTRACT_CRUX_OPTION : MATXTRACT_CRUX_DEFAULT;
  if (set->predictor && set->upgrade == MATXTRACT_UPGRADE_NOW && MatXtractPlanHasAlternative(MatXtractSettingsModel(set), set, &st->plan, MatXtractSettingsWantDevice(set))) {
    PetscCall(MatXtractPredictNow(A));
    st->plan = st->pred_plan;
    MatXtractPlanSetFreeSources(set, st, MATXTRACT_CRUX_PREDICTOR);
  }
  *plan = st->plan;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Make the shadow match A: nothing, values only, or a rebuild (the pattern's first plan, its levers
 * armed). The one state check, as AIJSELL's: pattern = nonzerostate, values = object state. */
PetscErrorCode MatXtractSync_SeqAIJ(Mat A)
{
  Mat_MatXtract   *x = (Mat_MatXtract *)A->spptr;
  PetscObjectState state;
  PetscBool        renumbered = PETSC_FALSE;
  mx_plan          plan;

  PetscFunctionBegin;
  if (A->structure_only) PetscFunctionReturn(PETSC_SUCCESS); /* MAT_STRUCTURE_ONLY: no values, no format */
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (x->built && state == x->state) PetscFunctionReturn(PETSC_SUCCESS);
  if (x->built && A->nonzerostate == x->nzstate) PetscCall(MatXtractShadowColumnsChanged(A, &renumbered));
  if (x->built && A->nonzerostate == x->nzstate && !renumbered) PetscCall(MatXtractShadowRefresh(A));
  else {
    PetscCall(MatXtractShadowFree(x));
    PetscCall(MatXtractEngineFirstPlan(A, &plan));
    PetscCall(MatXtractShadowBuild(A, &plan));
    PetscCall(MatXtractEngineArm(A));
  }
  x->state   = state;
  x->nzstate = A->nonzerostate;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------- the step before each product ---------------- */

/* The hub split kept: it runs the products alone (its rest packed with it), so the whole matrix's own
 * compression levers end, any pack of it is dropped (also one that packs nothing and is read by no
 * kernel, e.g. after unique values fell back to plain: it would keep the plain arrays on the device
 * too), its feature passes are not collected (the plans the model predicts are whole-matrix plans),
 * and its plain device arrays are freed. */
static PetscErrorCode MatXtractHubKept(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  if (x->D && !mx_device_hub_plain_released(x->D)) PetscCall(MatXtractShadowUncompress(A)); /* released: nothing of the whole matrix is left to drop */
  for (int i = MATXTRACT_LEVER_ROWPAT; i <= MATXTRACT_LEVER_PACK; i++) mx_engine_arm(x->levers, i, 0, "the hub split runs the products (its rest is packed with it)");
  x->pack_note            = "not packed: the hub split runs the products (its rest is packed with it)";
  x->plan.predict_pending = PETSC_FALSE;
  PetscCall(MatXtractShadowReleasePlain(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After lever i was applied and decided (kept, or undone by the guard): the plan's record. */
static PetscErrorCode MatXtractEngineAfterLever(Mat A, int i, PetscLogDouble t_cur)
{
  Mat_MatXtract      *x    = (Mat_MatXtract *)A->spptr;
  MatXtractPlanState *st   = &x->plan;
  const mx_lever     *L    = &x->levers[i];
  const PetscBool     kept = (PetscBool)(L->state == MX_LEVER_KEPT);

  PetscFunctionBegin;
  if (L->t_after_s > 0) PetscCall(PetscInfo(A, "matxtract: guard: %s takes %g s per MatMult vs %g s: %s\n", L->row->name, L->t_after_s, L->t_before_s, kept ? "kept" : "undone"));
  else PetscCall(PetscInfo(A, "matxtract: %s applied after %" PetscInt_FMT " MatMults (estimated %g s)\n", L->row->name, st->mults, L->cost_s));
  if (i == MATXTRACT_LEVER_COLD && kept) {
    st->plan.cold     = st->cold_pred;
    st->src_cold      = MATXTRACT_CRUX_PREDICTOR;
    st->log_ratio_cur = st->log_ratio_cold;
  } else if (i == MATXTRACT_LEVER_COLD) st->src_cold = MATXTRACT_CRUX_GUARD;
  if (i == MATXTRACT_LEVER_REBUILD) {
    MatXtractPlanSetFreeSources(&x->set, st, kept ? MATXTRACT_CRUX_UPGRADE : MATXTRACT_CRUX_GUARD);
    mx_device_free(x->Dprev); /* kept: the plan it replaced; undone: already back in use */
    mx_format_free(&x->Fprev);
    x->Dprev = NULL;
    if (kept && x->F.hot_nnz > 0) mx_engine_arm(x->levers, MATXTRACT_LEVER_HUB, 0, "needs an all-cold plan");
    if (kept && x->levers[MATXTRACT_LEVER_COLD].state == MX_LEVER_PENDING) mx_engine_arm(x->levers, MATXTRACT_LEVER_COLD, 0, "the rebuild chose the kernel");
  }
  if ((i == MATXTRACT_LEVER_COLD || i == MATXTRACT_LEVER_REBUILD) && kept) {
    st->mults = 0; /* the time spent so far was on the plan before */
    st->spent = 0.0;
  }
  if (i == MATXTRACT_LEVER_PACK || i == MATXTRACT_LEVER_ROWPAT) x->pack_note = kept ? NULL : L->why;
  if (i == MATXTRACT_LEVER_PACK && kept && x->D && (mx_plan_cold)mx_device_cold_kernel(x->D) != st->plan.cold) { /* the pack picked the other kernel */
    st->plan.cold = (mx_plan_cold)mx_device_cold_kernel(x->D);
    st->src_cold  = MATXTRACT_CRUX_GUARD;
    if (st->predicted && st->plan.cold == st->cold_pred) st->log_ratio_cur = st->log_ratio_cold;
  }
  if (i == MATXTRACT_LEVER_HUB && kept) PetscCall(MatXtractHubKept(A));
  if (i != MATXTRACT_LEVER_PREDICT && (x->D || L->t_after_s > 0)) st->t_mult = t_cur;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One step of the decision loop over the pending levers; *changed: a lever was applied (kept or undone). */
static PetscErrorCode MatXtractEngineStep(Mat A, PetscBool *changed)
{
  Mat_MatXtract   *x = (Mat_MatXtract *)A->spptr;
  mx_engine_clock  clk;
  mx_engine_result r;
  PetscLogDouble   t_cur, spent;
  int              applied = -1;
  mx_lever_state   before[MATXTRACT_NLEVERS];

  PetscFunctionBegin;
  MatXtractPlanTimes(x, &t_cur, &spent);
  clk = MatXtractEngineClock(x, t_cur, spent);
  for (int i = 0; i < MATXTRACT_NLEVERS; i++) before[i] = x->levers[i].state;
  x->engine_err = 0;
  r             = mx_engine_step(x->levers, MATXTRACT_NLEVERS, &MatXtractLeverOps, A, &clk, &applied);
  if (r == MX_ENGINE_ERROR) PetscCall(MatXtractEngineRaise(x));
  for (int i = 0; i < MATXTRACT_NLEVERS; i++) { /* every lever decided without being applied: -info, and the pack's note */
    if (i == applied || x->levers[i].state == before[i]) continue;
    PetscCall(PetscInfo(A, "matxtract: %s %s after %" PetscInt_FMT " MatMults: %s\n", x->levers[i].row->name, mx_lever_state_name(x->levers[i].state), x->plan.mults, x->levers[i].why ? x->levers[i].why : ""));
    if (i == MATXTRACT_LEVER_PACK && x->levers[i].state == MX_LEVER_DECLINED && x->set.expected_mults > 0) x->pack_note = "not packed (the expected MatMults cannot pay for packing: -mat_matxtract_expected_mults)";
    else if (i == MATXTRACT_LEVER_PACK) x->pack_note = x->levers[i].why;
  }
  if (r == MX_ENGINE_CHANGED) PetscCall(MatXtractEngineAfterLever(A, applied, clk.t_cur));
  *changed = (PetscBool)(r == MX_ENGINE_CHANGED);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Before a product: a step of the loop while a lever is pending (only every lever_period-th product
 * when that is > 1), then the plain arrays a pack in use
 * replaces freed (a pack just kept, or arrays a lever or a refresh decoded back); the free device
 * bytes read again only after a lever was applied (cudaMemGetInfo costs microseconds). */
PetscErrorCode MatXtractEngineBeforeMult(Mat A)
{
  Mat_MatXtract  *x       = (Mat_MatXtract *)A->spptr;
  const PetscBool weigh   = (PetscBool)(x->lever_period <= 1 || x->products % x->lever_period == 0);
  PetscBool       changed = PETSC_FALSE;

  PetscFunctionBegin;
  if (weigh && mx_engine_pending(x->levers, MATXTRACT_NLEVERS)) PetscCall(MatXtractEngineStep(A, &changed));
  PetscCall(MatXtractShadowReleasePackPlain(A));
  if (changed) MatXtractReadBytesFree(x);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a product: count it, and add the CPU kernel's seconds (0 on the GPU). */
PetscErrorCode MatXtractEngineAfterMult(Mat A, PetscLogDouble cpu_seconds)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  x->products++;
  x->plan.mults++;
  x->plan.spent += cpu_seconds;
  PetscFunctionReturn(PETSC_SUCCESS);
}
