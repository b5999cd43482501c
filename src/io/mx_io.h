/* mx_io.h - matrices from files and generators, as plain CSR (pure C99, no PETSc).
 * Every function returns 0 on success; on failure a nonzero code and a one-line message in err
 * that names the file and line (reader) or the spec (generator). Nothing is left allocated then. */
#ifndef MX_IO_H
#define MX_IO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An owned CSR matrix: columns sorted within each row, duplicates summed. */
typedef struct {
  int32_t nrows, ncols;
  int64_t nnz;
  int64_t *rowptr; /* nrows+1 */
  int32_t *colidx; /* nnz */
  double *val;     /* nnz */
} mx_io_csr;

void mx_io_csr_free(mx_io_csr *A);

/* Matrix Market reader: coordinate (real, integer, pattern; general, symmetric, skew-symmetric)
 * and array (real, general or symmetric). Symmetric and skew entries are expanded. Pattern values
 * are 1. Complex and hermitian are refused. */
int mx_mtx_read(const char *path, mx_io_csr *A, char *err, size_t errlen);

/* Matrix Market writer (coordinate real general). */
int mx_mtx_write(const char *path, const mx_io_csr *A, char *err, size_t errlen);

/* Generators: spec strings such as "kron:18:16", "rgg:16", "lap2d:1000", "lap2d9:N", "lap3d:N",
 * "lap3d27:N", "band:N:W", "rand:N:PERROW", "chunglu:N:AVGDEG:EXP", "chunglu-dir:N:AVGDEG:EXP",
 * "blockdense:N:NB:BS", "bipartite:M:N:PERROW", "convdiff2d:N", "convdiff3d:N". seed 0 = the
 * spec's documented default seed. mx_gen_help() returns the multi-line help text. */
int mx_gen(const char *spec, uint64_t seed, mx_io_csr *A, char *err, size_t errlen);
const char *mx_gen_help(void);

#ifdef __cplusplus
}
#endif
#endif
