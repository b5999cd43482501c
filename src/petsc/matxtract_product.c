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
 * on several ranks both on each rank's blocks, the ghost rows of all k columns in one exchange (PetscSF).
 * C takes B's dense type unless it has a dense type already; k = 0, lda > rows and a reused C are
 * PETSc's dense semantics. The other products with dense (A B', PtAP, RARt) are AIJ's, as above. */
#include "matxtract_impl.h"

#include <petscsf.h>

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
 * A = [Ad Ao] on each rank (Ao's columns the ghost columns garray). A B: the ghost rows of B, all k
 * columns in one exchange, land in W (nghost x k), then C_local = Ad B_local + Ao W; Ad B_local runs
 * while they travel. A' B: C_local = Ad' B_local, W = Ao' B_local, W's rows added to their owners'
 * rows of C in one exchange. The exchange is a PetscSF whose leaves are W's entries (column-major)
 * and whose roots are the entries of the MPI dense's local array (B's for A B, C's for A' B): the
 * SF moves the arrays where they live (host or device, staged by PETSc where MPI cannot take device
 * memory). Its graph holds nghost x k edges, made again when A's pattern, k or that lda changes.
 * The block products are the seq ones (the host or device SpMM); every dense block has B's local
 * type, so device columns stay on the device. */
typedef struct {
  PetscSF          ghosts;  /* leaves: W's entries; roots: the local array of the dense named below */
  PetscInt         k, lda;  /* that dense's columns and leading dimension when the SF was made */
  Mat              W;       /* nghost x k, leading dimension nghost */
  Mat              T;       /* A B: local rows x k, Ao W */
  PetscObjectState nzstate; /* A's nonzero state the above were made for */
} MatXtractMPIDense;

static PetscErrorCode MatXtractMPIDenseDestroy(void *ctx)
{
  MatXtractMPIDense *d = (MatXtractMPIDense *)ctx;

  PetscFunctionBegin;
  PetscCall(PetscSFDestroy(&d->ghosts));
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

/* The SF of the ghost rows: leaf j nghost + i (W's entry (i, j)) <-> root j lda_p + r on the rank p
 * that owns ghost column garray[i] as its local row r, lda_p being p's leading dimension of M
 * (every rank's is gathered: collective). M's row layout is A's column layout. */
static PetscErrorCode MatXtractGhostRowsSF(Mat A, Mat M, PetscInt k, PetscInt lda, PetscSF *sf)
{
  MPI_Comm        comm = PetscObjectComm((PetscObject)A);
  const PetscInt *garray;
  Mat             Ao;
  PetscInt        nghost, *ldas, nroots = k > 0 ? lda * (k - 1) + M->rmap->n : 0;
  PetscMPIInt     size, owner;
  PetscSFNode    *remote;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, NULL, &Ao, &garray));
  PetscCall(MatGetLocalSize(Ao, NULL, &nghost));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscMalloc1(size, &ldas));
  PetscCallMPI(MPI_Allgather(&lda, 1, MPIU_INT, ldas, 1, MPIU_INT, comm));
  PetscCall(PetscMalloc1(nghost * k, &remote));
  for (PetscInt i = 0; i < nghost; i++) {
    PetscCall(PetscLayoutFindOwner(A->cmap, garray[i], &owner));
    for (PetscInt j = 0; j < k; j++) {
      remote[j * nghost + i].rank  = owner;
      remote[j * nghost + i].index = j * ldas[owner] + garray[i] - A->cmap->range[owner];
    }
  }
  PetscCall(PetscFree(ldas));
  PetscCall(PetscSFCreate(comm, sf));
  PetscCall(PetscSFSetGraph(*sf, nroots, nghost * k, NULL, PETSC_OWN_POINTER, remote, PETSC_OWN_POINTER));
  PetscCall(PetscSFSetUp(*sf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The SF and work blocks for A's current pattern and the dense M whose local array is the SF's
 * roots (B for A B, C for A' B); made again when the pattern, M's k or its lda changed. Collective. */
static PetscErrorCode MatXtractMPIDenseSetUp(Mat A, Mat B, Mat M, PetscBool transpose, MatXtractMPIDense *d)
{
  Mat       Ao, Ml;
  PetscInt  nghost, k, lda, lda_w, same, all_same;

  PetscFunctionBegin;
  PetscCall(MatGetSize(M, NULL, &k));
  PetscCall(MatDenseGetLocalMatrix(M, &Ml));
  PetscCall(MatDenseGetLDA(Ml, &lda));
  same = d->ghosts && d->nzstate == A->nonzerostate && d->k == k && d->lda == lda;
  PetscCall(MPIU_Allreduce(&same, &all_same, 1, MPIU_INT, MPI_MIN, PetscObjectComm((PetscObject)A))); /* one rank's new lda remakes every rank's SF */
  if (all_same) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscSFDestroy(&d->ghosts));
  PetscCall(MatDestroy(&d->W));
  PetscCall(MatDestroy(&d->T));
  PetscCall(MatMPIAIJGetSeqAIJ(A, NULL, &Ao, NULL));
  PetscCall(MatGetLocalSize(Ao, NULL, &nghost));
  PetscCall(MatXtractGhostRowsSF(A, M, k, lda, &d->ghosts));
  PetscCall(MatXtractLocalDense(B, nghost, &d->W));
  PetscCall(MatDenseGetLDA(d->W, &lda_w));
  PetscCheck(nghost == 0 || lda_w == nghost, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matxtract: the ghost block's leading dimension %" PetscInt_FMT " is not its rows %" PetscInt_FMT, lda_w, nghost);
  if (!transpose) PetscCall(MatXtractLocalDense(B, A->rmap->n, &d->T));
  d->nzstate = A->nonzerostate;
  d->k       = k;
  d->lda     = lda;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* C = A B: the ghost rows of B into W while Ad B_local runs, then C_local += Ao W. */
static PetscErrorCode MatXtractDenseProductMPIAB(Mat Ad, Mat Ao, Mat Bl, Mat Cl, MatXtractMPIDense *d)
{
  const PetscScalar *b;
  PetscScalar       *w;
  PetscMemType       bm, wm;

  PetscFunctionBegin;
  PetscCall(MatDenseGetArrayReadAndMemType(Bl, &b, &bm));
  PetscCall(MatDenseGetArrayWriteAndMemType(d->W, &w, &wm));
  PetscCall(PetscSFBcastWithMemTypeBegin(d->ghosts, MPIU_SCALAR, bm, b, wm, w, MPI_REPLACE));
  PetscCall(MatXtractDenseProductSeq(Ad, Bl, Cl, PETSC_FALSE));
  PetscCall(PetscSFBcastEnd(d->ghosts, MPIU_SCALAR, b, w, MPI_REPLACE));
  PetscCall(MatDenseRestoreArrayWriteAndMemType(d->W, &w));
  PetscCall(MatDenseRestoreArrayReadAndMemType(Bl, &b));
  if (d->W->rmap->n > 0) {
    PetscCall(MatXtractDenseProductSeq(Ao, d->W, d->T, PETSC_FALSE));
    PetscCall(MatAXPY(Cl, 1.0, d->T, SAME_NONZERO_PATTERN));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* C = A' B: C_local = Ad' B_local, W = Ao' B_local, W's rows added to their owners' rows of C. */
static PetscErrorCode MatXtractDenseProductMPIAtB(Mat Ad, Mat Ao, Mat Bl, Mat Cl, MatXtractMPIDense *d)
{
  const PetscScalar *w;
  PetscScalar       *c;
  PetscMemType       wm, cm;

  PetscFunctionBegin;
  PetscCall(MatXtractDenseProductSeq(Ad, Bl, Cl, PETSC_TRUE));
  if (d->W->rmap->n > 0) PetscCall(MatXtractDenseProductSeq(Ao, Bl, d->W, PETSC_TRUE));
  PetscCall(MatDenseGetArrayReadAndMemType(d->W, &w, &wm));
  PetscCall(MatDenseGetArrayAndMemType(Cl, &c, &cm));
  PetscCall(PetscSFReduceWithMemTypeBegin(d->ghosts, MPIU_SCALAR, wm, w, cm, c, MPI_SUM));
  PetscCall(PetscSFReduceEnd(d->ghosts, MPIU_SCALAR, w, c, MPI_SUM));
  PetscCall(MatDenseRestoreArrayAndMemType(Cl, &c));
  PetscCall(MatDenseRestoreArrayReadAndMemType(d->W, &w));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatXtractDenseProductMPI(Mat A, Mat B, Mat C, PetscBool transpose)
{
  MatXtractMPIDense *d;
  Mat                Ad, Ao, Bl, Cl;

  PetscFunctionBegin;
  PetscCheck(C->product && C->product->data, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB, "matxtract: the MPI dense product has no symbolic data");
  d = (MatXtractMPIDense *)C->product->data;
  PetscCall(MatXtractMPIDenseSetUp(A, B, transpose ? C : B, transpose, d)); /* collective: every rank, ghosts or not */
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  PetscCall(MatDenseGetLocalMatrix(B, &Bl));
  PetscCall(MatDenseGetLocalMatrix(C, &Cl));
  if (!transpose) PetscCall(MatXtractDenseProductMPIAB(Ad, Ao, Bl, Cl, d));
  else PetscCall(MatXtractDenseProductMPIAtB(Ad, Ao, Bl, Cl, d));
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
    PetscCall(MatXtractMPIDenseSetUp(A, B, transpose ? C : B, transpose, d));
  }
  C->ops->productnumeric = MatProductNumeric_MatXtract_Dense;
  if (transpose) C->ops->transposematmultnumeric = MatTransposeMatMultNumeric_MatXtract_Dense;
  else C->ops->matmultnumeric = MatMatMultNumeric_MatXtract_Dense;
  PetscCall(PetscInfo(C, "matxtract: %s with %" PetscInt_FMT " dense columns: the type's SpMM%s\n", MatProductTypes[product->type], B->cmap->N, mpi ? " on each rank's blocks, ghost rows of all columns in one exchange" : ""));
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
