/* matxtract_product.c - MatProduct dispatch for the matxtract types (A*B, A^T*B, A*B^T, PtAP, RARt,
 * ABC with dense, MAIJ, AIJ and other types, in either order, seq and MPI).
 *
 * PETSc finds a mixed-type product by the operands' type names
 * ("MatProductSetFromOptions_<A>_<B>[_<C>]_C", queried on A, B, then C), so a product of a
 * seqaijmatxtract with, say, a seqdense finds nothing under our name, although the AIJ
 * implementation (composed under "seqaij") applies unchanged: AIJ is the master copy of our values.
 * Rule: PETSc calls MatProductSetFromOptions_MatXtract (composed as
 * "MatProductSetFromOptions_anytype_C") only after the lookup under our names found nothing; it
 * looks the product up again with every matxtract operand named by its AIJ base type and
 * delegates to what AIJ (or the other operand's type) composed there. Nothing found leaves the
 * product unset, and PETSc's own fallbacks (a dense B: one MatMult per column; triple products:
 * the basic composition) or its error apply, exactly as for AIJ.
 *
 * A matxtract matrix times a dense B (seqdense, seqdensecuda, mpidense, mpidensecuda), A B and A' B,
 * is ours (issue 43): on the CPU path the host format's SpMM (every column bit for bit the MatMult of
 * that column); on the GPU the device SpMM (mx_device_spmm: its kernels, or one SpMV per column
 * where its rule says so) on the dense arrays where they live (a seqdensecuda's stay on the device);
 * on several ranks both on each rank's blocks, the ghost rows of B moved by a VecScatter per column.
 * C takes B's dense type unless it has a dense type already; k = 0, lda > rows and a reused C are
 * PETSc's dense semantics. The other products with dense (A B', PtAP, RARt) are AIJ's, as above. */
#include "matxtract_impl.h"

/* The type name under which PETSc composes products for M: its AIJ base for ours. */
static PetscErrorCode MatXtractProductTypeName(Mat M, const char **name)
{
  PetscBool seq, mpi;

  PetscFunctionBegin;
  *name = ((PetscObject)M)->type_name;
  PetscCall(PetscStrcmp(*name, MATSEQAIJMATXTRACT, &seq));
  PetscCall(PetscStrcmp(*name, MATMPIAIJMATXTRACT, &mpi));
  if (seq) *name = MATSEQAIJ;
  if (mpi) *name = MATMPIAIJ;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatProductSetFromOptions_MatXtract(Mat D)
{
  Mat_Product *product = D->product;
  Mat          A, B, C;
  const char  *ta, *tb, *tc = "";
  char         name[256];
  PetscErrorCode (*f)(Mat) = NULL;

  PetscFunctionBegin;
  MatCheckProduct(D, 1);
  A = product->A;
  B = product->B;
  C = product->type == MATPRODUCT_ABC ? product->C : NULL;
  PetscCall(MatXtractProductTypeName(A, &ta));
  PetscCall(MatXtractProductTypeName(B, &tb));
  if (C) PetscCall(MatXtractProductTypeName(C, &tc));
  PetscCall(PetscSNPrintf(name, sizeof name, "MatProductSetFromOptions_%s_%s%s%s_C", ta, tb, C ? "_" : "", tc));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, name, &f));
  if (!f) PetscCall(PetscObjectQueryFunction((PetscObject)B, name, &f));
  if (!f && C) PetscCall(PetscObjectQueryFunction((PetscObject)C, name, &f));
  PetscCall(PetscInfo(D, "matxtract: product %s delegated to %s: %s\n", MatProductTypes[product->type], name, f ? "found" : "none (PETSc's fallback applies)"));
  if (f) PetscCall((*f)(D));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* C = A B, or A' B (transpose), for a seqaijmatxtract A, numeric (A synced first: new values or a new
 * pattern since the symbolic). */
static PetscErrorCode MatXtractDenseProductSeq(Mat A, Mat B, Mat C, PetscBool transpose)
{
  Mat_MatXtract *x;
  PetscInt       k;

  PetscFunctionBegin;
  PetscCheck(!A->structure_only, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "matxtract: a structure-only matrix (MAT_STRUCTURE_ONLY) has no values to multiply");
  PetscCall(MatXtractSync_SeqAIJ(A));
  x = (Mat_MatXtract *)A->spptr;
  if (!x->D) {
    PetscCall(MatXtractShadowApplyDenseCPU(A, transpose, B, C));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (transpose) PetscCall(MatXtractShadowSyncTranspose(A));
  if (!transpose || x->Dt) {
    PetscCall(MatXtractShadowApplyDenseGPU(A, transpose, B, C));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatGetSize(B, NULL, &k)); /* A' failed to build on the GPU under auto: AIJ's A' per column */
  for (PetscInt c = 0; c < k; c++) {
    Vec b, y;
    PetscCall(MatDenseGetColumnVecRead(B, c, &b));
    PetscCall(MatDenseGetColumnVecWrite(C, c, &y));
    PetscCall(MatMultTranspose(A, b, y));
    PetscCall(MatDenseRestoreColumnVecWrite(C, c, &y));
    PetscCall(MatDenseRestoreColumnVecRead(B, c, &b));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- mpiaijmatxtract x mpidense(cuda) ------------------------------------------------------------------
 * A = [Ad Ao] on each rank (Ao's columns the ghost columns garray). A B: the ghost rows of B gathered
 * column by column by a VecScatter into W (nghost x k), then C_local = Ad B_local + Ao W. A' B:
 * C_local = Ad' B_local, W = Ao' B_local, each column of W added to its owners by the reverse
 * scatter. The block products are the seq ones (the host or device SpMM); every dense block has
 * B's local type, so device columns stay on the device; all communication is PETSc's. */
typedef struct {
  VecScatter       ghosts; /* A's column layout -> Ao's ghost columns */
  Mat              W;      /* nghost x k */
  Mat              T;      /* A B: local rows x k, Ao W */
  PetscObjectState nzstate; /* A's nonzero state the above were made for */
} MatXtractMPIDense;

static PetscErrorCode MatXtractMPIDenseDestroy(void *ctx)
{
  MatXtractMPIDense *d = (MatXtractMPIDense *)ctx;

  PetscFunctionBegin;
  PetscCall(VecScatterDestroy(&d->ghosts));
  PetscCall(MatDestroy(&d->W));
  PetscCall(MatDestroy(&d->T));
  PetscCall(PetscFree(d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A seq dense block of m x k of the local type of the MPI dense B. */
static PetscErrorCode MatXtractLocalDense(Mat B, PetscInt m, Mat *W)
{
  Mat       Bl;
  PetscInt  k;
  PetscBool cuda;

  PetscFunctionBegin;
  PetscCall(MatGetSize(B, NULL, &k));
  PetscCall(MatDenseGetLocalMatrix(B, &Bl));
  PetscCall(PetscObjectTypeCompare((PetscObject)Bl, MATSEQDENSECUDA, &cuda));
  PetscCall(MatCreate(PETSC_COMM_SELF, W));
  PetscCall(MatSetSizes(*W, m, k, m, k));
  PetscCall(MatSetType(*W, cuda ? MATSEQDENSECUDA : MATSEQDENSE));
  PetscCall(MatSetUp(*W));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The scatter and work blocks for A's current pattern (made again when it changed). */
static PetscErrorCode MatXtractMPIDenseSetUp(Mat A, Mat B, PetscBool transpose, MatXtractMPIDense *d)
{
  const PetscInt *garray;
  Mat             Ad, Ao;
  PetscInt        nghost;
  IS              from;
  Vec             gx, lx;

  PetscFunctionBegin;
  if (d->ghosts && d->nzstate == A->nonzerostate) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecScatterDestroy(&d->ghosts));
  PetscCall(MatDestroy(&d->W));
  PetscCall(MatDestroy(&d->T));
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  PetscCall(MatGetLocalSize(Ao, NULL, &nghost));
  PetscCall(MatCreateVecs(A, &gx, NULL));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, nghost, &lx));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nghost, garray, PETSC_USE_POINTER, &from));
  PetscCall(VecScatterCreate(gx, from, lx, NULL, &d->ghosts));
  PetscCall(ISDestroy(&from));
  PetscCall(VecDestroy(&lx));
  PetscCall(VecDestroy(&gx));
  PetscCall(MatXtractLocalDense(B, nghost, &d->W));
  if (!transpose) PetscCall(MatXtractLocalDense(B, A->rmap->n, &d->T));
  d->nzstate = A->nonzerostate;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Column j of the MPI dense M moved between the global layout and the seq block W's column j. */
static PetscErrorCode MatXtractScatterColumn(VecScatter sc, Mat M, Mat W, PetscInt j, PetscBool reverse)
{
  Vec g, w;

  PetscFunctionBegin;
  if (!reverse) {
    PetscCall(MatDenseGetColumnVecRead(M, j, &g));
    PetscCall(MatDenseGetColumnVecWrite(W, j, &w));
    PetscCall(VecScatterBegin(sc, g, w, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(sc, g, w, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(MatDenseRestoreColumnVecWrite(W, j, &w));
    PetscCall(MatDenseRestoreColumnVecRead(M, j, &g));
  } else {
    PetscCall(MatDenseGetColumnVec(M, j, &g));
    PetscCall(MatDenseGetColumnVecRead(W, j, &w));
    PetscCall(VecScatterBegin(sc, w, g, ADD_VALUES, SCATTER_REVERSE));
    PetscCall(VecScatterEnd(sc, w, g, ADD_VALUES, SCATTER_REVERSE));
    PetscCall(MatDenseRestoreColumnVecRead(W, j, &w));
    PetscCall(MatDenseRestoreColumnVec(M, j, &g));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatXtractDenseProductMPI(Mat A, Mat B, Mat C, PetscBool transpose)
{
  MatXtractMPIDense *d;
  Mat                Ad, Ao, Bl, Cl;
  PetscInt           k, nghost;

  PetscFunctionBegin;
  PetscCheck(C->product && C->product->data, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB, "matxtract: the MPI dense product has no symbolic data");
  d = (MatXtractMPIDense *)C->product->data;
  PetscCall(MatXtractMPIDenseSetUp(A, B, transpose, d));
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  PetscCall(MatGetLocalSize(Ao, NULL, &nghost));
  PetscCall(MatGetSize(B, NULL, &k));
  PetscCall(MatDenseGetLocalMatrix(B, &Bl));
  PetscCall(MatDenseGetLocalMatrix(C, &Cl));
  if (!transpose) {
    for (PetscInt j = 0; j < k; j++) PetscCall(MatXtractScatterColumn(d->ghosts, B, d->W, j, PETSC_FALSE)); /* collective: every rank, ghosts or not */
    PetscCall(MatXtractDenseProductSeq(Ad, Bl, Cl, PETSC_FALSE));
    if (nghost > 0) {
      PetscCall(MatXtractDenseProductSeq(Ao, d->W, d->T, PETSC_FALSE));
      PetscCall(MatAXPY(Cl, 1.0, d->T, SAME_NONZERO_PATTERN));
    }
  } else {
    PetscCall(MatXtractDenseProductSeq(Ad, Bl, Cl, PETSC_TRUE));
    if (nghost > 0) PetscCall(MatXtractDenseProductSeq(Ao, Bl, d->W, PETSC_TRUE));
    for (PetscInt j = 0; j < k; j++) PetscCall(MatXtractScatterColumn(d->ghosts, C, d->W, j, PETSC_TRUE)); /* collective: every rank */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* C = A B, or A' B, for either matxtract type. */
static PetscErrorCode MatXtractDenseProduct(Mat A, Mat B, Mat C, PetscBool transpose)
{
  PetscBool mpi;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIAIJMATXTRACT, &mpi));
  if (mpi) PetscCall(MatXtractDenseProductMPI(A, B, C, transpose));
  else PetscCall(MatXtractDenseProductSeq(A, B, C, transpose));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The numeric ops under both of PETSc's conventions: the product's, and the (A, B, C) ones that its
 * composite products (PtAP and RARt without an implementation of their own) call on the parts. */
static PetscErrorCode MatProductNumeric_MatXtract_Dense(Mat C)
{
  Mat_Product *product = C->product;

  PetscFunctionBegin;
  PetscCall(MatXtractDenseProduct(product->A, product->B, C, (PetscBool)(product->type == MATPRODUCT_AtB)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMatMultNumeric_MatXtract_Dense(Mat A, Mat B, Mat C)
{
  PetscFunctionBegin;
  PetscCall(MatXtractDenseProduct(A, B, C, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatTransposeMatMultNumeric_MatXtract_Dense(Mat A, Mat B, Mat C)
{
  PetscFunctionBegin;
  PetscCall(MatXtractDenseProduct(A, B, C, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* C's sizes, and its type when it has no dense one: B's (device columns stay on the device); on
 * several ranks the scatter and work blocks of the MPI product. */
static PetscErrorCode MatProductSymbolic_MatXtract_Dense(Mat C)
{
  Mat_Product *product   = C->product;
  Mat          A         = product->A, B = product->B;
  PetscBool    transpose = (PetscBool)(product->type == MATPRODUCT_AtB);
  PetscInt     m         = transpose ? A->cmap->n : A->rmap->n, M = transpose ? A->cmap->N : A->rmap->N;
  PetscBool    dense, mpi;

  PetscFunctionBegin;
  MatCheckProduct(C, 1);
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIAIJMATXTRACT, &mpi));
  PetscCall(MatSetSizes(C, m, B->cmap->n, M, B->cmap->N));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)C, &dense, MATSEQDENSE, MATSEQDENSECUDA, MATMPIDENSE, MATMPIDENSECUDA, ""));
  if (!dense) PetscCall(MatSetType(C, ((PetscObject)B)->type_name));
  PetscCall(MatSetUp(C));
  if (mpi) {
    MatXtractMPIDense *d;
    PetscCall(PetscNew(&d));
    product->data    = d;
    product->destroy = MatXtractMPIDenseDestroy;
    PetscCall(MatXtractMPIDenseSetUp(A, B, transpose, d));
  }
  C->ops->productnumeric = MatProductNumeric_MatXtract_Dense;
  if (transpose) C->ops->transposematmultnumeric = MatTransposeMatMultNumeric_MatXtract_Dense;
  else C->ops->matmultnumeric = MatMatMultNumeric_MatXtract_Dense;
  PetscCall(PetscInfo(C, "matxtract: %s with %" PetscInt_FMT " dense columns: the type's SpMM%s\n", MatProductTypes[product->type], B->cmap->N, mpi ? " on each rank's blocks, ghost rows by a scatter per column" : ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A matxtract matrix times a dense B: A B and A' B ours, the rest AIJ's. */
PetscErrorCode MatProductSetFromOptions_MatXtract_Dense(Mat C)
{
  Mat_Product *product = C->product;

  PetscFunctionBegin;
  MatCheckProduct(C, 1);
  if (product->type == MATPRODUCT_AB || product->type == MATPRODUCT_AtB) C->ops->productsymbolic = MatProductSymbolic_MatXtract_Dense;
  else PetscCall(MatProductSetFromOptions_MatXtract(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}
