/* matxtract_predict.c - the prediction of a sequential block's plan for the plan engine: the
 * matrix's features (on the GPU when the device holds the plain matrix, the passes queued beside the
 * MatMults and collected later; else on the host) and the embedded or loaded model's choice among
 * its candidate plans within what the options leave free. The model's outputs are log time ratios,
 * so the predicted time of a plan is the measured time of the plan in use times exp(difference). */
#include "matxtract_impl.h"
#include <math.h>


/* CPU seconds of mx_features_compute per nonzero: tuning/predictor's matxtract-predictor measures
 * 10-25 ns; the upper end, so that the prediction never starts before it can be afforded */
#define MATXTRACT_FEATURES_NS_PER_NNZ 25.0

/* the same on the GPU (mx_device_features_start/finish: a few passes over the uploaded arrays), fixed
 * + per nonzero: an upper end of host + GPU over the measured matrices, so that the prediction never
 * starts before it can be afforded (docs/performance.md, "Plan engine costs", predict) */
#define MATXTRACT_FEATURES_GPU_NS_PER_NNZ 0.20

#define MATXTRACT_FEATURES_GPU_FIXED_S    1.0e-3

/* The mean fraction of a MatMult that a prediction saves: the fastest plan the labels measured vs
 * the default plan, over the label matrices of >= 1M nonzeros (tuning/predictor/gain_prior.py). On
 * the GPU the row-length rule's verdict is known for free at upload and splits the prior: the
 * matrices it sends to the merge kernel (skewed rows: power-law graphs) gain more than those it sends
 * to the segment kernel; the split prior is used where that verdict is what runs (GPU, crux (0,0),
 * cold kernel not fixed). The measurements: docs/performance.md, "Plan engine costs", predict. */
#define MATXTRACT_PREDICT_GAIN         0.012

#define MATXTRACT_PREDICT_GAIN_MERGE   0.028

#define MATXTRACT_PREDICT_GAIN_SEGMENT 0.004

/* seconds of one tree level in one model evaluation (a compare and a load) */
#define MATXTRACT_TREE_LEVEL_NS 2.0

PetscBool MatXtractCruxFixed(const MatXtractSettings *set)
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
PetscBool MatXtractPlanSameFormat(const mx_plan *a, const mx_plan *b, PetscBool on_device)
{
  if (a->crux.tau_c != b->crux.tau_c || a->crux.tau_r != b->crux.tau_r) return PETSC_FALSE;
  if (a->crux.tau_r > 0 && a->mode != b->mode) return PETSC_FALSE;
  if (on_device && a->cold != b->cold) return PETSC_FALSE;
  return PETSC_TRUE;
}

/* Whether the model offers, within what the settings leave free, a plan other than cur. */
PetscBool MatXtractPlanHasAlternative(const mx_model *M, const MatXtractSettings *set, const mx_plan *cur, PetscBool on_device)
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
PetscLogDouble MatXtractPredictCostNow(const mx_model *M, const Mat_MatXtract *x)
{
  return MatXtractPredictCost(M, MatXtractFeaturesOnDevice(x), (double)x->F.nnz);
}

/* The mean gain of a prediction for x's matrix: the mean over the matrices given the same verdict by
 * the row-length rule, where the plan in use is the rule's default ((0,0) on the GPU, cold kernel
 * not fixed); else the corpus mean. */
double MatXtractPredictGain(const Mat_MatXtract *x)
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

/* Queue the features' passes on the GPU when it holds the plain matrix (nothing waits for them:
 * st->predict_pending; a GPU failure is said with -info, and the features are then computed on the
 * host at collection), and note the host seconds this took. */
PetscErrorCode MatXtractPredictStart(Mat A)
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
PetscErrorCode MatXtractPredictNow(Mat A)
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

/* The prediction whose GPU passes MatXtractPredictStart queued, collected once they ran (*collected
 * false: not yet; a later MatMult looks again), or at once when they were not queued (features on
 * the host). predict_seconds: the host seconds of the start and of the collection; products still
 * queued on the GPU are let finish first (not the prediction's cost). */
PetscErrorCode MatXtractPredictCollect(Mat A, PetscBool *collected)
{
  Mat_MatXtract      *x  = (Mat_MatXtract *)A->spptr;
  MatXtractPlanState *st = &x->plan;
  PetscLogDouble      t0, t1;
  int                 ready = 1;

  PetscFunctionBegin;
  *collected = st->predicted;
  if (st->predicted) PetscFunctionReturn(PETSC_SUCCESS);
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
  *collected = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
