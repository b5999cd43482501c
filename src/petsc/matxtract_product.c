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
 * the basic composition) or its error apply, exactly as for AIJ. */
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
