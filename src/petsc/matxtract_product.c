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
 * A seqaijmatxtract times a dense B (seqdense, seqdensecuda), A B and A' B, is ours (issue 43): on
 * the CPU path the host format's SpMM (every column bit for bit the MatMult of that column); on the
 * GPU one MatMult (MatMultTranspose) of A per column, on the columns where they live (device
 * columns of a seqdensecuda stay on the device), until the GPU SpMM kernels replace it. C takes B's
 * dense type unless it has a dense type already; k = 0, lda > rows and a reused C are PETSc's
 * dense semantics. The other products with dense (A B', PtAP, RARt) are AIJ's, as above. */
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

/* C = A B, or A' B (transpose), numeric (A synced first: new values or a new pattern since the symbolic). */
static PetscErrorCode MatXtractDenseProduct(Mat A, Mat B, Mat C, PetscBool transpose)
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

/* C's sizes, and its type when it has no dense one: B's (device columns stay on the device). */
static PetscErrorCode MatProductSymbolic_MatXtract_Dense(Mat C)
{
  Mat_Product *product = C->product;
  Mat          A       = product->A, B = product->B;
  PetscInt     m       = product->type == MATPRODUCT_AtB ? A->cmap->n : A->rmap->n;
  PetscBool    dense;

  PetscFunctionBegin;
  MatCheckProduct(C, 1);
  PetscCall(MatSetSizes(C, m, B->cmap->n, m, B->cmap->n));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)C, &dense, MATSEQDENSE, MATSEQDENSECUDA, ""));
  if (!dense) PetscCall(MatSetType(C, ((PetscObject)B)->type_name));
  PetscCall(MatSetUp(C));
  C->ops->productnumeric = MatProductNumeric_MatXtract_Dense;
  if (product->type == MATPRODUCT_AtB) C->ops->transposematmultnumeric = MatTransposeMatMultNumeric_MatXtract_Dense;
  else C->ops->matmultnumeric = MatMatMultNumeric_MatXtract_Dense;
  PetscCall(PetscInfo(C, "matxtract: %s with %" PetscInt_FMT " dense columns: %s\n", MatProductTypes[product->type], B->cmap->n, ((Mat_MatXtract *)A->spptr)->D ? "the GPU SpMM" : "the host SpMM"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A seqaijmatxtract times a dense B: A B and A' B ours, the rest AIJ's. */
PetscErrorCode MatProductSetFromOptions_MatXtract_Dense(Mat C)
{
  Mat_Product *product = C->product;

  PetscFunctionBegin;
  MatCheckProduct(C, 1);
  if (product->type == MATPRODUCT_AB || product->type == MATPRODUCT_AtB) C->ops->productsymbolic = MatProductSymbolic_MatXtract_Dense;
  else PetscCall(MatProductSetFromOptions_MatXtract(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}
