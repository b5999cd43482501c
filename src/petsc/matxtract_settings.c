/* matxtract_settings.c - the user's choices (-mat_matxtract_* options), and the conversion steps
 * that the sequential and MPI types share. */
#include <stdlib.h>
#include <petscdevice.h>
#include "matxtract_impl.h"

const char *const MatXtractModeNames[]   = {"auto", "du", "se", "MatXtractMode", "MX_MODE_", NULL};
const char *const MatXtractDeviceNames[] = {"auto", "cpu", "gpu", "MatXtractDevice", "MATXTRACT_DEVICE_", NULL};
const char *const MatXtractColdNames[]   = {"auto", "segment", "merge", "cusparse", "timed", "MatXtractCold", "MX_COLD_", NULL};
const char *const MatXtractUpgradeNames[] = {"now", "auto", "never", "MatXtractUpgrade", "MATXTRACT_UPGRADE_", NULL};
const char *const MatXtractCompressNames[] = {"off", "auto", "on", "MatXtractCompress", "MATXTRACT_COMPRESS_", NULL}; /* MatXtractCompressChoice order */

PetscErrorCode MatXtractSettingsDefault(MatXtractSettings *set)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(set, sizeof *set));
  set->crux.tau_c    = 0.0;
  set->crux.tau_r    = 0.0;
  set->crux_source   = MATXTRACT_CRUX_DEFAULT;
  set->mode          = MX_MODE_AUTO;
  set->device_choice = MATXTRACT_DEVICE_AUTO;
  set->cold_kernel   = MX_COLD_AUTO;
  set->predictor     = PETSC_TRUE;
  set->upgrade       = MATXTRACT_UPGRADE_AUTO;
  set->guard         = PETSC_TRUE;
  set->compress      = MATXTRACT_COMPRESS_AUTO;
  set->hub           = MATXTRACT_HUB_AUTO;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* *dst = *src, the model referenced (dst's previous model released). */
PetscErrorCode MatXtractSettingsCopy(const MatXtractSettings *src, MatXtractSettings *dst)
{
  MatXtractModel *old = dst->model;

  PetscFunctionBegin;
  if (src == dst) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatXtractModelReference(src->model));
  *dst = *src;
  PetscCall(MatXtractModelRelease(&old));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Release what set references (its model). */
PetscErrorCode MatXtractSettingsDestroy(MatXtractSettings *set)
{
  PetscFunctionBegin;
  PetscCall(MatXtractModelRelease(&set->model));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether a and b ask for the same thing (a difference rebuilds the format). */
PetscBool MatXtractSettingsEqual(const MatXtractSettings *a, const MatXtractSettings *b)
{
  return (PetscBool)(a->crux.tau_c == b->crux.tau_c && a->crux.tau_r == b->crux.tau_r && a->crux_source == b->crux_source && a->mode == b->mode && a->mode_fixed == b->mode_fixed && a->device_choice == b->device_choice &&
                     a->cold_kernel == b->cold_kernel && a->cold_fixed == b->cold_fixed && a->predictor == b->predictor && a->upgrade == b->upgrade && a->guard == b->guard && a->expected_mults == b->expected_mults && a->model == b->model &&
                     a->compress == b->compress && a->hub == b->hub);
}

/* The model the predictor uses: -mat_matxtract_model's, else the embedded one. */
const mx_model *MatXtractSettingsModel(const MatXtractSettings *set)
{
  return set->model ? &set->model->M : mx_model_default();
}

/* set->crux = (tau_c, tau_r) from `source`, after checking 0 <= tau_r <= tau_c <= 1. */
PetscErrorCode MatXtractSettingsSetCrux(Mat A, MatXtractSettings *set, PetscReal tau_c, PetscReal tau_r, MatXtractCruxSource source)
{
  PetscFunctionBegin;
  PetscCheck(tau_c >= 0 && tau_c <= 1 && tau_r >= 0 && tau_r <= tau_c, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "matxtract: crux (%g, %g) is invalid: need 0 <= tau_r <= tau_c <= 1", (double)tau_c, (double)tau_r);
  set->crux.tau_c  = tau_c;
  set->crux.tau_r  = tau_r;
  set->crux_source = source;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A process's first-use costs of the GPU code (mx_device_warm_start) are paid while the conversion
 * copies A on the host (MAT_INITIAL_MATRIX), or while the user assembles (A not assembled yet): not
 * where no host work follows (an assembled matrix converted in place), nor under
 * -mat_matxtract_device cpu (A's prefix), nor without a usable GPU. PETSc picks this rank's GPU
 * first, as MatXtractUseDevice does before a build. */
static PetscErrorCode MatXtractWarmDevice(Mat A, MatReuse reuse)
{
  const char *prefix;
  PetscInt    device = MATXTRACT_DEVICE_AUTO;
  PetscBool   set;

  PetscFunctionBegin;
  if (!mx_device_count() || (reuse != MAT_INITIAL_MATRIX && A->assembled)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetOptionsPrefix(A, &prefix));
  PetscCall(PetscOptionsGetEList(((PetscObject)A)->options, prefix, "-mat_matxtract_device", MatXtractDeviceNames, 3, &device, &set));
  if (device == MATXTRACT_DEVICE_CPU) PetscFunctionReturn(PETSC_SUCCESS);
#if defined(PETSC_HAVE_CUDA)
  PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
  mx_device_warm_start();
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* First step of MatConvert to a matxtract type: refuse scalars other than real double, start the
 * GPU warm-up, and give *B the matrix to turn into ours (a duplicate, A's values copied in, or A
 * itself in place). */
PetscErrorCode MatXtractConvertBegin(Mat A, MatReuse reuse, Mat *B)
{
  PetscFunctionBegin;
#if defined(PETSC_USE_COMPLEX) || !defined(PETSC_USE_REAL_DOUBLE)
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "matxtract needs PetscScalar = real double (the tensor-core path is FP64); this PETSc is configured with another scalar type: use -mat_type aij");
#endif
  PetscCall(MatXtractWarmDevice(A, reuse));
  if (reuse == MAT_INITIAL_MATRIX) {
    PetscBool threaded;

    PetscCall(MatXtractDuplicateThreaded(A, &threaded));
    if (threaded) PetscCall(MatXtractDuplicateSeqAIJ(A, B));
    else PetscCall(MatDuplicate(A, MAT_COPY_VALUES, B));
  } else if (reuse == MAT_REUSE_MATRIX) PetscCall(MatCopy(A, *B, SAME_NONZERO_PATTERN));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The first step of a conversion back to AIJ: MAT_REUSE_MATRIX copies A's values into *B (the AIJ of an
 * earlier conversion: *done, nothing else to do), MAT_INITIAL_MATRIX duplicates A into *B (a matxtract
 * the caller strips), in place *B is A. */
PetscErrorCode MatXtractConvertBackBegin(Mat A, MatReuse reuse, Mat *B, PetscBool *done)
{
  PetscFunctionBegin;
  *done = (PetscBool)(reuse == MAT_REUSE_MATRIX);
  if (reuse == MAT_REUSE_MATRIX) PetscCall(MatCopy(A, *B, SAME_NONZERO_PATTERN));
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Settings of a matrix being converted to matxtract: defaults, then the options database. A bad
 * option (e.g. an unreadable model file) is an error that leaves no half-converted matrix behind
 * (a new *B is destroyed; converted in place, *B stays what it was). */
PetscErrorCode MatXtractConvertSettings(Mat *B, MatReuse reuse, MatXtractSettings *set)
{
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(MatXtractSettingsDefault(set));
  ierr = MatXtractSettingsFromDatabase(*B, set);
  if (ierr && reuse == MAT_INITIAL_MATRIX) PetscCall(MatDestroy(B));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether products run on the GPU: not refused by -mat_matxtract_device cpu, and a GPU is usable. */
PetscBool MatXtractSettingsWantDevice(const MatXtractSettings *set)
{
  if (set->device_choice == MATXTRACT_DEVICE_CPU) return PETSC_FALSE;
  return mx_device_count() > 0 ? PETSC_TRUE : PETSC_FALSE;
}

/* MatCreateVecs of a matxtract matrix whose products run on the GPU gives device vectors, as
 * aijcusparse's does; one whose products run on the CPU (no GPU, or a GPU build that failed under
 * -mat_matxtract_device auto) gives host vectors. */
PetscErrorCode MatXtractSetDefaultVecType(Mat B, PetscBool on_device)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(B->defaultvectype));
#if defined(PETSC_HAVE_CUDA)
  PetscCall(PetscStrallocpy(on_device ? VECCUDA : VECSTANDARD, &B->defaultvectype));
#else
  (void)on_device;
  PetscCall(PetscStrallocpy(VECSTANDARD, &B->defaultvectype));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The -mat_matxtract_* values found (from the -help aware PetscOptions* calls or straight from
 * the database), each with whether it was given. */
typedef struct {
  PetscReal crux[2];
  PetscInt  ncrux, mode, device, cold, upgrade, expected_mults, compress;
  PetscBool predictor, guard;
  char      model[PETSC_MAX_PATH_LEN];
  char      hub[32]; /* auto, off, or the hub columns */
  PetscBool has_crux, has_mode, has_device, has_cold, has_upgrade, has_expected_mults, has_predictor, has_guard, has_model, has_compress, has_hub;
} MatXtractOptionValues;

/* v's defaults: the current settings (what -help shows). */
static PetscErrorCode MatXtractOptionValuesInit(const MatXtractSettings *set, MatXtractOptionValues *v)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(v, sizeof *v));
  v->crux[0]        = set->crux.tau_c;
  v->crux[1]        = set->crux.tau_r;
  v->ncrux          = 2;
  v->mode           = (PetscInt)set->mode;
  v->device         = (PetscInt)set->device_choice;
  v->cold           = (PetscInt)set->cold_kernel;
  v->upgrade        = (PetscInt)set->upgrade;
  v->expected_mults = set->expected_mults;
  v->predictor      = set->predictor;
  v->guard          = set->guard;
  v->compress       = (PetscInt)set->compress;
  if (set->hub == MATXTRACT_HUB_AUTO) PetscCall(PetscStrncpy(v->hub, "auto", sizeof v->hub));
  else if (set->hub == 0) PetscCall(PetscStrncpy(v->hub, "off", sizeof v->hub));
  else PetscCall(PetscSNPrintf(v->hub, sizeof v->hub, "%" PetscInt_FMT, set->hub));
  if (set->model) PetscCall(PetscStrncpy(v->model, set->model->path, sizeof v->model));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -mat_matxtract_hub's value: auto (MATXTRACT_HUB_AUTO), off or 0, or 1 .. MX_HUB_MAX_COLS hub columns */
static PetscErrorCode MatXtractParseHub(Mat A, const char *s, PetscInt *hub)
{
  PetscBool is_auto, is_off;
  char     *end = NULL;
  long      k;

  PetscFunctionBegin;
  PetscCall(PetscStrcasecmp(s, "auto", &is_auto));
  PetscCall(PetscStrcasecmp(s, "off", &is_off));
  if (is_auto || is_off) {
    *hub = is_auto ? MATXTRACT_HUB_AUTO : 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  k = strtol(s, &end, 10);
  PetscCheck(end != s && *end == 0 && k >= 0 && k <= MX_HUB_MAX_COLS, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_matxtract_hub %s: need auto, off (or 0), or 1 to %d hub columns (their x values fill a GPU block's shared memory)", s, MX_HUB_MAX_COLS);
  *hub = (PetscInt)k;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Apply the values given to set (the model file is read here: a bad one is an error); *changed
 * tells whether anything was given. */
static PetscErrorCode MatXtractOptionValuesApply(Mat A, const MatXtractOptionValues *v, MatXtractSettings *set, PetscBool *changed)
{
  PetscInt hub = set->hub;

  PetscFunctionBegin;
  if (v->has_model) { /* first: an unreadable model file leaves set as it was */
    MatXtractModel *m = NULL;
    if (v->model[0]) PetscCall(MatXtractModelLoad(A, v->model, &m));
    PetscCall(MatXtractModelRelease(&set->model));
    set->model = m;
  }
  if (v->has_crux) {
    PetscCheck(v->ncrux == 2, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "-mat_matxtract_crux takes two numbers tau_c,tau_r; got %" PetscInt_FMT, v->ncrux);
    PetscCall(MatXtractSettingsSetCrux(A, set, v->crux[0], v->crux[1], MATXTRACT_CRUX_OPTION));
  }
  if (v->has_hub) PetscCall(MatXtractParseHub(A, v->hub, &hub));
  PetscCheck(!v->has_expected_mults || v->expected_mults >= 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_matxtract_expected_mults %" PetscInt_FMT ": need N >= 0 (0 = unknown)", v->expected_mults);
  if (v->has_mode) set->mode = (mx_mode_request)v->mode;
  if (v->has_device) set->device_choice = (MatXtractDeviceChoice)v->device;
  if (v->has_cold) set->cold_kernel = (mx_cold_kernel)v->cold;
  if (v->has_upgrade) set->upgrade = (MatXtractUpgrade)v->upgrade;
  if (v->has_expected_mults) set->expected_mults = v->expected_mults;
  if (v->has_predictor) set->predictor = v->predictor;
  if (v->has_guard) set->guard = v->guard;
  if (v->has_compress) set->compress = (MatXtractCompressChoice)v->compress;
  if (v->has_hub) set->hub = hub;
  set->mode_fixed = (PetscBool)(set->mode_fixed || v->has_mode);
  set->cold_fixed = (PetscBool)(set->cold_fixed || v->has_cold);
  *changed        = (PetscBool)(v->has_crux || v->has_mode || v->has_device || v->has_cold || v->has_upgrade || v->has_expected_mults || v->has_predictor || v->has_guard || v->has_model || v->has_compress || v->has_hub);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Parse -mat_matxtract_* into set (with -help text); *changed tells whether anything was given. */
PetscErrorCode MatXtractSettingsFromOptions(Mat A, PetscOptionItems *PetscOptionsObject, MatXtractSettings *set, PetscBool *changed)
{
  MatXtractOptionValues v;

  PetscFunctionBegin;
  PetscCall(MatXtractOptionValuesInit(set, &v));
  PetscOptionsHeadBegin(PetscOptionsObject, "MatXtract options (hot/cold SpMV format)");
  PetscCall(PetscOptionsRealArray("-mat_matxtract_crux", "Crux tau_c,tau_r (0 <= tau_r <= tau_c <= 1), fixed (the predictor then chooses only what is not fixed); default: (0,0) = all cold, then the predictor's", "MatXtractSetCrux", v.crux, &v.ncrux, &v.has_crux));
  PetscCall(PetscOptionsEList("-mat_matxtract_mode", "Hot region format, fixed: auto (smaller of DU/SE by exact byte cost), du (dense unfolding), se (sparse encoding); default: auto, then the predictor's", "", MatXtractModeNames, 3, MatXtractModeNames[v.mode], &v.mode, &v.has_mode));
  PetscCall(PetscOptionsEList("-mat_matxtract_device", "Where MatMult runs: auto (GPU when one is visible), cpu, gpu", "", MatXtractDeviceNames, 3, MatXtractDeviceNames[v.device], &v.device, &v.has_device));
  PetscCall(PetscOptionsEList("-mat_matxtract_cold", "Cold-region GPU kernel: auto (default: a row-length rule at the build, then the predictor's kernel), or fixed: segment (paper Alg. 2), merge (merge path), cusparse (cusparseSpMV CSR ALG2), timed (all three timed at upload, the fastest kept)", "", MatXtractColdNames, 5, MatXtractColdNames[v.cold], &v.cold, &v.has_cold));
  PetscCall(PetscOptionsBool("-mat_matxtract_predictor", "Predict the plan (crux, hot mode, cold kernel) from the matrix's features, for what options do not fix", "", v.predictor, &v.predictor, &v.has_predictor));
  PetscCall(PetscOptionsString("-mat_matxtract_model", "Plan model file (tuning/predictor) replacing the embedded model", "", v.model, v.model, sizeof v.model, &v.has_model));
  PetscCall(PetscOptionsEList("-mat_matxtract_upgrade", "When the predicted plan is built: now (at the first build), auto (online, once the MatMults spent pay for predicting and then for its setup), never (do not predict)", "", MatXtractUpgradeNames, 3, MatXtractUpgradeNames[v.upgrade], &v.upgrade, &v.has_upgrade));
  PetscCall(PetscOptionsInt("-mat_matxtract_expected_mults", "MatMults the solve makes in all (0 = unknown): upgrade auto then predicts and upgrades, and compress auto packs, only when they can pay for it", "", v.expected_mults, &v.expected_mults, &v.has_expected_mults));
  PetscCall(PetscOptionsBool("-mat_matxtract_guard", "After each lever that changes the format or the kernel (an upgrade, a pack, row patterns, a hub split, a cold-kernel switch), time the new form against the old and keep the faster", "", v.guard, &v.guard, &v.has_guard));
  PetscCall(PetscOptionsEList("-mat_matxtract_compress", "Lossless compression: auto (the cold rows as ids of a few repeated row patterns where they repeat, as stencils do; else value dictionary, one value, column constants and 8/16-bit column deltas where they take fewer bytes, chosen by exact byte count; the SE hot values as one value or column constants; products bitwise equal to plain) on the GPU, once the MatMult time spent, saving an assumed 50% (row patterns) or 20% (a pack; 2% where the cold region fits half the GPU's L2) per MatMult, would have paid for it (a short solve never pays it), the CPU path stays plain (its C kernel is not reliably faster there); on (at every build, the CPU path's cold region too); off (plain CSR)", "", MatXtractCompressNames, 3, MatXtractCompressNames[v.compress], &v.compress, &v.has_compress));
  PetscCall(PetscOptionsString("-mat_matxtract_hub", "Hub split on the GPU for power-law graphs: the K most used columns' x values in shared memory, their nonzeros summed by a kernel of their own after the rest's cold kernel (rows summed in another order than the whole-matrix kernels); at all-cold plans (the default crux (0,0)), built on the GPU (about 0.3 ns per nonzero on an H200) once the MatMult time spent pays for it (as the pack; -mat_matxtract_expected_mults decides at once), then guarded, made again after a value refresh. auto (default): K = 28000 where the merge kernel runs the matrix (power-law rows) and its 28000 most used columns hold at least 4M nonzeros, 16 per row that has any (Kronecker-like graphs: 1.3-1.6x cuSPARSE; Chung-Lu graphs gain too little); off; or K (1-28000), always. The split frees the whole matrix's plain cold CSR on the device, except for a matrix that runs dense products (MatMatMult), which keeps it: their SpMM times the split's own way beside the whole matrix's", "", v.hub, v.hub, sizeof v.hub, &v.has_hub));
  PetscOptionsHeadEnd();
  PetscCall(MatXtractOptionValuesApply(A, &v, set, changed));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The same options read straight from the database (no -help text), for conversions: MatConvert
 * to matxtract does not call MatSetFromOptions, yet -mat_matxtract_* must apply to it too. */
PetscErrorCode MatXtractSettingsFromDatabase(Mat A, MatXtractSettings *set)
{
  PetscOptions          db = ((PetscObject)A)->options;
  const char           *prefix;
  MatXtractOptionValues v;
  PetscBool             changed;

  PetscFunctionBegin;
  PetscCall(MatGetOptionsPrefix(A, &prefix));
  PetscCall(MatXtractOptionValuesInit(set, &v));
  PetscCall(PetscOptionsGetRealArray(db, prefix, "-mat_matxtract_crux", v.crux, &v.ncrux, &v.has_crux));
  PetscCall(PetscOptionsGetEList(db, prefix, "-mat_matxtract_mode", MatXtractModeNames, 3, &v.mode, &v.has_mode));
  PetscCall(PetscOptionsGetEList(db, prefix, "-mat_matxtract_device", MatXtractDeviceNames, 3, &v.device, &v.has_device));
  PetscCall(PetscOptionsGetEList(db, prefix, "-mat_matxtract_cold", MatXtractColdNames, 5, &v.cold, &v.has_cold));
  PetscCall(PetscOptionsGetBool(db, prefix, "-mat_matxtract_predictor", &v.predictor, &v.has_predictor));
  PetscCall(PetscOptionsGetString(db, prefix, "-mat_matxtract_model", v.model, sizeof v.model, &v.has_model));
  PetscCall(PetscOptionsGetEList(db, prefix, "-mat_matxtract_upgrade", MatXtractUpgradeNames, 3, &v.upgrade, &v.has_upgrade));
  PetscCall(PetscOptionsGetInt(db, prefix, "-mat_matxtract_expected_mults", &v.expected_mults, &v.has_expected_mults));
  PetscCall(PetscOptionsGetBool(db, prefix, "-mat_matxtract_guard", &v.guard, &v.has_guard));
  PetscCall(PetscOptionsGetEList(db, prefix, "-mat_matxtract_compress", MatXtractCompressNames, 3, &v.compress, &v.has_compress));
  PetscCall(PetscOptionsGetString(db, prefix, "-mat_matxtract_hub", v.hub, sizeof v.hub, &v.has_hub));
  PetscCall(MatXtractOptionValuesApply(A, &v, set, &changed));
  PetscFunctionReturn(PETSC_SUCCESS);
}
