/* matxtract_plan.c - the plan of a sequential block (crux, hot mode, cold kernel): its first plan
 * for a pattern, the prediction of what the options leave free, and the amortisation-aware online
 * upgrade with its guard (issue 11). The rules:
 *   - A part fixed by an option or MatXtractSetCrux is never predicted. Nothing is predicted when
 *     the model offers no plan other than the one in use within the free parts.
 *   - upgrade now: features + prediction at the first build, which builds the predicted plan.
 *   - upgrade auto: the first build is the cheapest plan ((0,0) unless fixed, its cold kernel by
 *     the row-length rule, nothing timed). Features and the prediction cost ~25 ns per nonzero on
 *     the CPU, as much as a whole aijcusparse setup, and MATXTRACT_FEATURES_GPU_NS_PER_NNZ on the
 *     GPU (mx_device_features, when the device holds the plain matrix), so they are computed only
 *     once the MatMult time spent on the plan, at the mean gain of a prediction
 *     (MATXTRACT_PREDICT_GAIN*, by the row-length rule's verdict), would pay for their estimated cost (with
 *     -mat_matxtract_expected_mults N: at once if N MatMults can, else never). On the GPU the
 *     feature passes are queued on a stream of their own and run while the MatMults go on
 *     (mx_device_features_start); a later MatMult that finds them done collects them and predicts
 *     (the host pays for queueing and collecting, not for the passes). A predicted cold kernel for the crux and hot mode in use is switched to on
 *     the GPU (mx_device_set_cold_kernel: a launch plan, no rebuild; the guard times it) once the
 *     same ski rental says its predicted gain pays for the switch (timing, re-packing).
 *     Then, before each MatMult, mx_upgrade_decide (core, ski
 *     rental) weighs the predicted gain t_cur - t_new, t_new = t_cur * exp(model(new) -
 *     model(cur)), against the upgrade's estimated cost; when it says now the predicted plan is
 *     built and (the guard) timed against the old one's time: the faster stays. One attempt per
 *     pattern: no loop.
 *   - upgrade never: no prediction.
 * Times per MatMult: on the GPU MatMult is asynchronous, so the plan in use is timed once after
 * its build with CUDA events (mx_device_time_spmv) and the time spent is MatMults x that time; on
 * the CPU the kernel of every MatMult is timed (PetscTime). */
#include "matxtract_impl.h"
#include <math.h>

/* CPU seconds of mx_features_compute per nonzero: tuning/predictor's matxtract-predictor measures
 * 10-25 ns; the upper end, so that the prediction never starts before it can be afforded */
#define MATXTRACT_FEATURES_NS_PER_NNZ 25.0
/* the same on the GPU (mx_device_features_start/finish: a few passes, hash-table counts of the 8-row
 * groups, one radix sort of the rows by length, from one scratch allocation): measured on an H100
 * over the 41 setup-study matrices of 1.8M-90M nonzeros, waited for (tuning/results/h100/
 * predict-cost-2026-11-25c/: host + GPU, least squares 0.24 ms + 0.09 ns per nonzero; since the
 * passes run beside the MatMults, the host's part alone is 0.27 ms + 0.03 ns, predict-cost-2026-11-25d/);
 * an upper end of host + GPU over all of them (the closest: 0.81 of it), so that the prediction does
 * not start before it can be afforded */
#define MATXTRACT_FEATURES_GPU_NS_PER_NNZ 0.20
#define MATXTRACT_FEATURES_GPU_FIXED_S    1.0e-3
/* The mean fraction of a MatMult that a prediction saves: the fastest plan the labels measured vs
 * the default plan ((0,0), the cold kernel by the row-length rule, packed where the pack was faster
 * as compress auto does), over the 129 label matrices of >= 1M nonzeros on an H100
 * (tuning/predictor/gain_prior.py on tuning/results/h100/predictor-2026-11-26e/labels.jsonl.gz: the
 * kernels with row patterns, packed SE hot values and the merge kernel's carveout, the default cold
 * kernel by the rule of (cv 8, longest row 8192) in src/cuda/mx_device.cu: mean 0.012, median 0,
 * p90 0.052; 0.018 with the rule of (2, 2048) before it, 0.017 with the labels of 2026-11-26b, 0.016
 * with those of 2026-11-25, 0.028 with the unpacked ones of 2026-11-23b). Predicting pays, on
 * average, once a future as long as the past would save its cost at this gain: spent * gain >= cost.
 * (At spent >= cost, the rule before, PageRank on kron:20:16 paid 10 ms of features after 51 of 100
 * MatMults for a plan that could not pay for its own build.)
 * On the GPU the row-length rule's verdict is known for free at upload and splits the gains: the
 * 40 matrices it sends to the merge kernel (skewed rows: power-law graphs) gain 0.028 on average
 * (kron 0.17-0.18), the 89 it sends to the segment kernel 0.004 (gain_prior.py, same labels). The
 * split prior is used where that verdict is what runs (GPU, crux (0,0), cold kernel not fixed). */
#define MATXTRACT_PREDICT_GAIN         0.012
#define MATXTRACT_PREDICT_GAIN_MERGE   0.028
#define MATXTRACT_PREDICT_GAIN_SEGMENT 0.004
/* seconds of one tree level in one model evaluation (a compare and a load) */
#define MATXTRACT_TREE_LEVEL_NS 2.0
/* SpMVs timed on the CPU after a build and by the guard (median); the GPU's: MATXTRACT_GPU_TIME_REPS */
#define MATXTRACT_TIME_REPS 10

static PetscBool MatXtractCruxFixed(const MatXtractSettings *set)
{
  return (PetscBool)(set->crux_source == MATXTRACT_CRUX_OPTION || set->crux_source == MATXTRACT_CRUX_USER);
}

/* The parts of c that the settings fix, replaced by the settings' values. */
static void MatXtractPlanConstrain(const MatXtractSettings *set, mx_plan *c)
{
  if (MatXtractCruxFixed(set)) c->crux = set->crux;
  if (set->mode_fixed) c->mode = set->mode;
  if (set->cold_fixed) c->cold = (mx_plan_cold)set->cold_kernel;
}

/* Whether plans a and b build formats that do the same work where MatMult runs: same crux, same
 * hot mode where there is a hot region, same cold kernel on the GPU (the CPU has one). */
static PetscBool MatXtractPlanSameFormat(const mx_plan *a, const mx_plan *b, PetscBool on_device)
{
  if (a->crux.tau_c != b->crux.tau_c || a->crux.tau_r != b->crux.tau_r) return PETSC_FALSE;
  if (a->crux.tau_r > 0 && a->mode != b->mode) return PETSC_FALSE;
  if (on_device && a->cold != b->cold) return PETSC_FALSE;
  return PETSC_TRUE;
}

/* Whether the model offers, within what the settings leave free, a plan other than cur. */
static PetscBool MatXtractPlanHasAlternative(const mx_model *M, const MatXtractSettings *set, const mx_plan *cur, PetscBool on_device)
{
  for (int32_t c = 0; c < M->ncandidates; c++) {
    mx_plan p = M->candidates[c];
    MatXtractPlanConstrain(set, &p);
    if (!MatXtractPlanSameFormat(&p, cur, on_device)) return PETSC_TRUE;
  }
  return PETSC_FALSE;
}

/* Whether the features can be computed on the GPU: the device format holds the whole matrix as its
 * cold CSR (no hot part; mx_device_features refuses x-hot codes in it, and the caller falls back). */
static PetscBool MatXtractFeaturesOnDevice(const Mat_MatXtract *x)
{
  return (PetscBool)(x->D && x->F.hot_nnz == 0);
}

/* Estimated seconds of features + prediction of a matrix of nnz nonzeros: the features (on the GPU
 * or the CPU), and every candidate walked through every tree (depth about log2 of a tree's nodes). */
static PetscLogDouble MatXtractPredictCost(const mx_model *M, PetscBool gpu, double nnz)
{
  const double depth = log2((double)M->nnodes / (double)M->ntrees + 1.0) + 1.0;
  const double ns    = gpu ? MATXTRACT_FEATURES_GPU_NS_PER_NNZ : MATXTRACT_FEATURES_NS_PER_NNZ;

  return (gpu ? MATXTRACT_FEATURES_GPU_FIXED_S : 0.0) + 1e-9 * (ns * nnz + MATXTRACT_TREE_LEVEL_NS * (double)M->ncandidates * (double)M->ntrees * depth);
}

/* ... of x's built format, where its features would be computed now */
static PetscLogDouble MatXtractPredictCostNow(const mx_model *M, const Mat_MatXtract *x)
{
  return MatXtractPredictCost(M, MatXtractFeaturesOnDevice(x), (double)x->F.nnz);
}

/* The mean gain of a prediction for x's matrix: the mean over the matrices given the same verdict by
 * the row-length rule, where the plan in use is the rule's default ((0,0) on the GPU, cold kernel
 * not fixed); else the corpus mean. */
static double MatXtractPredictGain(const Mat_MatXtract *x)
{
  if (!x->D || x->set.cold_fixed || x->F.hot_nnz > 0) return MATXTRACT_PREDICT_GAIN;
  switch (mx_device_cold_kernel(x->D)) {
  case MX_COLD_MERGE:
    return MATXTRACT_PREDICT_GAIN_MERGE;
  case MX_COLD_SEGMENT:
    return MATXTRACT_PREDICT_GAIN_SEGMENT;
  default:
    return MATXTRACT_PREDICT_GAIN;
  }
}

/* MatMult seconds after which upgrade auto predicts: when a future as long as the past, saving the
 * mean gain of a prediction, pays for its estimated cost. */
static PetscLogDouble MatXtractPredictAfter(const mx_model *M, const Mat_MatXtract *x)
{
  return MatXtractPredictCostNow(M, x) / MatXtractPredictGain(x);
}

/* Queue the features' passes on the GPU when it holds the plain matrix (nothing waits for them:
 * st->predict_pending; a GPU failure is said with -info, and the features are then computed on the
 * host at collection), and note the host seconds this took. */
static PetscErrorCode MatXtractPredictStart(Mat A)
{
  Mat_MatXtract      *x  = (Mat_MatXtract *)A->spptr;
  MatXtractPlanState *st = &x->plan;
  PetscLogDouble      t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  st->predict_pending = PETSC_FALSE;
  if (MatXtractFeaturesOnDevice(x)) {
    if (!mx_device_features_start(x->D)) st->predict_pending = PETSC_TRUE;
    else PetscCall(PetscInfo(A, "matxtract: features on the GPU failed (%s); computing them on the CPU\n", mx_device_last_error()));
  }
  PetscCall(PetscTime(&t1));
  st->predict_started = t1 - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The features of A: collected from the GPU passes when they were queued (a failure falls back to
 * the host, saying so with -info), else computed on the host. */
static PetscErrorCode MatXtractFeatures(Mat A, mx_features *f, PetscBool *on_gpu)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  mx_csr         csr;
  mx_status      s;

  PetscFunctionBegin;
  *on_gpu = PETSC_FALSE;
  if (x->plan.predict_pending) {
    x->plan.predict_pending = PETSC_FALSE;
    if (!mx_device_features_finish(x->D, f)) {
      *on_gpu = PETSC_TRUE;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(PetscInfo(A, "matxtract: features on the GPU failed (%s); computing them on the CPU\n", mx_device_last_error()));
  }
  PetscCall(MatXtractGetCSR_SeqAIJ(A, &csr));
  s = mx_features_compute(&csr, f);
  PetscCheck(s != MX_ERR_MEM, PETSC_COMM_SELF, PETSC_ERR_MEM, "matxtract: computing the matrix features: out of host memory");
  PetscCheck(s == MX_OK, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matxtract: computing the matrix features failed (status %d)", (int)s);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Where MatMult runs now (before the first build: where it will run). */
static PetscBool MatXtractOnDevice(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  return x->built ? (PetscBool)(x->D != NULL) : MatXtractSettingsWantDevice(&x->set);
}

/* The plans MatXtractPredict weighs, into plans[0 .. 2 nc]: the nc candidates with the settings'
 * fixed parts replaced, the plan in use (at nc), and the candidates with the crux and hot mode in
 * use: the cold kernels for the format in use. (The hot mode in use also without a hot region: the
 * candidates, and so the labels, pair crux (0,0) with one mode only, so another one there would ask
 * the model about inputs it never saw; equal plans are evaluated once.) */
static void MatXtractPredictPlans(const mx_model *M, const MatXtractSettings *set, const mx_plan *cur, mx_plan *plans)
{
  const int32_t nc = M->ncandidates;

  for (int32_t c = 0; c < nc; c++) {
    mx_plan p = M->candidates[c];
    MatXtractPlanConstrain(set, &p);
    plans[c] = p;
    p.crux   = cur->crux;
    p.mode   = cur->mode;
    plans[nc + 1 + c] = p;
  }
  plans[nc] = *cur;
}

/* Features of A (collected from the GPU passes MatXtractPredictStart queued, or computed on the
 * host), then the candidate with the smallest model output once the settings' fixed parts replace
 * its own (ties: the first), the model's output for the plan in use, and the fastest cold kernel
 * for the crux and mode in use (ties: the one in use). */
static PetscErrorCode MatXtractPredictFinish(Mat A)
{
  Mat_MatXtract      *x = (Mat_MatXtract *)A->spptr;
  MatXtractPlanState *st = &x->plan;
  const mx_model     *M  = MatXtractSettingsModel(&x->set);
  const int32_t       nc = M->ncandidates;
  mx_features         f;
  mx_plan            *plans;
  double             *y;
  mx_status           s;
  PetscBool           on_gpu;

  PetscFunctionBegin;
  PetscCall(MatXtractFeatures(A, &f, &on_gpu));
  PetscCall(PetscMalloc2(2 * nc + 1, &plans, 2 * nc + 1, &y));
  MatXtractPredictPlans(M, &x->set, &st->plan, plans);
  s = mx_model_plans_log_ratio(M, &f, 2 * nc + 1, plans, y);
  PetscCheck(s != MX_ERR_MEM, PETSC_COMM_SELF, PETSC_ERR_MEM, "matxtract: evaluating the plan model: out of host memory");
  PetscCheck(s == MX_OK, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matxtract: evaluating the plan model failed (status %d)", (int)s);
  st->pred_plan       = plans[0];
  st->log_ratio_pred  = y[0];
  st->log_ratio_cur   = y[nc];
  st->cold_pred       = st->plan.cold;
  st->log_ratio_cold  = y[nc];
  st->features_on_gpu = on_gpu;
  st->predict_nnz     = f.v[mx_feature_index("nnz")]; /* a name the feature set keeps (tuning/ reads it too) */
  for (int32_t c = 0; c < nc; c++) {
    if (y[c] < st->log_ratio_pred) {
      st->pred_plan      = plans[c];
      st->log_ratio_pred = y[c];
    }
    if (y[nc + 1 + c] < st->log_ratio_cold) {
      st->cold_pred      = plans[nc + 1 + c].cold;
      st->log_ratio_cold = y[nc + 1 + c];
    }
  }
  PetscCall(PetscFree2(plans, y));
  st->predicted = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -info: the prediction and what it cost */
static PetscErrorCode MatXtractPredictInfo(Mat A)
{
  Mat_MatXtract            *x  = (Mat_MatXtract *)A->spptr;
  const MatXtractPlanState *st = &x->plan;

  PetscFunctionBegin;
  PetscCall(PetscInfo(A, "matxtract: predicted plan crux (%g,%g) hot mode %s cold kernel %s: model output %g vs %g for the plan in use (crux (%g,%g) %s %s), %.3gx its time; features (on the %s) + prediction took %g s of the host (queueing the GPU passes %g s; estimated %g s) after %" PetscInt_FMT " MatMults\n", st->pred_plan.crux.tau_c, st->pred_plan.crux.tau_r,
                      mx_plan_mode_name(st->pred_plan.mode), mx_plan_cold_name(st->pred_plan.cold), st->log_ratio_pred, st->log_ratio_cur, st->plan.crux.tau_c, st->plan.crux.tau_r, mx_plan_mode_name(st->plan.mode), mx_plan_cold_name(st->plan.cold), exp(st->log_ratio_pred - st->log_ratio_cur),
                      st->features_on_gpu ? "GPU" : "CPU", (double)st->predict_seconds, (double)st->predict_started, (double)MatXtractPredictCost(MatXtractSettingsModel(&x->set), st->features_on_gpu, st->predict_nnz), st->mults));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Features and prediction at once (upgrade now): the GPU passes queued and waited for, all of it in
 * predict_seconds (products still queued on the GPU are let finish first: not the prediction's cost). */
static PetscErrorCode MatXtractPredict(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  if (MatXtractFeaturesOnDevice(x)) PetscCheck(!mx_device_synchronize(), PETSC_COMM_SELF, PETSC_ERR_LIB, "matxtract: %s", mx_device_last_error());
  PetscCall(PetscTime(&t0));
  PetscCall(MatXtractPredictStart(A));
  PetscCall(MatXtractPredictFinish(A));
  PetscCall(PetscTime(&t1));
  x->plan.predict_seconds = t1 - t0;
  PetscCall(MatXtractPredictInfo(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Under upgrade auto: the prediction whose GPU passes MatXtractPredictStart queued, collected once
 * they ran (else nothing now: a later MatMult looks again), or at once when they were not queued
 * (features on the host). predict_seconds: the host seconds of the start and of the collection;
 * products still queued on the GPU are let finish first (not the prediction's cost). */
static PetscErrorCode MatXtractPredictCollect(Mat A)
{
  Mat_MatXtract      *x  = (Mat_MatXtract *)A->spptr;
  MatXtractPlanState *st = &x->plan;
  PetscLogDouble      t0, t1;
  int                 ready = 1;

  PetscFunctionBegin;
  if (st->predict_pending && mx_device_features_ready(x->D, &ready)) {
    PetscCall(PetscInfo(A, "matxtract: the GPU feature passes failed (%s)\n", mx_device_last_error()));
    ready = 1; /* collecting them fails too, and the host computes the features */
  }
  if (!ready) PetscFunctionReturn(PETSC_SUCCESS);
  if (st->predict_pending) PetscCheck(!mx_device_synchronize(), PETSC_COMM_SELF, PETSC_ERR_LIB, "matxtract: %s", mx_device_last_error());
  PetscCall(PetscTime(&t0));
  PetscCall(MatXtractPredictFinish(A));
  PetscCall(PetscTime(&t1));
  st->predict_seconds = st->predict_started + (t1 - t0);
  PetscCall(MatXtractPredictInfo(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The parts of the plan in use that the settings leave free get `source`. */
static void MatXtractPlanSetFreeSources(const MatXtractSettings *set, MatXtractPlanState *st, MatXtractCruxSource source)
{
  if (!MatXtractCruxFixed(set)) st->src_crux = source;
  if (!set->mode_fixed) st->src_mode = source;
  if (!set->cold_fixed) st->src_cold = source;
}

/* Stop predicting and upgrading for this pattern, saying why (-info, -mat_view). */
static PetscErrorCode MatXtractPlanSettle(Mat A, const char *why)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  x->plan.settled = PETSC_TRUE;
  x->plan.why_not = why;
  if (why) PetscCall(PetscInfo(A, "matxtract: plan stays crux (%g,%g) hot mode %s cold kernel %s: %s\n", x->plan.plan.crux.tau_c, x->plan.plan.crux.tau_r, mx_plan_mode_name(x->plan.plan.mode), mx_plan_cold_name(x->plan.plan.cold), why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The first plan of a new pattern or new settings (the plan state starts afresh): the fixed parts
 * from the settings, the free ones (0,0)/auto/auto, or predicted at once under upgrade now. */
PetscErrorCode MatXtractPlanFirst(Mat A, mx_plan *plan)
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
  if (!set->predictor) PetscCall(MatXtractPlanSettle(A, "predictor off (-mat_matxtract_predictor)"));
  else if (set->upgrade == MATXTRACT_UPGRADE_NEVER) PetscCall(MatXtractPlanSettle(A, "-mat_matxtract_upgrade never"));
  else if (!MatXtractPlanHasAlternative(MatXtractSettingsModel(set), set, &st->plan, MatXtractOnDevice(A))) PetscCall(MatXtractPlanSettle(A, "the model offers no other plan within what the options leave free"));
  else if (set->upgrade == MATXTRACT_UPGRADE_NOW) {
    PetscCall(MatXtractPredict(A));
    st->plan = st->pred_plan;
    MatXtractPlanSetFreeSources(set, st, MATXTRACT_CRUX_PREDICTOR);
    PetscCall(MatXtractPlanSettle(A, NULL));
  }
  *plan = st->plan;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Seconds of one product on the format in use, the median of MATXTRACT_GPU_TIME_REPS with CUDA
 * events on the GPU, of MATXTRACT_TIME_REPS with PetscTime around the CPU kernel (x = 1) on the CPU. */
static PetscErrorCode MatXtractTimeFormat(Mat A, PetscLogDouble *seconds)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  PetscReal      t[MATXTRACT_TIME_REPS];
  double        *xv, *yv, sec;

  PetscFunctionBegin;
  if (x->D) {
    PetscCheck(!mx_device_time_spmv(x->D, MATXTRACT_GPU_TIME_REPS, &sec), PETSC_COMM_SELF, PETSC_ERR_LIB, "matxtract: timing the format on the GPU failed: %s", mx_device_last_error());
    *seconds = sec;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMalloc2(x->F.ncols, &xv, x->F.nrows, &yv));
  for (int32_t j = 0; j < x->F.ncols; j++) xv[j] = 1.0;
  for (int k = 0; k < MATXTRACT_TIME_REPS; k++) {
    PetscLogDouble t0, t1;
    PetscCall(PetscTime(&t0));
    mx_spmv(&x->F, xv, yv);
    PetscCall(PetscTime(&t1));
    t[k] = (PetscReal)(t1 - t0);
  }
  PetscCall(PetscFree2(xv, yv));
  PetscCall(PetscSortReal(MATXTRACT_TIME_REPS, t));
  *seconds = (PetscLogDouble)t[MATXTRACT_TIME_REPS / 2];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Seconds per MatMult of the format just built (and packed or not): the pack guard's timing of the
 * format it kept, when it timed one on the GPU; else timed now. */
static PetscErrorCode MatXtractBuiltFormatSeconds(Mat A, PetscLogDouble *seconds)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  if (x->D && x->build_mult_seconds > 0) *seconds = x->build_mult_seconds;
  else PetscCall(MatXtractTimeFormat(A, seconds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a build on the GPU: time the plan in use when the predictor may need it (upgrade auto
 * still deciding) or has predicted it (-mat_view: predicted vs measured), or when the amortised
 * pack or hub split waits for the time spent, unless the build's pack guard has just timed the format kept (no
 * second timing at setup). */
PetscErrorCode MatXtractPlanAfterBuild(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  if (x->D && !x->set.cold_fixed) x->plan.plan.cold = (mx_plan_cold)mx_device_cold_kernel(x->D); /* AUTO resolved by the rule */
  if (!x->set.mode_fixed && x->F.mode != MX_HOT_NONE) x->plan.plan.mode = (mx_mode_request)x->F.mode; /* AUTO resolved by bytes */
  if (!x->D || (x->plan.settled && !x->plan.predicted && !x->pack_pending && !x->hub_pending)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatXtractBuiltFormatSeconds(A, &x->plan.t_mult));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Measured seconds per MatMult of the plan in use (0 while unknown) and the seconds spent on it. */
void MatXtractPlanTimes(const Mat_MatXtract *x, PetscLogDouble *t_cur, PetscLogDouble *spent)
{
  const MatXtractPlanState *st = &x->plan;

  if (x->D) {
    *t_cur = st->t_mult;
    *spent = (PetscLogDouble)st->mults * st->t_mult;
  } else {
    *t_cur = st->mults ? st->spent / (PetscLogDouble)st->mults : 0.0;
    *spent = st->spent;
  }
}

/* Estimated seconds of an upgrade to the predicted plan: the base build again (the last build's
 * time less the setup model's extra for the plan in use), the predicted plan's extra (setup
 * model), and the guard's timed products. */
static PetscLogDouble MatXtractUpgradeCost(const Mat_MatXtract *x, PetscLogDouble t_cur, PetscLogDouble t_new)
{
  const mx_model *M     = MatXtractSettingsModel(&x->set);
  const double    nnz   = (double)x->F.nnz;
  const double    base  = PetscMax(0.0, x->build_seconds - mx_setup_extra_seconds(&M->setup, &x->plan.plan, nnz));
  const double    reps  = x->D ? MATXTRACT_GPU_TIME_REPS + 2 : MATXTRACT_TIME_REPS; /* products timed per plan */
  const double    guard = x->set.guard ? reps * (t_cur + t_new) : 0.0;

  return base + mx_setup_extra_seconds(&M->setup, &x->plan.pred_plan, nnz) + guard;
}

/* Build the predicted plan; with the guard, time it against the old plan (timed the same way just
 * before) and rebuild the old one if the new is not faster or could not be built where the old
 * ran. Either way this was the pattern's one attempt. */
static PetscErrorCode MatXtractPlanUpgrade(Mat A, PetscLogDouble t_cur)
{
  Mat_MatXtract      *x       = (Mat_MatXtract *)A->spptr;
  MatXtractPlanState *st      = &x->plan;
  const mx_plan       old     = st->plan;
  const PetscBool     was_dev = (PetscBool)(x->D != NULL);
  PetscLogDouble      t_old   = t_cur, t_new = 0.0;

  PetscFunctionBegin;
  if (x->set.guard && !was_dev) PetscCall(MatXtractTimeFormat(A, &t_old)); /* the new one is timed the same way */
  PetscCall(PetscInfo(A, "matxtract: upgrading to crux (%g,%g) hot mode %s cold kernel %s after %" PetscInt_FMT " MatMults: predicted %g s per MatMult (now %g s), upgrade estimated at %g s\n", st->pred_plan.crux.tau_c, st->pred_plan.crux.tau_r, mx_plan_mode_name(st->pred_plan.mode),
                      mx_plan_cold_name(st->pred_plan.cold), st->mults, (double)st->t_pred, (double)t_cur, (double)st->upgrade_setup));
  PetscCall(MatXtractBuildPlan_SeqAIJ(A, &st->pred_plan));
  PetscCall(MatXtractPackNow_SeqAIJ(A)); /* packed like the plan it replaces may be */
  st->plan          = st->pred_plan;
  st->upgrade_tried = PETSC_TRUE;
  st->mults         = 0;
  st->spent         = 0.0;
  MatXtractPlanSetFreeSources(&x->set, st, MATXTRACT_CRUX_UPGRADE);
  PetscCall(MatXtractPlanSettle(A, NULL));
  if (x->D || x->set.guard) PetscCall(MatXtractBuiltFormatSeconds(A, &t_new));
  st->t_mult = x->D ? t_new : 0.0;
  if (!x->set.guard) PetscFunctionReturn(PETSC_SUCCESS);
  if (was_dev == (PetscBool)(x->D != NULL) && t_new < t_old) {
    PetscCall(PetscInfo(A, "matxtract: guard: the upgraded plan takes %g s per MatMult, the previous %g s: keeping the upgrade\n", (double)t_new, (double)t_old));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscInfo(A, "matxtract: guard: the upgraded plan %s (%g s per MatMult vs %g s): rebuilding the previous plan\n", was_dev != (PetscBool)(x->D != NULL) ? "could not be built on the GPU" : "is not faster", (double)t_new, (double)t_old));
  PetscCall(MatXtractBuildPlan_SeqAIJ(A, &old));
  PetscCall(MatXtractPackNow_SeqAIJ(A));
  st->plan   = old;
  st->t_mult = x->D ? t_old : 0.0;
  MatXtractPlanSetFreeSources(&x->set, st, MATXTRACT_CRUX_GUARD);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the model prefers, for the crux and hot mode in use, another cold kernel than the GPU runs. */
static PetscBool MatXtractColdSwitchPending(const Mat_MatXtract *x)
{
  const MatXtractPlanState *st = &x->plan;

  return (PetscBool)(x->D && !x->set.cold_fixed && (mx_cold_kernel)st->cold_pred != mx_device_cold_kernel(x->D) && st->log_ratio_cold < st->log_ratio_cur);
}

/* The pending cold-kernel switch is off (decided against, or done): the kernel in use is the model's. */
static void MatXtractColdSwitchDrop(Mat_MatXtract *x)
{
  x->plan.cold_pred      = (mx_plan_cold)mx_device_cold_kernel(x->D);
  x->plan.log_ratio_cold = x->plan.log_ratio_cur;
}

/* Estimated seconds of switching the cold kernel in place to k at t_new seconds per MatMult: timing
 * it and, when k reads the pack, packing again with the pack's guard (MatXtractPackSeconds).
 * cuSPARSE's own setup (descriptors, buffer, ALG2 preprocessing) is not counted (not measured). */
static PetscLogDouble MatXtractColdSwitchCost(const Mat_MatXtract *x, mx_plan_cold k, PetscLogDouble t_new)
{
  const PetscBool repack = (PetscBool)((k == MX_PLAN_COLD_SEGMENT || k == MX_PLAN_COLD_MERGE) && x->set.compress != MATXTRACT_COMPRESS_OFF && !x->pack_pending);

  return (MATXTRACT_GPU_TIME_REPS + 2) * t_new + (repack ? MatXtractPackSeconds(x, t_new) : 0.0);
}

/* On the GPU, when the model prefers another cold kernel for the crux and hot mode in use: decide
 * with the upgrade's ski rental (mx_upgrade_decide) whether its predicted gain per MatMult pays for
 * the switch's estimated cost now, later (asked again before the next MatMult) or never (rgg:20
 * PageRank on an H100: merge predicted at 0.9996x of segment, and the switch and its way back cost
 * two repacks and three timings). Now: switch in place (mx_device_set_cold_kernel, no rebuild; a
 * kernel that reads the pack has it guarded again, and so has the old one if it comes back after
 * that), time it as the plan was timed, and with the guard go back if it is not faster. cuSPARSE
 * leaves the pack as it is (unread). No switch from a kernel that reads a pack to cuSPARSE: the
 * model compared the kernels on plain arrays (its labels are unpacked), and the trial costs
 * cuSPARSE's setup and two timings (kron21 PageRank, H100). A kernel the device refuses (cuSPARSE on
 * a cold CSR it cannot take) leaves the plan as it was. At most one switch tried per prediction. */
static PetscErrorCode MatXtractPlanSwitchCold(Mat A, PetscLogDouble t_cur, PetscLogDouble spent)
{
  Mat_MatXtract      *x  = (Mat_MatXtract *)A->spptr;
  MatXtractPlanState *st = &x->plan;
  mx_cold_kernel      old;
  PetscLogDouble      t_old = st->t_mult, t_new, t_pred, cost;
  mx_upgrade          d;

  PetscFunctionBegin;
  if (!MatXtractColdSwitchPending(x)) PetscFunctionReturn(PETSC_SUCCESS);
  old = mx_device_cold_kernel(x->D);
  if (st->cold_pred == MX_PLAN_COLD_CUSPARSE) {
    mx_device_pack_info pi;
    PetscCheck(!mx_device_compress_info(x->D, &pi), PETSC_COMM_SELF, PETSC_ERR_LIB, "matxtract: reading the cold region's encodings failed: %s", mx_device_last_error());
    if (pi.in_use) {
      PetscCall(PetscInfo(A, "matxtract: predicted cold kernel cusparse not tried: %s reads the packed cold region (the model knows unpacked kernel times only)\n", MatXtractColdNames[old]));
      MatXtractColdSwitchDrop(x);
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  t_pred = t_cur * exp(st->log_ratio_cold - st->log_ratio_cur);
  cost   = MatXtractColdSwitchCost(x, st->cold_pred, t_pred);
  d      = mx_upgrade_decide(t_cur, t_pred, cost, spent, (double)x->set.expected_mults);
  if (d == MX_UPGRADE_LATER) PetscFunctionReturn(PETSC_SUCCESS);
  if (d == MX_UPGRADE_NEVER) {
    PetscCall(PetscInfo(A, "matxtract: predicted cold kernel %s not tried: its predicted %g s per MatMult (%s: %g s) cannot pay for the switch (estimated %g s)\n", mx_plan_cold_name(st->cold_pred), (double)t_pred, MatXtractColdNames[old], (double)t_cur, (double)cost));
    MatXtractColdSwitchDrop(x);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (mx_device_set_cold_kernel(x->D, (mx_cold_kernel)st->cold_pred)) {
    PetscCall(PetscInfo(A, "matxtract: predicted cold kernel %s not taken: %s\n", mx_plan_cold_name(st->cold_pred), mx_device_last_error()));
    MatXtractColdSwitchDrop(x);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  const PetscBool repacked = (PetscBool)(st->cold_pred == MX_PLAN_COLD_SEGMENT || st->cold_pred == MX_PLAN_COLD_MERGE);
  if (repacked) PetscCall(MatXtractRepack_SeqAIJ(A));
  PetscCall(MatXtractTimeFormat(A, &t_new));
  if (x->set.guard && !(t_new < t_old)) {
    PetscCall(PetscInfo(A, "matxtract: guard: predicted cold kernel %s takes %g s per MatMult, %s %g s: keeping %s\n", mx_plan_cold_name(st->cold_pred), (double)t_new, MatXtractColdNames[old], (double)t_old, MatXtractColdNames[old]));
    PetscCheck(!mx_device_set_cold_kernel(x->D, old), PETSC_COMM_SELF, PETSC_ERR_LIB, "matxtract: switching the cold kernel back to %s failed: %s", MatXtractColdNames[old], mx_device_last_error());
    if (repacked) PetscCall(MatXtractRepack_SeqAIJ(A));
    st->src_cold = MATXTRACT_CRUX_GUARD;
    MatXtractColdSwitchDrop(x);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscInfo(A, "matxtract: cold kernel %s -> %s (predicted): %g -> %g s per MatMult\n", MatXtractColdNames[old], mx_plan_cold_name(st->cold_pred), (double)t_old, (double)t_new));
  st->plan.cold     = st->cold_pred;
  st->src_cold      = MATXTRACT_CRUX_PREDICTOR;
  st->log_ratio_cur = st->log_ratio_cold;
  st->t_mult        = t_new;
  st->mults         = 0; /* the time spent so far was on the other kernel */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a prediction or a cold-kernel decision: the pattern's decisions end when no cold-kernel
 * switch is pending and the predicted plan is the plan in use or not faster than it. */
static PetscErrorCode MatXtractPlanMaybeSettle(Mat A)
{
  Mat_MatXtract      *x  = (Mat_MatXtract *)A->spptr;
  MatXtractPlanState *st = &x->plan;

  PetscFunctionBegin;
  if (MatXtractColdSwitchPending(x)) PetscFunctionReturn(PETSC_SUCCESS);
  if (MatXtractPlanSameFormat(&st->pred_plan, &st->plan, (PetscBool)(x->D != NULL))) PetscCall(MatXtractPlanSettle(A, "the predicted plan is the plan in use"));
  else if (!(st->log_ratio_pred < st->log_ratio_cur)) PetscCall(MatXtractPlanSettle(A, "the model predicts no plan faster than the plan in use"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The prediction collected when it is ready (MatXtractPredictCollect), then a predicted cold kernel
 * for the plan in use weighed at once. */
static PetscErrorCode MatXtractPlanMaybeCollect(Mat A, PetscLogDouble t_cur, PetscLogDouble spent)
{
  PetscFunctionBegin;
  PetscCall(MatXtractPredictCollect(A));
  if (!((Mat_MatXtract *)A->spptr)->plan.predicted) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatXtractPlanSwitchCold(A, t_cur, spent));
  PetscCall(MatXtractPlanMaybeSettle(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Under upgrade auto, once the time spent pays for it at the mean gain of a prediction (or, with
 * expected_mults N, if N MatMults can): start the prediction (its GPU passes run during the next
 * MatMults), collected here when ready. */
static PetscErrorCode MatXtractPlanMaybePredict(Mat A, PetscLogDouble t_cur, PetscLogDouble spent)
{
  Mat_MatXtract      *x     = (Mat_MatXtract *)A->spptr;
  const mx_model     *M     = MatXtractSettingsModel(&x->set);
  const PetscLogDouble after = MatXtractPredictAfter(M, x);
  const PetscInt       N     = x->set.expected_mults;

  PetscFunctionBegin;
  if (N > 0 && (PetscLogDouble)N * t_cur < after) {
    PetscCall(PetscInfo(A, "matxtract: %" PetscInt_FMT " expected MatMults of %g s cannot pay for the prediction (estimated %g s) at its mean gain %g\n", N, (double)t_cur, (double)MatXtractPredictCostNow(M, x), MatXtractPredictGain(x)));
    PetscCall(MatXtractPlanSettle(A, "the expected MatMults cannot pay for predicting (-mat_matxtract_expected_mults)"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (N <= 0 && spent < after) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatXtractPredictStart(A));
  PetscCall(MatXtractPlanMaybeCollect(A, t_cur, spent));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the hub split (mx_device_hub, -mat_matxtract_hub) runs x's products. */
PetscBool MatXtractHubInUse(const Mat_MatXtract *x)
{
  int K = 0;

  if (x->D) mx_device_hub_info(x->D, &K, NULL);
  return (PetscBool)(K > 0);
}

/* Before a MatMult under upgrade auto: predict when it pays (collect a prediction whose GPU passes
 * ran, or weigh a cold-kernel switch still pending), then ask the ski-rental rule whether the upgrade pays now, later or never. */
PetscErrorCode MatXtractPlanBeforeMult(Mat A)
{
  Mat_MatXtract      *x  = (Mat_MatXtract *)A->spptr;
  MatXtractPlanState *st = &x->plan;
  PetscLogDouble      t_cur, spent;
  mx_upgrade          d;

  PetscFunctionBegin;
  if (st->settled) PetscFunctionReturn(PETSC_SUCCESS);
  if (MatXtractHubInUse(x)) { /* the predicted plans are whole-matrix plans; the time in use is the split's */
    PetscCall(MatXtractPlanSettle(A, "the hub split is in use (where its rule admits it, it gains more than the whole-matrix plans the model predicts)"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  MatXtractPlanTimes(x, &t_cur, &spent);
  if (!(t_cur > 0)) PetscFunctionReturn(PETSC_SUCCESS); /* the CPU's first MatMult measures it */
  if (st->predict_pending) PetscCall(MatXtractPlanMaybeCollect(A, t_cur, spent));
  else if (!st->predicted) PetscCall(MatXtractPlanMaybePredict(A, t_cur, spent));
  else if (MatXtractColdSwitchPending(x)) {
    PetscCall(MatXtractPlanSwitchCold(A, t_cur, spent));
    PetscCall(MatXtractPlanMaybeSettle(A));
  }
  if (st->settled || !st->predicted || !(st->log_ratio_pred < st->log_ratio_cur)) PetscFunctionReturn(PETSC_SUCCESS); /* nothing but a cold switch to weigh */
  /* from the latest measurement (the CPU's mean moves): the predicted ratio, not a time, is fixed */
  st->t_pred        = t_cur * exp(st->log_ratio_pred - st->log_ratio_cur);
  st->upgrade_setup = MatXtractUpgradeCost(x, t_cur, st->t_pred);
  d = mx_upgrade_decide(t_cur, st->t_pred, st->upgrade_setup, spent, (double)x->set.expected_mults);
  if (d == MX_UPGRADE_NOW) PetscCall(MatXtractPlanUpgrade(A, t_cur));
  else if (d == MX_UPGRADE_NEVER) PetscCall(MatXtractPlanSettle(A, "the upgrade cannot pay for its setup (ski rental)"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a MatMult: count it, and add the CPU kernel's seconds (0 on the GPU). */
PetscErrorCode MatXtractPlanAfterMult(Mat A, PetscLogDouble cpu_seconds)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  x->plan.mults++;
  x->plan.spent += cpu_seconds;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The plan's part of MatXtractGetInfo. */
PetscErrorCode MatXtractPlanGetInfo(Mat A, MatXtractInfo *info)
{
  Mat_MatXtract            *x  = (Mat_MatXtract *)A->spptr;
  const MatXtractPlanState *st = &x->plan;
  PetscLogDouble            t_cur, spent;

  PetscFunctionBegin;
  MatXtractPlanTimes(x, &t_cur, &spent);
  info->crux_source            = x->built ? st->src_crux : x->set.crux_source;
  info->mode_source            = st->src_mode;
  info->cold_source            = st->src_cold;
  info->hot_mode_requested     = mx_plan_mode_name(st->plan.mode);
  info->cold_kernel            = x->D ? MatXtractColdNames[mx_device_cold_kernel(x->D)] : "cpu";
  info->predicted              = st->predicted;
  info->pred_tau_c             = st->predicted ? st->pred_plan.crux.tau_c : 0;
  info->pred_tau_r             = st->predicted ? st->pred_plan.crux.tau_r : 0;
  info->pred_hot_mode          = st->predicted ? mx_plan_mode_name(st->pred_plan.mode) : "";
  info->pred_cold_kernel       = st->predicted ? mx_plan_cold_name(st->pred_plan.cold) : "";
  info->upgrade_tried          = st->upgrade_tried;
  info->mult_seconds           = t_cur;
  info->mult_seconds_predicted = st->t_pred;
  info->mults                  = st->mults;
  info->model_trained_on       = MatXtractSettingsModel(&x->set)->trained_on;
  info->plan_settled           = st->settled;
  info->features_on_gpu        = st->predicted ? st->features_on_gpu : PETSC_FALSE;
  info->predict_seconds        = st->predicted ? st->predict_seconds : 0.0;
  info->predict_pending        = st->predict_pending;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Where a plan part came from, in -mat_view's words. */
static const char *MatXtractSourceText(MatXtractCruxSource s, const char *option)
{
  return s == MATXTRACT_CRUX_OPTION ? option : MatXtractSourceNames[s];
}

/* -mat_view ::ascii_info lines about the plan, the predictor and the upgrade. */
PetscErrorCode MatXtractPlanView(Mat A, PetscViewer viewer)
{
  Mat_MatXtract            *x  = (Mat_MatXtract *)A->spptr;
  const MatXtractPlanState *st = &x->plan;
  const MatXtractSettings  *set = &x->set;
  PetscLogDouble            t_cur, spent;
  char                      expected[32] = "unknown";

  PetscFunctionBegin;
  MatXtractPlanTimes(x, &t_cur, &spent);
  PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: plan: crux from %s, hot mode %s from %s, cold kernel %s from %s\n", MatXtractSourceText(st->src_crux, "option -mat_matxtract_crux"), mx_plan_mode_name(st->plan.mode), MatXtractSourceText(st->src_mode, "option -mat_matxtract_mode"), mx_plan_cold_name(st->plan.cold),
                                   MatXtractSourceText(st->src_cold, "option -mat_matxtract_cold")));
  if (set->expected_mults) PetscCall(PetscSNPrintf(expected, sizeof expected, "%" PetscInt_FMT, set->expected_mults));
  PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: predictor %s, upgrade %s, guard %s, expected MatMults %s; model %s, trained on: %s\n", set->predictor ? "on" : "off", MatXtractUpgradeNames[set->upgrade], set->guard ? "on" : "off", expected, set->model ? set->model->path : "embedded",
                                   MatXtractSettingsModel(set)->trained_on));
  if (st->predicted)
    PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: predicted plan crux (%g, %g) hot mode %s cold kernel %s, %.3gx the time of the plan then in use; features (on the %s) + prediction %.3g ms\n", st->pred_plan.crux.tau_c, st->pred_plan.crux.tau_r, mx_plan_mode_name(st->pred_plan.mode), mx_plan_cold_name(st->pred_plan.cold), exp(st->log_ratio_pred - st->log_ratio_cur), st->features_on_gpu ? "GPU" : "CPU", 1e3 * st->predict_seconds));
  else if (st->predict_pending) PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: predicting: the feature passes run on the GPU (%" PetscInt_FMT " MatMults on the plan so far; the next MatMult after they ran collects them)\n", st->mults));
  else if (!st->settled) PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: not predicted yet: it runs once the MatMult time spent (%.3g ms) reaches %.3g ms (its estimated cost %.3g ms / the mean gain of a prediction %g)\n", 1e3 * spent, 1e3 * MatXtractPredictAfter(MatXtractSettingsModel(set), x), 1e3 * MatXtractPredictCostNow(MatXtractSettingsModel(set), x), MatXtractPredictGain(x)));
  if (st->t_pred > 0) PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: MatMult predicted %.4g us for the predicted plan (from the plan then in use, measured)\n", 1e6 * st->t_pred));
  PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: MatMult measured %.4g us for the plan in use (%" PetscInt_FMT " MatMults on it; 0: not measured yet)\n", 1e6 * t_cur, st->mults));
  if (st->upgrade_tried) PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: upgrade tried (estimated at %.3g ms): %s\n", 1e3 * st->upgrade_setup, st->src_crux == MATXTRACT_CRUX_GUARD || st->src_mode == MATXTRACT_CRUX_GUARD || st->src_cold == MATXTRACT_CRUX_GUARD ? "the guard timed it slower and kept the previous plan" : "kept"));
  if (st->why_not) PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: no (further) upgrade: %s\n", st->why_not));
  PetscFunctionReturn(PETSC_SUCCESS);
}
