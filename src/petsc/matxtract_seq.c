/* matxtract_seq.c - MATSEQAIJMATXTRACT: SeqAIJ with a MatXtract hot/cold shadow used by MatMult.
 *
 * Pattern (as PETSc's AIJSELL): create SeqAIJ, save the AIJ ops we override, install ours, and call
 * the saved ones. AIJ remains the master copy; the shadow (host format, plus device copy on a GPU)
 * is made to match it by MatXtractSync_SeqAIJ (the engine's one state check) before every product,
 * so nothing stale is ever used:
 *   - MatAssemblyEnd(FINAL) syncs eagerly (the expensive conversion happens at assembly); a
 *     MatConvert from AIJ builds at the first product instead (MatConvert raises the state after);
 *   - MatScale/MatShift/MatZeroEntries/MatCopy/MatAXPY change values without an assembly: the
 *     next product sees a new object state and refreshes values through the gather map;
 *   - a new nonzero pattern (nonzerostate) rebuilds the format.
 * The ops here are thin: the plan engine (matxtract_engine.c) decides, the shadow
 * (matxtract_shadow.c) builds and runs, matxtract_view.c tells. */
#include "matxtract_impl.h"

static PetscErrorCode MatXtractInstallOps(Mat A);
static void           MatXtractInstallProductOps(Mat A);

/* Products need values: a structure-only matrix (MAT_STRUCTURE_ONLY) has none and builds no format. */
static PetscErrorCode MatXtractCheckHasValues(Mat A)
{
  PetscFunctionBegin;
  PetscCheck(!A->structure_only, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "matxtract: a structure-only matrix (MAT_STRUCTURE_ONLY) has no values to multiply");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A xx (+ zz) on a synced shadow, after one step of the plan engine (a lever may be applied). */
static PetscErrorCode MatXtractMult(Mat A, Vec xx, Vec zz, Vec yy)
{
  PetscLogDouble cpu_seconds;

  PetscFunctionBegin;
  PetscCall(MatXtractCheckHasValues(A));
  PetscCall(MatXtractSync_SeqAIJ(A));
  PetscCall(MatXtractEngineBeforeMult(A));
  PetscCall(MatXtractShadowApply(A, PETSC_FALSE, xx, zz, yy, &cpu_seconds));
  PetscCall(MatXtractEngineAfterMult(A, cpu_seconds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_SeqAIJMatXtract(Mat A, Vec xx, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatXtractMult(A, xx, NULL, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultAdd_SeqAIJMatXtract(Mat A, Vec xx, Vec zz, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatXtractMult(A, xx, zz, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTranspose_SeqAIJMatXtract(Mat A, Vec xx, Vec yy)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  PetscLogDouble cpu_seconds; /* not counted: the plan is chosen for A x */

  PetscFunctionBegin;
  PetscCall(MatXtractCheckHasValues(A));
  PetscCall(MatXtractSync_SeqAIJ(A));
  if (x->D) PetscCall(MatXtractShadowSyncTranspose(A));
  if (x->D && !x->Dt) PetscCall((*x->base.multtranspose)(A, xx, yy)); /* A^T's GPU build failed under auto; F is device-only */
  else PetscCall(MatXtractShadowApply(A, PETSC_TRUE, xx, NULL, yy, &cpu_seconds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTransposeAdd_SeqAIJMatXtract(Mat A, Vec xx, Vec zz, Vec yy)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  PetscLogDouble cpu_seconds; /* not counted: the plan is chosen for A x */

  PetscFunctionBegin;
  PetscCall(MatXtractCheckHasValues(A));
  PetscCall(MatXtractSync_SeqAIJ(A));
  if (x->D) PetscCall(MatXtractShadowSyncTranspose(A));
  if (x->D && !x->Dt) PetscCall((*x->base.multtransposeadd)(A, xx, zz, yy)); /* A^T's GPU build failed under auto; F is device-only */
  else PetscCall(MatXtractShadowApply(A, PETSC_TRUE, xx, zz, yy, &cpu_seconds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAssemblyEnd_SeqAIJMatXtract(Mat A, MatAssemblyType mode)
{
  Mat_MatXtract   *x = (Mat_MatXtract *)A->spptr;
  PetscObjectState state;

  PetscFunctionBegin;
  PetscCall((*x->base.assemblyend)(A, mode));
  MatXtractInstallProductOps(A); /* AIJ's assembly may reinstall its own (inode) products; the other ops stay as
                                   PETSc left them (a submatrix's destroy, MatCreateSubMatrices') */
  if (mode == MAT_FLUSH_ASSEMBLY || x->lazy) PetscFunctionReturn(PETSC_SUCCESS); /* lazy: the next product syncs */
  PetscCall(MatXtractSync_SeqAIJ(A));
  /* MatAssemblyEnd() increases the object state once after this returns: the shadow already
   * holds the values of that state. */
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  x->state = state + 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDuplicate_SeqAIJMatXtract(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  PetscCall((*x->base.duplicate)(A, op, B));
  /* AIJ's duplicate set the type (our create ran) and copied the arrays; settings follow, the
   * shadow is built lazily at B's first product. */
  if (!(*B)->spptr) PetscCall(MatConvert_SeqAIJ_SeqAIJMatXtract(*B, MATSEQAIJMATXTRACT, MAT_INPLACE_MATRIX, B));
  PetscCall(MatXtractSetSettings_SeqAIJ(*B, &x->set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_SeqAIJMatXtract(Mat A, PetscViewer viewer)
{
  Mat_MatXtract    *x = (Mat_MatXtract *)A->spptr;
  PetscBool         ascii;
  PetscViewerFormat format;

  PetscFunctionBegin;
  if (x->base.view) PetscCall((*x->base.view)(A, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii || !A->assembled) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (format == PETSC_VIEWER_ASCII_INFO_DETAIL) PetscCall(MatXtractViewInfo_SeqAIJ(A, viewer)); /* ::ascii_info stays AIJ's */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_SeqAIJMatXtract(Mat A, PetscOptionItems *PetscOptionsObject)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  PetscBool      changed;

  PetscFunctionBegin;
  if (x->base.setfromoptions) PetscCall((*x->base.setfromoptions)(A, PetscOptionsObject));
  PetscCall(MatXtractSettingsFromOptions(A, PetscOptionsObject, &x->set, &changed));
  if (changed) x->built = PETSC_FALSE; /* rebuilt at the next assembly or product */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Settings from the MPI type or a duplicate; different settings rebuild the shadow at the next
 * product. */
PetscErrorCode MatXtractSetSettings_SeqAIJ(Mat A, const MatXtractSettings *set)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  if (!MatXtractSettingsEqual(&x->set, set)) x->built = PETSC_FALSE;
  PetscCall(MatXtractSettingsCopy(set, &x->set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A is a block whose column indices MPIAIJ may renumber in place without a new nonzero state (the
 * off-diagonal block at assembly): a value change then rebuilds only if its columns changed. */
PetscErrorCode MatXtractSetVerifyColumns_SeqAIJ(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  if (!x->verify_columns) x->built = PETSC_FALSE; /* the next build records the fingerprint */
  x->verify_columns = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* lazy: A builds its format at its first product, never at assembly; becoming lazy drops the
 * format it has (the MPI type's off-diagonal block once its rows with ghost columns run the products
 * as a matrix of their own: the block's own format is then made only for a product that uses it, as
 * MatMatMult with dense, and kept). */
PetscErrorCode MatXtractSetLazy_SeqAIJ(Mat A, PetscBool lazy)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  if (lazy && !x->lazy && x->built) {
    PetscCall(MatXtractShadowFree(x));
    x->built = PETSC_FALSE;
  }
  x->lazy = lazy;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* period > 1: A's levers are weighed only before its products 0, period, 2 period, ... (the MPI
 * type's blocks: every rank makes every MatMult, so ranks whose levers come due in the same period
 * apply them in the same MatMult and wait for each other once); 1: before every product. */
PetscErrorCode MatXtractSetLeverPeriod_SeqAIJ(Mat A, PetscInt period)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  PetscCheck(period >= 1, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "matxtract: lever period %" PetscInt_FMT ": need >= 1", period);
  x->lever_period = period;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether A's products run on the GPU (its format synced first: made if it is not). */
PetscErrorCode MatXtractOnDevice_SeqAIJ(Mat A, PetscBool *on)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  PetscCall(MatXtractCheckHasValues(A));
  PetscCall(MatXtractSync_SeqAIJ(A));
  *on = (PetscBool)(x->D != NULL);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatXtractSetCrux_SeqAIJ(Mat A, PetscReal tau_c, PetscReal tau_r)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  PetscCall(MatXtractSettingsSetCrux(A, &x->set, tau_c, tau_r, MATXTRACT_CRUX_USER));
  x->built = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatXtractComposeAll(Mat A, PetscBool on)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaijmatxtract_seqaij_C", on ? MatConvert_SeqAIJMatXtract_SeqAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_seqaijmatxtract_C", on ? MatConvert_SeqAIJ_SeqAIJMatXtract : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_matxtract_C", on ? MatConvert_SeqAIJ_SeqAIJMatXtract : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatXtractSetCrux_C", on ? MatXtractSetCrux_SeqAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatXtractGetInfo_C", on ? MatXtractGetInfo_SeqAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_anytype_C", on ? MatProductSetFromOptions_MatXtract : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_seqaijmatxtract_seqdense_C", on ? MatProductSetFromOptions_MatXtract_Dense : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_seqaijmatxtract_seqdensecuda_C", on ? MatProductSetFromOptions_MatXtract_Dense : NULL));
  PetscCall(MatXtractComposeConverters(A, "seq", on));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_SeqAIJMatXtract(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  PetscErrorCode (*base_destroy)(Mat) = x->base.destroy;

  PetscFunctionBegin;
  PetscCall(MatXtractShadowFree(x));
  PetscCall(MatXtractSettingsDestroy(&x->set));
  PetscCall(MatXtractComposeAll(A, PETSC_FALSE));
  PetscCall(PetscFree(A->spptr));
  PetscCall((*base_destroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* In-place factorizations (MatLUFactor, MatILUFactor, MatCholeskyFactor, MatICCFactor) turn A into
 * a factor: AIJ's replace A's data (MatHeaderMerge keeps A's ops and type name, not its spptr), and
 * a factor has no products for the shadow to serve. So A becomes plain SeqAIJ first (shadow freed,
 * AIJ's ops back), then AIJ factors it: every op and the destroy stay AIJ's. */
static PetscErrorCode MatXtractToAIJForFactor(Mat A)
{
  PetscFunctionBegin;
  PetscCall(PetscInfo(A, "matxtract: in-place factorization: the matrix becomes %s first\n", MATSEQAIJ));
  PetscCall(MatConvert_SeqAIJMatXtract_SeqAIJ(A, MATSEQAIJ, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatLUFactor_SeqAIJMatXtract(Mat A, IS row, IS col, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(MatXtractToAIJForFactor(A));
  PetscCall((*A->ops->lufactor)(A, row, col, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatILUFactor_SeqAIJMatXtract(Mat A, IS row, IS col, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(MatXtractToAIJForFactor(A));
  PetscCall((*A->ops->ilufactor)(A, row, col, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCholeskyFactor_SeqAIJMatXtract(Mat A, IS perm, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(MatXtractToAIJForFactor(A));
  PetscCall((*A->ops->choleskyfactor)(A, perm, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatICCFactor_SeqAIJMatXtract(Mat A, IS row, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(MatXtractToAIJForFactor(A));
  PetscCall((*A->ops->iccfactor)(A, row, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Our products over AIJ's. */
static void MatXtractInstallProductOps(Mat A)
{
  A->ops->mult             = MatMult_SeqAIJMatXtract;
  A->ops->multadd          = MatMultAdd_SeqAIJMatXtract;
  A->ops->multtranspose    = MatMultTranspose_SeqAIJMatXtract;
  A->ops->multtransposeadd = MatMultTransposeAdd_SeqAIJMatXtract;
}

static PetscErrorCode MatXtractInstallOps(Mat A)
{
  PetscFunctionBegin;
  MatXtractInstallProductOps(A);
  A->ops->assemblyend      = MatAssemblyEnd_SeqAIJMatXtract;
  A->ops->destroy          = MatDestroy_SeqAIJMatXtract;
  A->ops->duplicate        = MatDuplicate_SeqAIJMatXtract;
  A->ops->view             = MatView_SeqAIJMatXtract;
  A->ops->setfromoptions   = MatSetFromOptions_SeqAIJMatXtract;
  if (A->ops->lufactor) A->ops->lufactor = MatLUFactor_SeqAIJMatXtract;
  if (A->ops->ilufactor) A->ops->ilufactor = MatILUFactor_SeqAIJMatXtract;
  if (A->ops->choleskyfactor) A->ops->choleskyfactor = MatCholeskyFactor_SeqAIJMatXtract;
  if (A->ops->iccfactor) A->ops->iccfactor = MatICCFactor_SeqAIJMatXtract;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatConvert_SeqAIJ_SeqAIJMatXtract(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat               B = *newmat;
  Mat_MatXtract    *x;
  MatXtractSettings set;

  PetscFunctionBegin;
  PetscCall(MatXtractConvertBegin(A, reuse, &B));
  if (B->spptr) PetscFunctionReturn(PETSC_SUCCESS); /* already ours (duplicate of a matxtract) */
  PetscCall(MatXtractConvertSettings(&B, reuse, &set));

  PetscCall(PetscNew(&x));
  x->set                   = set; /* takes set's model reference */
  B->spptr                 = x;
  x->base.assemblyend      = B->ops->assemblyend;
  x->base.destroy          = B->ops->destroy;
  x->base.duplicate        = B->ops->duplicate;
  x->base.view             = B->ops->view;
  x->base.setfromoptions   = B->ops->setfromoptions;
  x->base.mult             = B->ops->mult;
  x->base.multadd          = B->ops->multadd;
  x->base.multtranspose    = B->ops->multtranspose;
  x->base.multtransposeadd = B->ops->multtransposeadd;
  x->base.lufactor         = B->ops->lufactor;
  x->base.ilufactor        = B->ops->ilufactor;
  x->base.choleskyfactor   = B->ops->choleskyfactor;
  x->base.iccfactor        = B->ops->iccfactor;
  PetscCall(MatXtractInstallOps(B));
  PetscCall(MatXtractComposeAll(B, PETSC_TRUE));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQAIJMATXTRACT));
  PetscCall(MatXtractSetDefaultVecType(B, MatXtractSettingsWantDevice(&x->set)));
  /* no build here: MatConvert raises the object state after this returns, so a shadow built now
   * would be refreshed (all values copied again) at the first product; MatMult, MatView or
   * MatXtractGetInfo build it (as aijcusparse uploads at its first product) */
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatConvert_SeqAIJMatXtract_SeqAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat            B = *newmat;
  Mat_MatXtract *x;
  PetscBool      done;

  PetscFunctionBegin;
  PetscCall(MatXtractConvertBackBegin(A, reuse, &B, &done));
  if (done) PetscFunctionReturn(PETSC_SUCCESS); /* values into the AIJ of an earlier MatConvert */
  x = (Mat_MatXtract *)B->spptr;
  PetscCall(MatXtractShadowFree(x));
  PetscCall(MatXtractSettingsDestroy(&x->set));
  PetscCall(MatXtractComposeAll(B, PETSC_FALSE));
  B->ops->assemblyend    = x->base.assemblyend;
  B->ops->destroy        = x->base.destroy;
  B->ops->duplicate      = x->base.duplicate;
  B->ops->view           = x->base.view;
  B->ops->setfromoptions   = x->base.setfromoptions;
  B->ops->mult             = x->base.mult;
  B->ops->multadd          = x->base.multadd;
  B->ops->multtranspose    = x->base.multtranspose;
  B->ops->multtransposeadd = x->base.multtransposeadd;
  B->ops->lufactor         = x->base.lufactor;
  B->ops->ilufactor        = x->base.ilufactor;
  B->ops->choleskyfactor   = x->base.choleskyfactor;
  B->ops->iccfactor        = x->base.iccfactor;
  PetscCall(PetscFree(B->spptr));
  PetscCall(PetscFree(B->defaultvectype));
  PetscCall(PetscStrallocpy(VECSTANDARD, &B->defaultvectype));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQAIJ));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCreate_SeqAIJMatXtract(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATSEQAIJ));
  PetscCall(MatConvert_SeqAIJ_SeqAIJMatXtract(A, MATSEQAIJMATXTRACT, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(PETSC_SUCCESS);
}
