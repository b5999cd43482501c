/* matxtract_ghosts.c - the ghost side of MATMPIAIJMATXTRACT: the ghost values of x and the
 * off-diagonal block's products (matxtract_mpi.c's Mat ops call these; nothing here calls back).
 *   - the exchange: PETSc's VecScatter into our own ghost vector (a device vector when the blocks
 *     run on the GPU: MPIAIJ's lvec is a host vector), or NCCL between the ranks' GPUs
 *     (-mat_matxtract_ghost_exchange nccl, src/cuda/mx_halo.cu), forwards for MatMult and
 *     backwards (the ghosts' partial sums to their owners) for the transposes;
 *   - the off-diagonal block (Ao): all its rows, or only those with ghost columns as a matrix of
 *     their own (-mat_matxtract_ghost_rows), in the bits of Ao's own product.
 * Begin/End pairs leave PETSc's stream free between them for the diagonal block's product. */
#include "matxtract_impl.h"
#include <petscdevice.h>

#if defined(PETSC_HAVE_CUDA) && defined(MATXTRACT_HAVE_CUDA) && PETSC_VERSION_GE(3, 20, 0)
  #include <petscdevice_cuda.h>
  #define MATXTRACT_MPI_DEVICE_EXCHANGE 1 /* device arrays of vectors and PETSc's stream available */
#endif

const char *const MatXtractExchangeNames[]  = {"vecscatter", "nccl", "MatXtractExchange", "MATXTRACT_EXCHANGE_", NULL};
const char *const MatXtractGhostRowsNames[] = {"auto", "compressed", "all", "MatXtractGhostRows", "MATXTRACT_GHOST_ROWS_", NULL};

/* -mat_matxtract_ghost_rows auto compresses the off-diagonal block's rows by PETSc's own rule for
 * compressed rows (SeqAIJ's assembly, MatCheckCompressedRow): when at least this fraction of its
 * rows is empty. aijcusparse's off-diagonal block follows the same rule. */
#define MATXTRACT_GHOST_ROWS_EMPTY_RATIO 0.6

/* The settings of the ghost blocks (Ao, Aoc): the user's, but crux (0,0) and no predictor (a thin
 * block whose columns are ghost indices stays all cold); `cold` borrows set's model. */
void MatXtractMPIColdSettings(const MatXtractSettings *set, MatXtractSettings *cold)
{
  *cold            = *set;
  cold->crux.tau_c = 0;
  cold->crux.tau_r = 0;
  cold->predictor  = PETSC_FALSE;
}

/* One NCCL communicator per MPI communicator, shared by every matrix on it (an MPI attribute of
 * PETSc's inner communicator, made by the first matrix that needs it, destroyed with that
 * communicator when its last PETSc object goes). Rule: never one per matrix. NCCL's setup takes
 * seconds (docs/performance.md, "Multi-GPU (MPI)"), and NCCL asks that separate communicators never be
 * used concurrently; on one communicator the exchanges run in the order they are issued, which is
 * the same on every rank (MatMult is collective). */
static PetscMPIInt MatXtractHaloKeyval = MPI_KEYVAL_INVALID;

static PetscMPIInt MPIAPI MatXtractHaloCommDelete(MPI_Comm comm, PetscMPIInt keyval, void *attr, void *extra)
{
  (void)comm, (void)keyval, (void)extra;
  mx_halo_comm_free((mx_halo_comm *)attr);
  return MPI_SUCCESS;
}

static PetscErrorCode MatXtractHaloKeyvalFree(void)
{
  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_free_keyval(&MatXtractHaloKeyval)); /* the attributes keep their delete callback */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The NCCL communicator of A's communicator: the one attached to it, else a new one (rank 0 makes
 * the id, every rank joins; collective) attached now. A borrows it. */
static PetscErrorCode MatXtractMPIHaloComm(Mat A)
{
  Mat_MPIAIJMatXtract *m    = (Mat_MPIAIJMatXtract *)A->spptr;
  MPI_Comm             comm = PetscObjectComm((PetscObject)A);
  unsigned char        id[MX_HALO_ID_BYTES];
  PetscMPIInt          size, rank, found;
  mx_halo_comm        *hc = NULL;
  int                  rc = 0, any;

  PetscFunctionBegin;
  if (m->hcomm) PetscFunctionReturn(PETSC_SUCCESS);
  if (MatXtractHaloKeyval == MPI_KEYVAL_INVALID) {
    PetscCallMPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MatXtractHaloCommDelete, &MatXtractHaloKeyval, NULL));
    PetscCall(PetscRegisterFinalize(MatXtractHaloKeyvalFree));
  }
  PetscCallMPI(MPI_Comm_get_attr(comm, MatXtractHaloKeyval, &hc, &found));
  if (found) {
    m->hcomm = hc;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) rc = mx_halo_unique_id(id);
  PetscCallMPI(MPI_Bcast(&rc, 1, MPI_INT, 0, comm));
  PetscCheck(!rc, comm, PETSC_ERR_LIB, "matxtract: -mat_matxtract_ghost_exchange nccl: %s", rank ? "rank 0 could not make an NCCL id" : mx_device_last_error());
  PetscCallMPI(MPI_Bcast(id, MX_HALO_ID_BYTES, MPI_UNSIGNED_CHAR, 0, comm));
  rc = mx_halo_comm_create(id, size, rank, &hc);
  PetscCallMPI(MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, comm));
  if (any) mx_halo_comm_free(hc); /* every rank or none keeps one */
  PetscCheck(!rc, PETSC_COMM_SELF, PETSC_ERR_LIB, "matxtract: -mat_matxtract_ghost_exchange nccl on rank %d: %s", rank, mx_device_last_error());
  PetscCheck(!any, comm, PETSC_ERR_LIB, "matxtract: -mat_matxtract_ghost_exchange nccl: another rank could not join the NCCL communicator");
  PetscCallMPI(MPI_Comm_set_attr(comm, MatXtractHaloKeyval, hc));
  PetscCall(PetscInfo(A, "matxtract: NCCL communicator of %d ranks made; the matrices on this communicator share it\n", (int)size));
  m->hcomm = hc;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The exchange pattern from Ao's ghost columns (garray: ascending global indices, so each owner's
 * are one run, in the order the owner sends them): each rank tells every owner which of its
 * entries it needs (MPI_Alltoall of counts, MPI_Alltoallv of indices: O(ranks) per rank). */
static PetscErrorCode MatXtractMPISetUpHalo(Mat A, const PetscInt *garray, PetscInt nghost)
{
  Mat_MPIAIJMatXtract *m    = (Mat_MPIAIJMatXtract *)A->spptr;
  MPI_Comm             comm = PetscObjectComm((PetscObject)A);
  const PetscInt      *range;
  PetscMPIInt          size, rank, owner = 0;
  PetscMPIInt         *want, *give, *wdisp, *gdisp;
  PetscInt            *given;
  int                 *recv_rank, *recv_off, *recv_idx, *send_rank, *send_off, *send_idx, nrecv = 0, nsend = 0, rc;

  PetscFunctionBegin;
  PetscCall(MatXtractMPIHaloComm(A));
  mx_halo_free(m->halo);
  m->halo = NULL;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscLayoutGetRanges(A->cmap, &range));
  PetscCall(PetscCalloc4(size, &want, size, &give, size + 1, &wdisp, size + 1, &gdisp));
  for (PetscInt i = 0; i < nghost; ++i) {
    while (garray[i] >= range[owner + 1]) ++owner;
    want[owner]++;
  }
  PetscCallMPI(MPI_Alltoall(want, 1, MPI_INT, give, 1, MPI_INT, comm));
  for (PetscMPIInt r = 0; r < size; ++r) {
    wdisp[r + 1] = wdisp[r] + want[r];
    gdisp[r + 1] = gdisp[r] + give[r];
  }
  PetscCall(PetscMalloc1(gdisp[size], &given));
  PetscCallMPI(MPI_Alltoallv(garray, want, wdisp, MPIU_INT, given, give, gdisp, MPIU_INT, comm));
  PetscCall(PetscMalloc6(size, &recv_rank, size + 1, &recv_off, nghost + 1, &recv_idx, size, &send_rank, size + 1, &send_off, gdisp[size] + 1, &send_idx));
  recv_off[0] = send_off[0] = 0;
  for (PetscMPIInt r = 0; r < size; ++r) {
    if (want[r]) {
      recv_rank[nrecv]    = r;
      recv_off[nrecv + 1] = wdisp[r + 1];
      nrecv++;
    }
    if (give[r]) {
      send_rank[nsend]    = r;
      send_off[nsend + 1] = gdisp[r + 1];
      nsend++;
    }
  }
  for (PetscInt i = 0; i < nghost; ++i) recv_idx[i] = (int)i;
  for (PetscMPIInt i = 0; i < gdisp[size]; ++i) send_idx[i] = (int)(given[i] - range[rank]);
  rc = mx_halo_create(m->hcomm, nsend, send_rank, send_off, send_idx, nrecv, recv_rank, recv_off, recv_idx, &m->halo);
  PetscCall(PetscFree6(recv_rank, recv_off, recv_idx, send_rank, send_off, send_idx));
  PetscCall(PetscFree(given));
  PetscCall(PetscFree4(want, give, wdisp, gdisp));
  PetscCheck(!rc, PETSC_COMM_SELF, PETSC_ERR_LIB, "matxtract: the NCCL ghost exchange: %s", mx_device_last_error());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -mat_matxtract_ghost_exchange, checked where it can run: NCCL needs a build with NCCL, PETSc
 * with CUDA (3.20+) and the blocks on the GPU (the ghost vector a device vector). */
static PetscErrorCode MatXtractMPIExchangeChoice(Mat A)
{
  Mat_MPIAIJMatXtract *m    = (Mat_MPIAIJMatXtract *)A->spptr;
  MPI_Comm             comm = PetscObjectComm((PetscObject)A);
  PetscInt             v    = m->exchange;
  PetscBool            set, cuda = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetEList(((PetscObject)A)->options, ((PetscObject)A)->prefix, "-mat_matxtract_ghost_exchange", MatXtractExchangeNames, 2, &v, &set));
  m->exchange = v;
  if (m->exchange != MATXTRACT_EXCHANGE_NCCL) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(mx_halo_available(), comm, PETSC_ERR_SUP, "matxtract: -mat_matxtract_ghost_exchange nccl: matxtract was built without NCCL (CMake did not find nccl.h and libnccl)");
#if !defined(MATXTRACT_MPI_DEVICE_EXCHANGE)
  SETERRQ(comm, PETSC_ERR_SUP, "matxtract: -mat_matxtract_ghost_exchange nccl needs PETSc 3.20+ with CUDA (device arrays on PETSc's stream)");
#endif
  if (m->lvec) PetscCall(PetscObjectTypeCompare((PetscObject)m->lvec, VECSEQCUDA, &cuda));
  PetscCheck(cuda, comm, PETSC_ERR_SUP, "matxtract: -mat_matxtract_ghost_exchange nccl needs the blocks on the GPU (the ghost vector is %s)", m->lvec ? ((PetscObject)m->lvec)->type_name : "not made");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -mat_matxtract_ghost_rows, read where the ghosts are set up (a duplicate reads it too); a change
 * makes the ghost rows again at the next product. */
static PetscErrorCode MatXtractMPIGhostRowsChoice(Mat A)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;
  PetscInt             v = m->ghost_rows;
  PetscBool            set;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetEList(((PetscObject)A)->options, ((PetscObject)A)->prefix, "-mat_matxtract_ghost_rows", MatXtractGhostRowsNames, 3, &v, &set));
  if (v != m->ghost_rows) m->ao_src = NULL;
  m->ghost_rows = v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Ghost vector and scatter for the current pattern (rebuilt when the nonzero pattern changed). */
static PetscErrorCode MatXtractMPISetUpGhosts(Mat A)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;
  const PetscInt      *garray;
  PetscInt             nghost;
  Mat                  Ad, Ao;
  IS                   from;
  Vec                  gx;

  PetscFunctionBegin;
  if (m->scatter && m->nzstate == A->nonzerostate) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecDestroy(&m->lvec));
  PetscCall(VecScatterDestroy(&m->scatter));
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  PetscCall(MatGetLocalSize(Ao, NULL, &nghost));
  PetscCall(MatCreateVecs(Ao, &m->lvec, NULL));
  PetscCall(MatCreateVecs(A, &gx, NULL));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nghost, garray, PETSC_USE_POINTER, &from));
  PetscCall(VecScatterCreate(gx, from, m->lvec, NULL, &m->scatter));
  PetscCall(ISDestroy(&from));
  PetscCall(VecDestroy(&gx));
  PetscCall(MatXtractMPIExchangeChoice(A));
  if (m->exchange == MATXTRACT_EXCHANGE_NCCL) PetscCall(MatXtractMPISetUpHalo(A, garray, nghost));
  PetscCall(MatXtractMPIGhostRowsChoice(A));
  m->nzstate = A->nonzerostate;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Drop Aoc and what serves it. */
static PetscErrorCode MatXtractMPIGhostRowsDrop(Mat A)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;

  PetscFunctionBegin;
  if (m->Aoc) PetscCall(PetscObjectCompose((PetscObject)A, MATXTRACT_GHOST_ROWS_KEY, NULL));
  PetscCall(MatDestroy(&m->Aoc));
  PetscCall(VecDestroy(&m->tc));
  PetscCall(VecScatterDestroy(&m->rows));
  PetscCall(PetscFree(m->rindex));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the Aoc in hand holds the rows rindex of Ao with the row pointers ci and the columns ja. */
static PetscErrorCode MatXtractMPIGhostRowsSame(Mat_MPIAIJMatXtract *m, Mat Ao, PetscInt nonempty, const PetscInt *rindex, const PetscInt *ci, const PetscInt *ja, PetscBool *same)
{
  const PetscInt *ia, *ca;
  PetscInt        n;
  PetscBool       done;

  PetscFunctionBegin;
  *same = PETSC_FALSE;
  if (!m->Aoc || m->Aoc->rmap->n != nonempty || m->Aoc->cmap->n != Ao->cmap->n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscArraycmp(m->rindex, rindex, nonempty, same));
  if (!*same) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetRowIJ(m->Aoc, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ca, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matxtract: MatGetRowIJ failed on the ghost rows");
  PetscCall(PetscArraycmp(ia, ci, nonempty + 1, same));
  if (*same) PetscCall(PetscArraycmp(ca, ja, ci[nonempty], same));
  PetscCall(MatRestoreRowIJ(m->Aoc, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ca, &done));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Aoc = Ao's nonempty rows (n rows, CSR ia/ja, nonempty > 0). Removing empty rows leaves the
 * column and value arrays as they are, so Aoc's are Ao's. The same rows and pattern as the Aoc in
 * hand: its values copied (its format refreshed, not rebuilt); else Aoc is made again. Not
 * collective: each rank decides for its own block. */
static PetscErrorCode MatXtractMPIGhostRowsMake(Mat A, Mat Ao, PetscInt n, const PetscInt *ia, const PetscInt *ja, PetscInt nonempty)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;
  const PetscScalar   *aa;
  PetscInt            *ci, *rindex, r = 0;
  PetscBool            same;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(nonempty + 1, &ci));
  PetscCall(PetscMalloc1(nonempty, &rindex));
  ci[0] = 0;
  for (PetscInt i = 0; i < n; i++) {
    if (ia[i + 1] == ia[i]) continue;
    rindex[r] = i;
    ci[r + 1] = ci[r] + ia[i + 1] - ia[i];
    r++;
  }
  PetscCall(MatSeqAIJGetArrayRead(Ao, &aa));
  PetscCall(MatXtractMPIGhostRowsSame(m, Ao, nonempty, rindex, ci, ja, &same));
  if (same) {
    PetscScalar *ca;
    PetscCall(MatSeqAIJGetArrayWrite(m->Aoc, &ca));
    PetscCall(PetscArraycpy(ca, aa, ci[nonempty]));
    PetscCall(MatSeqAIJRestoreArrayWrite(m->Aoc, &ca)); /* a new state: Aoc's next product refreshes its values */
    PetscCall(PetscFree(rindex));
  } else {
    MatXtractSettings cold;
    Vec               rowsv;
    IS                to;
    PetscCall(MatXtractMPIGhostRowsDrop(A));
    PetscCall(MatCreate(PETSC_COMM_SELF, &m->Aoc));
    PetscCall(MatSetSizes(m->Aoc, nonempty, Ao->cmap->n, nonempty, Ao->cmap->n));
    PetscCall(MatSetType(m->Aoc, MATSEQAIJ));
    PetscCall(MatSeqAIJSetPreallocationCSR(m->Aoc, ci, ja, aa));
    PetscCall(MatConvert_SeqAIJ_SeqAIJMatXtract(m->Aoc, MATSEQAIJMATXTRACT, MAT_INPLACE_MATRIX, &m->Aoc));
    MatXtractMPIColdSettings(&m->set, &cold);
    PetscCall(MatXtractSetSettings_SeqAIJ(m->Aoc, &cold));
    PetscCall(MatXtractSetLeverPeriod_SeqAIJ(m->Aoc, m->lever_period));
    PetscCall(PetscObjectCompose((PetscObject)A, MATXTRACT_GHOST_ROWS_KEY, (PetscObject)m->Aoc));
    PetscCall(MatCreateVecs(m->Aoc, NULL, &m->tc));
    PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, n, NULL, &rowsv)); /* the local rows' layout only */
    PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nonempty, rindex, PETSC_USE_POINTER, &to));
    PetscCall(VecScatterCreate(m->tc, NULL, rowsv, to, &m->rows));
    PetscCall(ISDestroy(&to));
    PetscCall(VecDestroy(&rowsv));
    m->rindex = rindex;
  }
  PetscCall(MatSeqAIJRestoreArrayRead(Ao, &aa));
  PetscCall(PetscFree(ci));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What Ao's products use, made to match Ao before every product (again when MPIAIJ replaced Ao, or
 * Ao's values or A's pattern changed): all of Ao's rows, its nonempty rows as Aoc, or nothing (no
 * row has a ghost column). Ao is lazy unless its own format does these products. */
static PetscErrorCode MatXtractMPISyncGhostRows(Mat A)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;
  Mat                  Ao;
  PetscObjectState     state;
  const PetscInt      *ia, *ja;
  PetscInt             n, nonempty = 0;
  PetscBool            done, compress;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, NULL, &Ao, NULL));
  PetscCall(PetscObjectStateGet((PetscObject)Ao, &state));
  if (Ao == m->ao_src && state == m->ao_state && A->nonzerostate == m->ao_nzstate) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matxtract: MatGetRowIJ failed on the off-diagonal block");
  for (PetscInt i = 0; i < n; i++) nonempty += ia[i + 1] > ia[i];
  compress = (PetscBool)(m->ghost_rows == MATXTRACT_GHOST_ROWS_COMPRESSED || (m->ghost_rows == MATXTRACT_GHOST_ROWS_AUTO && n - nonempty >= MATXTRACT_GHOST_ROWS_EMPTY_RATIO * n));
  if (compress && nonempty) PetscCall(MatXtractMPIGhostRowsMake(A, Ao, n, ia, ja, nonempty));
  else PetscCall(MatXtractMPIGhostRowsDrop(A));
  m->ao_form = !compress ? MATXTRACT_AO_ALL : nonempty ? MATXTRACT_AO_COMPRESSED : MATXTRACT_AO_NONE;
  PetscCall(MatRestoreRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCall(MatXtractSetLazy_SeqAIJ(Ao, (PetscBool)(m->ao_form != MATXTRACT_AO_ALL)));
  m->nonempty   = nonempty;
  m->ao_src     = Ao;
  m->ao_state   = state;
  m->ao_nzstate = A->nonzerostate;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* yy += Ao x_ghost (lvec holds x_ghost). With compressed rows, in the bits of Ao's own product over
 * all rows: the CPU kernels sum a row from z on (AIJ's order), so y at those rows is gathered, Aoc
 * adds to it and it is put back; the GPU kernels add z to the row's sum last, so Aoc's sums are
 * added into y (one scatter). `rows` is a scatter of sequential layouts; on a parallel vector it
 * moves the local part (PETSc's VecScatter checks the local sizes only). */
PetscErrorCode MatXtractMPIGhostMultAdd(Mat A, Vec yy)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;
  Mat                  Ao;
  PetscBool            device;

  PetscFunctionBegin;
  if (m->ao_form == MATXTRACT_AO_NONE) PetscFunctionReturn(PETSC_SUCCESS);
  if (m->ao_form == MATXTRACT_AO_ALL) {
    PetscCall(MatMPIAIJGetSeqAIJ(A, NULL, &Ao, NULL));
    PetscCall((*Ao->ops->multadd)(Ao, m->lvec, yy, yy));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatXtractOnDevice_SeqAIJ(m->Aoc, &device));
  if (device) {
    PetscCall((*m->Aoc->ops->mult)(m->Aoc, m->lvec, m->tc));
    PetscCall(VecScatterBegin(m->rows, m->tc, yy, ADD_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(m->rows, m->tc, yy, ADD_VALUES, SCATTER_FORWARD));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(VecScatterBegin(m->rows, yy, m->tc, INSERT_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(m->rows, yy, m->tc, INSERT_VALUES, SCATTER_REVERSE));
  PetscCall((*m->Aoc->ops->multadd)(m->Aoc, m->lvec, m->tc, m->tc));
  PetscCall(VecScatterBegin(m->rows, m->tc, yy, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(m->rows, m->tc, yy, INSERT_VALUES, SCATTER_FORWARD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* lvec = Ao' xx. */
PetscErrorCode MatXtractMPIGhostMultTranspose(Mat A, Vec xx)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;
  Mat                  Ao;

  PetscFunctionBegin;
  if (m->ao_form == MATXTRACT_AO_NONE) {
    PetscCall(VecZeroEntries(m->lvec));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (m->ao_form == MATXTRACT_AO_ALL) {
    PetscCall(MatMPIAIJGetSeqAIJ(A, NULL, &Ao, NULL));
    PetscCall((*Ao->ops->multtranspose)(Ao, xx, m->lvec));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(VecScatterBegin(m->rows, xx, m->tc, INSERT_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(m->rows, xx, m->tc, INSERT_VALUES, SCATTER_REVERSE));
  PetscCall((*m->Aoc->ops->multtranspose)(m->Aoc, m->tc, m->lvec));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(MATXTRACT_MPI_DEVICE_EXCHANGE)
/* PETSc's stream, once v is known to be a device vector (NCCL moves device arrays only). */
static PetscErrorCode MatXtractMPIHaloStream(Mat A, Vec v, cudaStream_t *stream)
{
  PetscBool cuda;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)v, &cuda, VECSEQCUDA, VECMPICUDA, ""));
  PetscCheck(cuda, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "matxtract: -mat_matxtract_ghost_exchange nccl needs device vectors (-vec_type cuda), not %s", ((PetscObject)v)->type_name);
  *stream = NULL;
  PetscCall(PetscGetCurrentCUDAStream(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The NCCL exchange into lvec, on its own stream after PETSc's stream's work so far (x ready), and
 * PETSc's stream made to wait for it; x and lvec's device arrays are taken and given back at once
 * (stream order keeps them valid: the products that follow run on PETSc's stream). */
static PetscErrorCode MatXtractMPIHaloBegin(Mat A, Vec xx)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;
  const PetscScalar   *xa;
  PetscScalar         *ga;
  cudaStream_t         stream;
  int                  rc;

  PetscFunctionBegin;
  PetscCall(MatXtractMPIHaloStream(A, xx, &stream));
  PetscCall(VecCUDAGetArrayRead(xx, &xa));
  PetscCall(VecCUDAGetArrayWrite(m->lvec, &ga));
  rc = mx_halo_start(m->halo, (const double *)xa, (double *)ga, (void *)stream);
  PetscCall(VecCUDARestoreArrayWrite(m->lvec, &ga));
  PetscCall(VecCUDARestoreArrayRead(xx, &xa));
  PetscCheck(!rc, PETSC_COMM_SELF, PETSC_ERR_LIB, "matxtract: the NCCL ghost exchange: %s", mx_device_last_error());
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatXtractMPIHaloEnd(Mat A)
{
  Mat_MPIAIJMatXtract *m      = (Mat_MPIAIJMatXtract *)A->spptr;
  cudaStream_t         stream = NULL;

  PetscFunctionBegin;
  PetscCall(PetscGetCurrentCUDAStream(&stream));
  PetscCheck(!mx_halo_wait(m->halo, (void *)stream), PETSC_COMM_SELF, PETSC_ERR_LIB, "matxtract: the NCCL ghost exchange: %s", mx_device_last_error());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The transpose's NCCL exchange: the ghost partial sums in lvec sent back to their owners on the
 * exchange's stream after PETSc's stream's work so far (lvec ready); PETSc's stream meanwhile runs
 * the diagonal block's product into y. */
static PetscErrorCode MatXtractMPIHaloReverseBegin(Mat A, Vec xx)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;
  const PetscScalar   *ga;
  cudaStream_t         stream;
  int                  rc;

  PetscFunctionBegin;
  PetscCall(MatXtractMPIHaloStream(A, xx, &stream));
  PetscCall(VecCUDAGetArrayRead(m->lvec, &ga));
  rc = mx_halo_reverse_start(m->halo, (const double *)ga, (void *)stream);
  PetscCall(VecCUDARestoreArrayRead(m->lvec, &ga));
  PetscCheck(!rc, PETSC_COMM_SELF, PETSC_ERR_LIB, "matxtract: the NCCL ghost exchange (transpose): %s", mx_device_last_error());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y (written by the diagonal block's product on PETSc's stream) += what the other ranks sent back. */
static PetscErrorCode MatXtractMPIHaloReverseEnd(Mat A, Vec yy)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;
  PetscScalar         *ya;
  cudaStream_t         stream;
  int                  rc;

  PetscFunctionBegin;
  PetscCall(MatXtractMPIHaloStream(A, yy, &stream));
  PetscCall(VecCUDAGetArray(yy, &ya));
  rc = mx_halo_reverse_finish(m->halo, (double *)ya, (void *)stream);
  PetscCall(VecCUDARestoreArray(yy, &ya));
  PetscCheck(!rc, PETSC_COMM_SELF, PETSC_ERR_LIB, "matxtract: the NCCL ghost exchange (transpose): %s", mx_device_last_error());
  PetscFunctionReturn(PETSC_SUCCESS);
}
#else
/* Without PETSc 3.20+ with CUDA, MatXtractMPIExchangeChoice refuses nccl at the ghosts' setup, so
 * no product gets here; the stand-ins say so should one ever do. */
static PetscErrorCode MatXtractMPIHaloMissing(Mat A)
{
  PetscFunctionBegin;
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "matxtract: the NCCL ghost exchange needs PETSc 3.20+ with CUDA");
}
static PetscErrorCode MatXtractMPIHaloBegin(Mat A, Vec v) { (void)v; return MatXtractMPIHaloMissing(A); }
static PetscErrorCode MatXtractMPIHaloEnd(Mat A) { return MatXtractMPIHaloMissing(A); }
static PetscErrorCode MatXtractMPIHaloReverseBegin(Mat A, Vec v) { (void)v; return MatXtractMPIHaloMissing(A); }
static PetscErrorCode MatXtractMPIHaloReverseEnd(Mat A, Vec v) { (void)v; return MatXtractMPIHaloMissing(A); }
#endif

/* Everything the ghosts hold: the ghost vector, the scatter, the compressed rows, the NCCL
 * exchange (its communicator is the MPI communicator's: borrowed, not freed here). */
PetscErrorCode MatXtractMPIGhostsFree(Mat A)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;

  PetscFunctionBegin;
  PetscCall(VecDestroy(&m->lvec));
  PetscCall(VecScatterDestroy(&m->scatter));
  PetscCall(MatXtractMPIGhostRowsDrop(A));
  mx_halo_free(m->halo);
  m->halo = NULL;
  m->hcomm = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Before a product: the ghost vector and exchange for A's pattern, the off-diagonal rows for Ao's state. */
PetscErrorCode MatXtractMPIGhostsSync(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatXtractMPISetUpGhosts(A));
  PetscCall(MatXtractMPISyncGhostRows(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* lvec <- the ghost values of xx: started here, complete after MatXtractMPIGhostsEnd. */
PetscErrorCode MatXtractMPIGhostsBegin(Mat A, Vec xx)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;

  PetscFunctionBegin;
  if (m->exchange == MATXTRACT_EXCHANGE_NCCL) PetscCall(MatXtractMPIHaloBegin(A, xx));
  else PetscCall(VecScatterBegin(m->scatter, xx, m->lvec, INSERT_VALUES, SCATTER_FORWARD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatXtractMPIGhostsEnd(Mat A, Vec xx)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;

  PetscFunctionBegin;
  if (m->exchange == MATXTRACT_EXCHANGE_NCCL) PetscCall(MatXtractMPIHaloEnd(A));
  else PetscCall(VecScatterEnd(m->scatter, xx, m->lvec, INSERT_VALUES, SCATTER_FORWARD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* yy += the ghosts' partial sums in lvec, added by their owners (the transposes): through NCCL they
 * travel from here on, while yy is written by the diagonal block's product; PETSc's reverse scatter
 * starts only in MatXtractMPIGhostsReturnEnd, after that product (PETSc does not promise that its
 * Begin adds nothing). */
PetscErrorCode MatXtractMPIGhostsReturnBegin(Mat A, Vec xx)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;

  PetscFunctionBegin;
  if (m->exchange == MATXTRACT_EXCHANGE_NCCL) PetscCall(MatXtractMPIHaloReverseBegin(A, xx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatXtractMPIGhostsReturnEnd(Mat A, Vec yy)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;

  PetscFunctionBegin;
  if (m->exchange == MATXTRACT_EXCHANGE_NCCL) PetscCall(MatXtractMPIHaloReverseEnd(A, yy));
  else {
    PetscCall(VecScatterBegin(m->scatter, m->lvec, yy, ADD_VALUES, SCATTER_REVERSE));
    PetscCall(VecScatterEnd(m->scatter, m->lvec, yy, ADD_VALUES, SCATTER_REVERSE));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -mat_view ::ascii_info_detail: the exchange, and rank 0's off-diagonal rows. */
PetscErrorCode MatXtractMPIGhostsView(Mat A, PetscViewer viewer)
{
  Mat_MPIAIJMatXtract *m = (Mat_MPIAIJMatXtract *)A->spptr;

  PetscFunctionBegin;
  if (m->halo) {
    int       sr, rr;
    long long sn, rn;
    mx_halo_counts(m->halo, &sr, &sn, &rr, &rn);
    PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: ghost exchange: NCCL between the ranks' GPUs (rank 0 sends %lld values to %d ranks, receives %lld from %d)\n", sn, sr, rn, rr));
  } else PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: ghost exchange: PETSc's VecScatter%s\n", m->exchange == MATXTRACT_EXCHANGE_NCCL ? " until the first MatMult sets up NCCL" : ""));
  if (!m->ao_src) PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: off-diagonal block's rows (-mat_matxtract_ghost_rows %s): decided at the first product\n", MatXtractGhostRowsNames[m->ghost_rows]));
  else {
    static const char *const forms[] = {"all of them", "only those (compressed rows)", "none"};
    PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: off-diagonal block of rank 0: %" PetscInt_FMT " of %" PetscInt_FMT " rows have ghost columns; its products run %s\n", m->nonempty, A->rmap->n, forms[m->ao_form]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
