/* matxtract_mpi.c - MATMPIAIJMATXTRACT: MPIAIJ with both local blocks in the MatXtract format.
 *
 * The Mat ops: MatMult overlaps the ghost exchange with the diagonal-block product, as MPIAIJ's
 * does; the ghost side (exchange, off-diagonal rows and products) is matxtract_ghosts.c's. The block
 * ops are called through their ops tables and check their own state, so stale shadows are
 * impossible. The diagonal block (Ad) gets the user's settings; the off-diagonal block (Ao) is all
 * cold (crux (0,0)): it is thin and its columns are ghost indices. On several ranks the blocks weigh
 * their levers only every -mat_matxtract_lever_period MatMults, the same MatMults on every rank. */
#include "matxtract_impl.h"
#include <petscdevice.h>


/* Ad: user settings (the predictor included); Ao (and Aoc): the cold settings. Converts blocks
 * MPIAIJ (re)created. */
static PetscErrorCode MatXtractMPIConvertBlocks(Mat A)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;
  MatXtractSettings    cold;
  Mat                  Ad, Ao;
  PetscBool            ours;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  MatXtractMPIColdSettings(&m->set, &cold);
  if (m->Aoc) {
    PetscCall(MatXtractSetSettings_SeqAIJ(m->Aoc, &cold));
    PetscCall(MatXtractSetLeverPeriod_SeqAIJ(m->Aoc, m->lever_period));
  }
  if (Ad) {
    PetscCall(PetscObjectTypeCompare((PetscObject)Ad, MATSEQAIJMATXTRACT, &ours));
    if (!ours) PetscCall(MatConvert_SeqAIJ_SeqAIJMatXtract(Ad, MATSEQAIJMATXTRACT, MAT_INPLACE_MATRIX, &Ad));
    PetscCall(MatXtractSetSettings_SeqAIJ(Ad, &m->set));
    PetscCall(MatXtractSetLeverPeriod_SeqAIJ(Ad, m->lever_period));
  }
  if (Ao) {
    PetscCall(PetscObjectTypeCompare((PetscObject)Ao, MATSEQAIJMATXTRACT, &ours));
    if (!ours) PetscCall(MatConvert_SeqAIJ_SeqAIJMatXtract(Ao, MATSEQAIJMATXTRACT, MAT_INPLACE_MATRIX, &Ao));
    /* MPIAIJ may compact Ao's columns in place at assembly: its shadow checks them, and is rebuilt
     * only when they (or its pattern) changed, else its values are refreshed */
    PetscCall(MatXtractSetSettings_SeqAIJ(Ao, &cold));
    PetscCall(MatXtractSetLeverPeriod_SeqAIJ(Ao, m->lever_period));
    PetscCall(MatXtractSetVerifyColumns_SeqAIJ(Ao));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMPIAIJSetPreallocation_MPIAIJMatXtract(Mat A, PetscInt d_nz, const PetscInt d_nnz[], PetscInt o_nz, const PetscInt o_nnz[])
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;

  PetscFunctionBegin;
  PetscCall((*m->preallocation)(A, d_nz, d_nnz, o_nz, o_nnz));
  PetscCall(MatXtractMPIConvertBlocks(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAssemblyEnd_MPIAIJMatXtract(Mat A, MatAssemblyType mode)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;

  PetscFunctionBegin;
  PetscCall((*m->assemblyend)(A, mode));
  if (mode == MAT_FINAL_ASSEMBLY) PetscCall(MatXtractMPIConvertBlocks(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = Ad x_local + Ao x_ghost (+ z): the ghost exchange overlaps the diagonal-block product. */
static PetscErrorCode MatMultAdd_MPIAIJMatXtract(Mat A, Vec xx, Vec zz, Vec yy)
{
  Mat Ad;

  PetscFunctionBegin;
  PetscCheck(!A->structure_only, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "matxtract: a structure-only matrix (MAT_STRUCTURE_ONLY) has no values to multiply");
  PetscCall(MatXtractMPIGhostsSync(A));
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, NULL, NULL));
  PetscCall(MatXtractMPIGhostsBegin(A, xx));
  if (zz) PetscCall((*Ad->ops->multadd)(Ad, xx, zz, yy));
  else PetscCall((*Ad->ops->mult)(Ad, xx, yy));
  PetscCall(MatXtractMPIGhostsEnd(A, xx));
  PetscCall(MatXtractMPIGhostMultAdd(A, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_MPIAIJMatXtract(Mat A, Vec xx, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatMultAdd_MPIAIJMatXtract(A, xx, NULL, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = Ad' x (+ z), and the ghost contributions Ao' x added by their owners (returned while Ad' x
 * runs where the exchange allows it). */
static PetscErrorCode MatMultTransposeAdd_MPIAIJMatXtract(Mat A, Vec xx, Vec zz, Vec yy)
{
  Mat Ad;

  PetscFunctionBegin;
  PetscCheck(!A->structure_only, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "matxtract: a structure-only matrix (MAT_STRUCTURE_ONLY) has no values to multiply");
  PetscCall(MatXtractMPIGhostsSync(A));
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, NULL, NULL));
  PetscCall(MatXtractMPIGhostMultTranspose(A, xx));
  PetscCall(MatXtractMPIGhostsReturnBegin(A, xx));
  if (zz) PetscCall((*Ad->ops->multtransposeadd)(Ad, xx, zz, yy));
  else PetscCall((*Ad->ops->multtranspose)(Ad, xx, yy));
  PetscCall(MatXtractMPIGhostsReturnEnd(A, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTranspose_MPIAIJMatXtract(Mat A, Vec xx, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatMultTransposeAdd_MPIAIJMatXtract(A, xx, NULL, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_MPIAIJMatXtract(Mat A, PetscOptionItems *PetscOptionsObject)
{
  Mat_MPIAIJMatXtract *m          = (Mat_MPIAIJMatXtract *)A->spptr;
  PetscInt             ghost_rows = m->ghost_rows, period = m->lever_period;
  PetscBool            changed;

  PetscFunctionBegin;
  if (m->setfromoptions) PetscCall((*m->setfromoptions)(A, PetscOptionsObject));
  PetscCall(MatXtractSettingsFromOptions(A, PetscOptionsObject, &m->set, &changed));
  PetscOptionsHeadBegin(PetscOptionsObject, "MATMPIAIJMATXTRACT options");
  PetscCall(PetscOptionsEList("-mat_matxtract_ghost_exchange", "How MatMult's ghost values travel: vecscatter (PETSc's VecScatter, host-staged without a CUDA-aware MPI) or nccl (ncclSend/ncclRecv between the ranks' GPUs, on a stream of its own beside the diagonal block's product; needs NCCL at build time, PETSc with CUDA, device vectors and one GPU per rank; the transpose products send the ghosts' partial sums back the same way)", "", MatXtractExchangeNames, 2, MatXtractExchangeNames[m->exchange], &m->exchange, NULL));
  PetscCall(PetscOptionsEList("-mat_matxtract_ghost_rows", "Which rows of the off-diagonal block (the ghost columns' block) the products run: auto (only the rows with ghost columns, added into y at their rows, when at least 60% of the rows have none: PETSc's own rule for compressed rows), compressed (always only those rows) or all", "", MatXtractGhostRowsNames, 3, MatXtractGhostRowsNames[m->ghost_rows], &m->ghost_rows, NULL));
  PetscCall(PetscOptionsBoundedInt("-mat_matxtract_lever_period", "On several ranks, the blocks weigh their levers (prediction, packing, row patterns, hub split) only every N-th MatMult, the same MatMults on every rank: ranks whose levers come due in the same N MatMults apply them in the same MatMult and wait for each other once, a lever waiting at most N - 1 MatMults (1: every MatMult, as on one rank)", "", period, &period, NULL, 1));
  PetscOptionsHeadEnd();
  if (m->ghost_rows != ghost_rows) m->ao_src = NULL; /* decided again at the next product */
  if (period != m->lever_period) changed = PETSC_TRUE;
  m->lever_period = period;
  if (changed && A->preallocated) PetscCall(MatXtractMPIConvertBlocks(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatXtractSetCrux_MPIAIJ(Mat A, PetscReal tau_c, PetscReal tau_r)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;

  PetscFunctionBegin;
  PetscCall(MatXtractSettingsSetCrux(A, &m->set, tau_c, tau_r, MATXTRACT_CRUX_USER));
  if (A->preallocated) PetscCall(MatXtractMPIConvertBlocks(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Info of this rank's diagonal block. */
static PetscErrorCode MatXtractGetInfo_MPIAIJ(Mat A, MatXtractInfo *info)
{
  Mat Ad;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, NULL, NULL));
  PetscCheck(Ad, PetscObjectComm((PetscObject)A), PETSC_ERR_ORDER, "matxtract: MatXtractGetInfo needs a preallocated matrix");
  PetscCall(MatXtractGetInfo(Ad, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_MPIAIJMatXtract(Mat A, PetscViewer viewer)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;
  PetscBool            ascii;
  PetscViewerFormat    format;
  Mat                  Ad;

  PetscFunctionBegin;
  PetscCall((*m->view)(A, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii || !A->assembled) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (format != PETSC_VIEWER_ASCII_INFO_DETAIL) PetscFunctionReturn(PETSC_SUCCESS); /* ::ascii_info stays MPIAIJ's */
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, NULL, NULL));
  PetscCall(MatXtractMPIGhostsView(A, viewer));
  PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: the blocks weigh their levers every %" PetscInt_FMT " MatMults, the same on every rank (-mat_matxtract_lever_period)\n", m->lever_period));
  {
    PetscViewer sub;
    PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: diagonal block of rank 0:\n"));
    PetscCall(PetscViewerGetSubViewer(viewer, PETSC_COMM_SELF, &sub));
    if (!PetscGlobalRank) PetscCall(MatXtractViewInfo_SeqAIJ(Ad, sub));
    PetscCall(PetscViewerRestoreSubViewer(viewer, PETSC_COMM_SELF, &sub));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_MPIAIJMatXtract_MPIAIJ(Mat, MatType, MatReuse, Mat *);

static PetscErrorCode MatXtractMPIComposeAll(Mat A, PetscBool on)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMPIAIJSetPreallocation_C", on ? MatMPIAIJSetPreallocation_MPIAIJMatXtract : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatXtractSetCrux_C", on ? MatXtractSetCrux_MPIAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatXtractGetInfo_C", on ? MatXtractGetInfo_MPIAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpiaij_mpiaijmatxtract_C", on ? MatConvert_MPIAIJ_MPIAIJMatXtract : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpiaij_matxtract_C", on ? MatConvert_MPIAIJ_MPIAIJMatXtract : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpiaijmatxtract_mpiaij_C", on ? MatConvert_MPIAIJMatXtract_MPIAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_anytype_C", on ? MatProductSetFromOptions_MatXtract : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_mpiaijmatxtract_mpidense_C", on ? MatProductSetFromOptions_MatXtract_Dense : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_mpiaijmatxtract_mpidensecuda_C", on ? MatProductSetFromOptions_MatXtract_Dense : NULL));
  PetscCall(MatXtractComposeConverters(A, "mpi", on));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_MPIAIJMatXtract(Mat A)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;
  PetscErrorCode (*base_destroy)(Mat) = m->destroy;

  PetscFunctionBegin;
  PetscCall(MatXtractMPIComposeAll(A, PETSC_FALSE));
  PetscCall(MatXtractSettingsDestroy(&m->set));
  PetscCall(MatXtractMPIGhostsFree(A));
  PetscCall(PetscFree(A->spptr));
  PetscCall((*base_destroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDuplicate_MPIAIJMatXtract(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;

  PetscFunctionBegin;
  PetscCall((*m->duplicate)(A, op, B)); /* sets our type on *B, duplicates our blocks */
  PetscCall(MatXtractSettingsCopy(&m->set, &((Mat_MPIAIJMatXtract *)(*B)->spptr)->set));
  PetscCall(MatXtractMPIConvertBlocks(*B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -mat_matxtract_lever_period as the options database gives it (MatConvert calls no
 * MatSetFromOptions): default MATXTRACT_MPI_LEVER_PERIOD on several ranks, 1 on one. */
static PetscErrorCode MatXtractMPILeverPeriodFromDatabase(Mat A, PetscInt *period)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  *period = size > 1 ? MATXTRACT_MPI_LEVER_PERIOD : 1;
  PetscCall(PetscOptionsGetInt(((PetscObject)A)->options, ((PetscObject)A)->prefix, "-mat_matxtract_lever_period", period, NULL));
  PetscCheck(*period >= 1, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_matxtract_lever_period %" PetscInt_FMT ": need N >= 1 (1: every MatMult)", *period);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatConvert_MPIAIJ_MPIAIJMatXtract(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat                  B = *newmat;
  Mat_MPIAIJMatXtract *m;
  MatXtractSettings    set;
  PetscInt             period;
  PetscErrorCode       ierr;

  PetscFunctionBegin;
  PetscCall(MatXtractConvertBegin(A, reuse, &B));
  if (B->spptr) PetscFunctionReturn(PETSC_SUCCESS); /* already ours */
  PetscCall(MatXtractConvertSettings(&B, reuse, &set));
  ierr = MatXtractMPILeverPeriodFromDatabase(B, &period);
  if (ierr) {
    PetscCall(MatXtractSettingsDestroy(&set));
    if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDestroy(&B));
  }
  PetscCall(ierr);

  PetscCall(PetscNew(&m));
  B->spptr        = m;
  m->set          = set; /* takes set's model reference */
  m->lever_period = period;
  PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatMPIAIJSetPreallocation_C", &m->preallocation));
  PetscCheck(m->preallocation, PetscObjectComm((PetscObject)A), PETSC_ERR_PLIB, "matxtract: MPIAIJ preallocation function not found");
  m->assemblyend         = B->ops->assemblyend;
  m->destroy             = B->ops->destroy;
  m->duplicate           = B->ops->duplicate;
  m->view                = B->ops->view;
  m->setfromoptions      = B->ops->setfromoptions;
  m->mult                = B->ops->mult;
  m->multadd             = B->ops->multadd;
  m->multtranspose       = B->ops->multtranspose;
  m->multtransposeadd    = B->ops->multtransposeadd;
  B->ops->assemblyend    = MatAssemblyEnd_MPIAIJMatXtract;
  B->ops->destroy        = MatDestroy_MPIAIJMatXtract;
  B->ops->duplicate      = MatDuplicate_MPIAIJMatXtract;
  B->ops->view           = MatView_MPIAIJMatXtract;
  B->ops->setfromoptions   = MatSetFromOptions_MPIAIJMatXtract;
  B->ops->mult             = MatMult_MPIAIJMatXtract;
  B->ops->multadd          = MatMultAdd_MPIAIJMatXtract;
  B->ops->multtranspose    = MatMultTranspose_MPIAIJMatXtract;
  B->ops->multtransposeadd = MatMultTransposeAdd_MPIAIJMatXtract;
  PetscCall(MatXtractMPIComposeAll(B, PETSC_TRUE));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATMPIAIJMATXTRACT));
  PetscCall(MatXtractSetDefaultVecType(B, MatXtractSettingsWantDevice(&m->set)));
  if (B->preallocated) PetscCall(MatXtractMPIConvertBlocks(B));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Back to MPIAIJ: the blocks back to SeqAIJ, MPIAIJ's ops, no shadow. */
static PetscErrorCode MatConvert_MPIAIJMatXtract_MPIAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat                  B = *newmat, Ad, Ao;
  Mat_MPIAIJMatXtract *m;
  PetscBool            ours, done;

  PetscFunctionBegin;
  PetscCall(MatXtractConvertBackBegin(A, reuse, &B, &done));
  if (done) PetscFunctionReturn(PETSC_SUCCESS); /* values into the AIJ of an earlier MatConvert */
  m = (Mat_MPIAIJMatXtract *)B->spptr;
  PetscCall(MatXtractMPIComposeAll(B, PETSC_FALSE));
  PetscCall(MatXtractSettingsDestroy(&m->set));
  PetscCall(MatXtractMPIGhostsFree(B));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatMPIAIJSetPreallocation_C", m->preallocation));
  B->ops->assemblyend      = m->assemblyend;
  B->ops->destroy          = m->destroy;
  B->ops->duplicate        = m->duplicate;
  B->ops->view             = m->view;
  B->ops->setfromoptions   = m->setfromoptions;
  B->ops->mult             = m->mult;
  B->ops->multadd          = m->multadd;
  B->ops->multtranspose    = m->multtranspose;
  B->ops->multtransposeadd = m->multtransposeadd;
  PetscCall(PetscFree(B->spptr));
  if (B->preallocated) {
    PetscCall(MatMPIAIJGetSeqAIJ(B, &Ad, &Ao, NULL));
    PetscCall(PetscObjectTypeCompare((PetscObject)Ad, MATSEQAIJMATXTRACT, &ours));
    if (ours) PetscCall(MatConvert_SeqAIJMatXtract_SeqAIJ(Ad, MATSEQAIJ, MAT_INPLACE_MATRIX, &Ad));
    PetscCall(PetscObjectTypeCompare((PetscObject)Ao, MATSEQAIJMATXTRACT, &ours));
    if (ours) PetscCall(MatConvert_SeqAIJMatXtract_SeqAIJ(Ao, MATSEQAIJ, MAT_INPLACE_MATRIX, &Ao));
  }
  PetscCall(PetscFree(B->defaultvectype));
  PetscCall(PetscStrallocpy(VECSTANDARD, &B->defaultvectype));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATMPIAIJ));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCreate_MPIAIJMatXtract(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATMPIAIJ));
  PetscCall(MatConvert_MPIAIJ_MPIAIJMatXtract(A, MATMPIAIJMATXTRACT, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(PETSC_SUCCESS);
}
