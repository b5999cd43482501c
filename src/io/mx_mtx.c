/* mx_mtx.c - Matrix Market reader and writer: text file -> CSR (sorted, duplicates summed) -> text.
 *
 * Reader: one 16 MiB buffer refilled with fread, lines cut in place, numbers parsed by hand (indices
 * as integers, values by an exact fast path for short decimals and strtod otherwise). Entries are
 * kept as COO in file order, then counted and scattered into CSR (symmetric/skew entries mirrored
 * on the way), then each row is sorted and merged. Every malformed input stops at the first problem
 * with "FILE:LINE: what is wrong" and frees everything it allocated. */
#include "io/mx_io_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MX_MTX_BUF (16u << 20) /* bytes per read; also the longest line accepted */

/* ---- line reader ------------------------------------------------------------------------------- */
typedef struct {
  FILE *f;
  const char *path;
  char *buf;          /* cap + 1 bytes: room for a NUL after a last line without '\n' */
  size_t cap, beg, end; /* unread bytes are buf[beg, end) */
  int eof;
  long long line;     /* number of the line last returned (1-based) */
  char *err;
  size_t errlen;
} mx_reader;

#define RD_ERR(r, ...) mx_rd_err((r), __VA_ARGS__)

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int mx_rd_err(mx_reader *r, const char *fmt, ...)
{
  if (r->err && r->errlen) {
    int n = snprintf(r->err, r->errlen, "%s:%lld: ", r->path, r->line);
    if (n >= 0 && (size_t)n < r->errlen) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
      va_end(ap);
    }
  }
  return 1;
}

/* Next line into [*s, *e) with a NUL at *e (the '\n' and a trailing '\r' are cut off).
 * Returns 1 for a line, 0 at end of file, -1 on error (message set). */
static int rd_line(mx_reader *r, char **s, char **e)
{
  for (;;) {
    char *p = r->buf + r->beg;
    char *nl = memchr(p, '\n', r->end - r->beg);
    if (!nl && r->eof) {
      if (r->beg == r->end) return 0;
      nl = r->buf + r->end; /* last line without a newline: buf has one spare byte */
    }
    if (nl) {
      r->line++;
      r->beg = (size_t)(nl - r->buf) + (nl < r->buf + r->end ? 1 : 0);
      *nl = 0;
      if (nl > p && nl[-1] == '\r') *--nl = 0;
      *s = p;
      *e = nl;
      return 1;
    }
    size_t rem = r->end - r->beg;
    if (rem == r->cap) {
      r->line++;
      return -RD_ERR(r, "line longer than %u bytes", (unsigned)r->cap);
    }
    memmove(r->buf, p, rem);
    r->beg = 0;
    r->end = rem;
    size_t n = fread(r->buf + rem, 1, r->cap - rem, r->f);
    if (n < r->cap - rem) {
      if (ferror(r->f)) {
        r->line++;
        return -RD_ERR(r, "read error: %s", strerror(errno));
      }
      r->eof = 1;
    }
    char *z = memchr(r->buf + rem, 0, n);
    if (z) { /* a NUL would silently cut a line short: refuse binary data */
      for (char *q = r->buf; q < z; q++)
        if (*q == '\n') r->line++;
      r->line++;
      return -RD_ERR(r, "NUL byte in the file (binary data, not Matrix Market text)");
    }
    r->end = rem + n;
  }
}

/* ---- tokens and numbers ------------------------------------------------------------------------ */
static inline int is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
static inline char *skip_ws(char *p)
{
  while (is_ws(*p)) p++;
  return p;
}
static inline char *tok_end(char *p)
{
  while (*p && !is_ws(*p)) p++;
  return p;
}
/* token text for messages: at most 40 characters */
#define TOKLEN(p, q) ((int)((q) - (p) > 40 ? 40 : (q) - (p)))

/* Decimal integer [p, q) with optional sign. 0 ok, 1 not an integer, 2 too large for int64. */
static int parse_i64(const char *p, const char *q, int allow_sign, long long *out)
{
  int neg = 0;
  if (allow_sign && p < q && (*p == '+' || *p == '-')) neg = (*p++ == '-');
  if (p == q) return 1;
  unsigned long long v = 0;
  for (; p < q; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (d > 9) return 1;
    if (v > (9223372036854775807ULL - d) / 10) return 2;
    v = v * 10 + d;
  }
  *out = neg ? -(long long)v : (long long)v;
  return 0;
}

static const double mx_p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Real number [p, q). 0 ok, 1 not a number, 2 not finite (nan, inf, or out of double range).
 * Decimal syntax only ([sign] digits [. digits] [e|E [sign] digits]); with allow_nonfinite also
 * nan/inf/infinity. Fast path: <= 19 significant digits whose value is below 2^53 and a decimal
 * exponent in [-22, 22] is one exact IEEE multiply or divide, hence correctly rounded; otherwise
 * strtod on the already-validated text. */
static int parse_real(char *p, char *q, int allow_nonfinite, double *out)
{
  const char *s = p;
  int neg = 0;
  if (s < q && (*s == '+' || *s == '-')) neg = (*s++ == '-');
  unsigned long long m = 0;
  int nd = 0, any = 0, trunc = 0;
  long dexp = 0;
  for (; s < q && (unsigned)(*s - '0') <= 9; s++) {
    unsigned d = (unsigned)(*s - '0');
    any = 1;
    if (m == 0 && d == 0) continue;
    if (nd < 19) {
      m = m * 10 + d;
      nd++;
    } else {
      dexp++;
      trunc = 1;
    }
  }
  if (s < q && *s == '.') {
    for (s++; s < q && (unsigned)(*s - '0') <= 9; s++) {
      unsigned d = (unsigned)(*s - '0');
      any = 1;
      if (m == 0 && d == 0) {
        dexp--;
        continue;
      }
      if (nd < 19) {
        m = m * 10 + d;
        nd++;
        dexp--;
      } else trunc = 1;
    }
  }
  if (!any) { /* nan / inf / infinity, any case: "not finite" (2) unless allowed */
    size_t len = (size_t)(q - s);
    if ((len == 3 && !strncasecmp(s, "nan", 3)) || (len == 3 && !strncasecmp(s, "inf", 3)) ||
        (len == 8 && !strncasecmp(s, "infinity", 8))) {
      if (!allow_nonfinite) return 2;
      *out = (s[0] == 'n' || s[0] == 'N') ? (neg ? -NAN : NAN) : (neg ? -INFINITY : INFINITY);
      return 0;
    }
    return 1;
  }
  if (s < q && (*s == 'e' || *s == 'E')) {
    s++;
    int eneg = 0;
    if (s < q && (*s == '+' || *s == '-')) eneg = (*s++ == '-');
    if (s == q) return 1;
    long e = 0;
    for (; s < q; s++) {
      unsigned d = (unsigned)(*s - '0');
      if (d > 9) return 1;
      if (e < 100000) e = e * 10 + d;
    }
    dexp += eneg ? -e : e;
  }
  if (s != q) return 1;
  double v;
  if (m == 0) v = 0.0;
  else if (!trunc && m < (1ULL << 53) && dexp >= -22 && dexp <= 22)
    v = dexp >= 0 ? (double)m * mx_p10[dexp] : (double)m / mx_p10[-dexp];
  else {
    char save = *q; /* q points at whitespace or the line's NUL: terminate the token for strtod */
    *q = 0;
    v = strtod(p, NULL);
    *q = save;
    if (!isfinite(v)) return allow_nonfinite ? (*out = v, 0) : 2;
    *out = v; /* strtod already applied the sign */
    return 0;
  }
  *out = neg ? -v : v;
  return 0;
}

/* ---- banner ------------------------------------------------------------------------------------ */
enum { FMT_COORD, FMT_ARRAY };
enum { FLD_REAL, FLD_INTEGER, FLD_PATTERN };
enum { SYM_GENERAL, SYM_SYMMETRIC, SYM_SKEW };

typedef struct {
  int format, field, symmetry;
  int typed_unsigned; /* %%GraphBLAS type says unsigned or bool */
} mx_banner;

static int parse_banner(mx_reader *r, char *s, mx_banner *b)
{
  char *p = skip_ws(s), *q = tok_end(p);
  if (q - p != 14 || strncasecmp(p, "%%MatrixMarket", 14))
    return RD_ERR(r, "missing %%%%MatrixMarket banner (the first line starts with '%.*s')", TOKLEN(p, q), p);
  char *tok[5];
  int nt = 0;
  for (p = skip_ws(q); *p && nt < 5; p = skip_ws(q)) {
    q = tok_end(p);
    tok[nt++] = p;
    if (*q) *q++ = 0;
  }
  if (nt < 4) return RD_ERR(r, "banner needs 4 words after %%%%MatrixMarket (object format field symmetry), found %d", nt);
  if (nt > 4 || *p) return RD_ERR(r, "banner has extra words after the symmetry ('%.40s')", tok[4]);
  if (strcasecmp(tok[0], "matrix"))
    return RD_ERR(r, "banner object '%.40s' is not supported (only 'matrix')", tok[0]);
  if (!strcasecmp(tok[1], "coordinate")) b->format = FMT_COORD;
  else if (!strcasecmp(tok[1], "array")) b->format = FMT_ARRAY;
  else return RD_ERR(r, "banner format '%.40s' is not 'coordinate' or 'array'", tok[1]);
  if (!strcasecmp(tok[2], "real") || !strcasecmp(tok[2], "double")) b->field = FLD_REAL;
  else if (!strcasecmp(tok[2], "integer")) b->field = FLD_INTEGER;
  else if (!strcasecmp(tok[2], "pattern")) b->field = FLD_PATTERN;
  else if (!strcasecmp(tok[2], "complex")) return RD_ERR(r, "complex matrices are not supported");
  else return RD_ERR(r, "banner field '%.40s' is not real, integer or pattern", tok[2]);
  if (!strcasecmp(tok[3], "general")) b->symmetry = SYM_GENERAL;
  else if (!strcasecmp(tok[3], "symmetric")) b->symmetry = SYM_SYMMETRIC;
  else if (!strcasecmp(tok[3], "skew-symmetric")) b->symmetry = SYM_SKEW;
  else if (!strcasecmp(tok[3], "hermitian")) return RD_ERR(r, "hermitian matrices are not supported");
  else return RD_ERR(r, "banner symmetry '%.40s' is not general, symmetric or skew-symmetric", tok[3]);
  if (b->format == FMT_ARRAY && b->field == FLD_PATTERN)
    return RD_ERR(r, "'array pattern' is not a valid Matrix Market combination");
  if (b->field == FLD_PATTERN && b->symmetry == SYM_SKEW)
    return RD_ERR(r, "'pattern skew-symmetric' is not a valid Matrix Market combination");
  return 0;
}

/* "%%GraphBLAS type T" (LAGraph's extension): refuse unknown and complex types, and unsigned or bool
 * types for a skew-symmetric matrix (its mirrored entries are negative). Other comments: ignored. */
static int parse_graphblas(mx_reader *r, char *s, mx_banner *b)
{
  static const char *sgn[] = {"int8_t", "int16_t", "int32_t", "int64_t", "float", "double"};
  static const char *uns[] = {"bool", "uint8_t", "uint16_t", "uint32_t", "uint64_t"};
  char *p = skip_ws(s), *q = tok_end(p);
  if (q - p != 11 || strncmp(p, "%%GraphBLAS", 11)) return 0;
  p = skip_ws(q);
  q = tok_end(p);
  if (q - p != 4 || strncmp(p, "type", 4)) return 0;
  p = skip_ws(q);
  q = tok_end(p);
  size_t len = (size_t)(q - p);
  for (size_t i = 0; i < sizeof(sgn) / sizeof(sgn[0]); i++)
    if (len == strlen(sgn[i]) && !strncmp(p, sgn[i], len)) return 0;
  for (size_t i = 0; i < sizeof(uns) / sizeof(uns[0]); i++)
    if (len == strlen(uns[i]) && !strncmp(p, uns[i], len)) {
      if (b->symmetry == SYM_SKEW)
        return RD_ERR(r, "%%%%GraphBLAS type %s cannot hold a skew-symmetric matrix (mirrored entries are negative)", uns[i]);
      b->typed_unsigned = 1;
      return 0;
    }
  if (len >= 6 && !strncmp(p, "GxB_FC", 6)) return RD_ERR(r, "complex matrices are not supported (%%%%GraphBLAS type %.*s)", TOKLEN(p, q), p);
  return RD_ERR(r, "unknown %%%%GraphBLAS type '%.*s'", TOKLEN(p, q), p);
}

/* ---- size line --------------------------------------------------------------------------------- */
static int parse_sizes(mx_reader *r, char *s, const mx_banner *b, long long *M, long long *N, long long *nz)
{
  const char *what[3] = {"row count", "column count", "entry count"};
  int need = b->format == FMT_COORD ? 3 : 2;
  long long v[3] = {0, 0, 0};
  char *p = skip_ws(s);
  int n = 0;
  while (*p) {
    char *q = tok_end(p);
    if (n == need)
      return RD_ERR(r, "size line has more than %d numbers ('%.*s' is extra)", need, TOKLEN(p, q), p);
    int rc = parse_i64(p, q, 1, &v[n]);
    if (rc == 1) return RD_ERR(r, "%s '%.*s' on the size line is not an integer", what[n], TOKLEN(p, q), p);
    if (rc == 2) return RD_ERR(r, "%s '%.*s' on the size line is too large", what[n], TOKLEN(p, q), p);
    if (v[n] < 0) return RD_ERR(r, "%s %lld on the size line is negative", what[n], v[n]);
    if (n < 2 && v[n] > INT32_MAX)
      return RD_ERR(r, "%s %lld exceeds the int32 limit %d", what[n], v[n], (int)INT32_MAX);
    n++;
    p = skip_ws(q);
  }
  if (n < need)
    return RD_ERR(r, "size line needs %d numbers (%s), found %d", need,
                  need == 3 ? "rows cols entries" : "rows cols", n);
  if (b->symmetry != SYM_GENERAL && v[0] != v[1])
    return RD_ERR(r, "a %s matrix must be square, not %lld x %lld",
                  b->symmetry == SYM_SKEW ? "skew-symmetric" : "symmetric", v[0], v[1]);
  *M = v[0];
  *N = v[1];
  if (b->format == FMT_COORD) *nz = v[2];
  else if (b->symmetry == SYM_GENERAL) *nz = v[0] * v[1];
  else if (b->symmetry == SYM_SYMMETRIC) *nz = v[0] * (v[0] + 1) / 2;
  else *nz = v[0] * (v[0] - 1) / 2;
  return 0;
}

/* ---- the reader -------------------------------------------------------------------------------- */
typedef struct {
  int32_t *ri, *ci;
  double *vv; /* NULL for pattern */
  long long n, cap;
} mx_coo;

static void coo_free(mx_coo *c)
{
  free(c->ri);
  free(c->ci);
  free(c->vv);
  memset(c, 0, sizeof(*c));
}

static int coo_grow(mx_coo *c, long long want)
{
  int32_t *ri = realloc(c->ri, (size_t)want * sizeof(int32_t));
  if (ri) c->ri = ri;
  int32_t *ci = realloc(c->ci, (size_t)want * sizeof(int32_t));
  if (ci) c->ci = ci;
  double *vv = c->vv ? realloc(c->vv, (size_t)want * sizeof(double)) : NULL;
  if (vv) c->vv = vv;
  if (!ri || !ci || (c->vv && !vv)) return 1;
  c->cap = want;
  return 0;
}

/* peak bytes of reading cap entries of an M-row matrix: the COO (values unless pattern) and the CSR
 * made from it (mirrored entries doubled when sym) are alive together */
static double coo_csr_bytes(long long M, long long cap, int values, int sym)
{
  double coo = (double)cap * (values ? 16.0 : 8.0), csr_nnz = (double)cap * (sym ? 2.0 : 1.0);
  return coo + 8.0 * ((double)M + 2) + 12.0 * csr_nnz;
}

/* COO (file order, 0-based) -> CSR; symmetric entries mirrored (negated for skew). */
static int coo_to_csr(mx_coo *c, int32_t M, int32_t N, int sym, mx_io_csr *A)
{
  int64_t *rp = mx_io_calloc((size_t)M + 2, sizeof(int64_t));
  if (!rp) return 1;
  for (long long k = 0; k < c->n; k++) {
    rp[c->ri[k] + 2]++;
    if (sym && c->ri[k] != c->ci[k]) rp[c->ci[k] + 2]++;
  }
  for (int32_t i = 0; i < M; i++) rp[i + 2] += rp[i + 1];
  int64_t nz = rp[M + 1];
  int32_t *col = mx_io_malloc((size_t)nz, sizeof(int32_t));
  double *val = mx_io_malloc((size_t)nz, sizeof(double));
  if (!col || !val) {
    free(rp);
    free(col);
    free(val);
    return 1;
  }
  /* rp[i+1] is the insertion cursor of row i; after the scatter rp[i+1] = end of row i = start of i+1 */
  for (long long k = 0; k < c->n; k++) {
    int32_t i = c->ri[k], j = c->ci[k];
    double v = c->vv ? c->vv[k] : 1.0;
    int64_t at = rp[i + 1]++;
    col[at] = j;
    val[at] = v;
    if (sym && i != j) {
      at = rp[j + 1]++;
      col[at] = i;
      val[at] = sym == SYM_SKEW ? -v : v;
    }
  }
  coo_free(c);
  int64_t nnz = mx_io_csr_sort_dedup(M, rp, col, val);
  if (nnz < nz && nnz > 0) {
    int32_t *c2 = realloc(col, (size_t)nnz * sizeof(int32_t));
    if (c2) col = c2;
    double *v2 = realloc(val, (size_t)nnz * sizeof(double));
    if (v2) val = v2;
  }
  int64_t *rp2 = realloc(rp, ((size_t)M + 1) * sizeof(int64_t));
  A->nrows = M;
  A->ncols = N;
  A->nnz = nnz;
  A->rowptr = rp2 ? rp2 : rp;
  A->colidx = col;
  A->val = val;
  return 0;
}

static int read_entries(mx_reader *r, const mx_banner *b, long long M, long long N, long long nz, long long size_line,
                        unsigned flags, mx_coo *c)
{
  int allow_nf = (flags & MX_MTX_ALLOW_NONFINITE) != 0;
  long long k = 0, ai = 0, aj = 0; /* array format: next position (row ai, column aj), column-major */
  if (b->format == FMT_ARRAY && b->symmetry == SYM_SKEW) ai = 1;
  char *s, *e;
  int rc;
  while ((rc = rd_line(r, &s, &e)) == 1) {
    char *p = skip_ws(s), *q;
    if (!*p || *p == '%') continue; /* blank line or comment */
    if (k == nz)
      return RD_ERR(r, "more entries than the %lld declared on line %lld", nz, size_line);
    if (k == c->cap && coo_grow(c, c->cap * 2 < nz ? c->cap * 2 : nz))
      return RD_ERR(r, "out of memory after %lld entries", k);
    long long i, j;
    if (b->format == FMT_COORD) {
      q = tok_end(p);
      int ir = parse_i64(p, q, 0, &i);
      if (ir) return RD_ERR(r, "row index '%.*s' is not a positive integer", TOKLEN(p, q), p);
      if (i < 1 || i > M) return RD_ERR(r, "row index %lld out of range 1..%lld", i, M);
      p = skip_ws(q);
      if (!*p) return RD_ERR(r, "missing column index");
      q = tok_end(p);
      ir = parse_i64(p, q, 0, &j);
      if (ir) return RD_ERR(r, "column index '%.*s' is not a positive integer", TOKLEN(p, q), p);
      if (j < 1 || j > N) return RD_ERR(r, "column index %lld out of range 1..%lld", j, N);
      if (b->symmetry == SYM_SKEW && i == j)
        return RD_ERR(r, "diagonal entry (%lld,%lld) in a skew-symmetric matrix", i, j);
      i--;
      j--;
      p = skip_ws(q);
    } else {
      i = ai;
      j = aj;
      if (++ai == M) {
        aj++;
        ai = b->symmetry == SYM_GENERAL ? 0 : b->symmetry == SYM_SYMMETRIC ? aj : aj + 1;
      }
    }
    c->ri[k] = (int32_t)i;
    c->ci[k] = (int32_t)j;
    if (b->field != FLD_PATTERN) {
      if (!*p) return RD_ERR(r, "missing value");
      q = tok_end(p);
      double v;
      if (b->field == FLD_INTEGER) {
        long long iv;
        int ir = parse_i64(p, q, 1, &iv);
        if (ir == 1) return RD_ERR(r, "value '%.*s' is not an integer", TOKLEN(p, q), p);
        if (ir == 2) return RD_ERR(r, "integer value '%.*s' is out of range", TOKLEN(p, q), p);
        v = (double)iv;
      } else {
        int vr = parse_real(p, q, allow_nf, &v);
        if (vr == 1) return RD_ERR(r, "value '%.*s' is not a number", TOKLEN(p, q), p);
        if (vr == 2) return RD_ERR(r, "value '%.*s' is not finite (nan/inf/overflow refused)", TOKLEN(p, q), p);
      }
      if (b->typed_unsigned && v < 0)
        return RD_ERR(r, "negative value '%.*s' for an unsigned %%%%GraphBLAS type", TOKLEN(p, q), p);
      c->vv[k] = v;
      p = skip_ws(q);
    }
    if (*p) {
      q = tok_end(p);
      return RD_ERR(r, "unexpected text '%.*s' after the entry", TOKLEN(p, q), p);
    }
    k++;
  }
  if (rc < 0) return 1;
  if (k < nz) return RD_ERR(r, "expected %lld entries (line %lld), found %lld: file ends early", nz, size_line, k);
  c->n = k;
  return 0;
}

int mx_mtx_read_flags(const char *path, unsigned flags, mx_io_csr *A, char *err, size_t errlen)
{
  if (!A) return mx_io_errf(err, errlen, "%s: NULL output matrix", path ? path : "(null)");
  memset(A, 0, sizeof(*A));
  if (!path) return mx_io_errf(err, errlen, "(null): no file name");
  mx_reader r = {0};
  r.path = path;
  r.err = err;
  r.errlen = errlen;
  mx_coo c = {0};
  int rc = 1;
  r.f = fopen(path, "rb");
  if (!r.f) return mx_io_errf(err, errlen, "%s:0: cannot open: %s", path, strerror(errno));
  long long fsize = -1;
  if (!fseek(r.f, 0, SEEK_END)) fsize = ftell(r.f);
  if (fseek(r.f, 0, SEEK_SET)) fsize = -1;
  r.cap = MX_MTX_BUF;
  if (fsize >= 0 && (unsigned long long)fsize < r.cap) r.cap = (size_t)fsize + 1; /* +1: EOF seen in one read */
  r.buf = malloc(r.cap + 1);
  if (!r.buf) {
    fclose(r.f);
    return mx_io_errf(err, errlen, "%s:0: out of memory", path);
  }
  char *s, *e;
  int lr = rd_line(&r, &s, &e);
  if (lr < 0) goto done;
  if (lr == 0) {
    r.line = 1;
    RD_ERR(&r, "empty file (expected a %%%%MatrixMarket banner)");
    goto done;
  }
  mx_banner b = {0};
  if (parse_banner(&r, s, &b)) goto done;
  /* comments, then the size line */
  long long M = 0, N = 0, nz = 0;
  for (;;) {
    lr = rd_line(&r, &s, &e);
    if (lr < 0) goto done;
    if (lr == 0) {
      RD_ERR(&r, "file ends before the size line");
      goto done;
    }
    char *p = skip_ws(s);
    if (*p == '%') {
      if (parse_graphblas(&r, p, &b)) goto done;
      continue;
    }
    if (!*p) continue;
    if (parse_sizes(&r, p, &b, &M, &N, &nz)) goto done;
    break;
  }
  long long size_line = r.line;
  /* capacity: the declared count, but never more entries than the rest of the file could hold
   * (each entry takes at least 2 bytes), so a lying size line cannot make us allocate terabytes */
  long long cap = nz;
  if (fsize >= 0 && cap > fsize / 2 + 1) cap = fsize / 2 + 1;
  if (cap < 1) cap = 1;
  char why[200];
  if (!mx_mem_fits(coo_csr_bytes(M, cap, b.field != FLD_PATTERN, b.symmetry != SYM_GENERAL), why, sizeof why)) {
    RD_ERR(&r, "%lld x %lld with %lld entries: %s", M, N, nz, why);
    goto done;
  }
  c.ri = mx_io_malloc((size_t)cap, sizeof(int32_t));
  c.ci = mx_io_malloc((size_t)cap, sizeof(int32_t));
  if (b.field != FLD_PATTERN) c.vv = mx_io_malloc((size_t)cap, sizeof(double));
  c.cap = cap;
  if (!c.ri || !c.ci || (b.field != FLD_PATTERN && !c.vv)) {
    RD_ERR(&r, "out of memory for %lld entries", nz);
    goto done;
  }
  if (read_entries(&r, &b, M, N, nz, size_line, flags, &c)) goto done;
  if (coo_to_csr(&c, (int32_t)M, (int32_t)N, b.symmetry, A)) {
    RD_ERR(&r, "out of memory building CSR for %lld entries", c.n);
    goto done;
  }
  rc = 0;
done:
  coo_free(&c);
  free(r.buf);
  fclose(r.f);
  return rc;
}

int mx_mtx_read(const char *path, mx_io_csr *A, char *err, size_t errlen)
{
  return mx_mtx_read_flags(path, 0, A, err, errlen);
}

/* ---- writer ------------------------------------------------------------------------------------ */
/* decimal of v into s, returns length */
static int fmt_u64(char *s, unsigned long long v)
{
  char t[24];
  int n = 0;
  do {
    t[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (int i = 0; i < n; i++) s[i] = t[n - 1 - i];
  return n;
}

/* integers below 2^53 as integers; else %.15g if it reads back exactly (short decimals stay short),
 * else %.17g (always exact) */
static int fmt_double(char *s, double v)
{
  if (fabs(v) < 9007199254740992.0 && v == (double)(long long)v) {
    if (v < 0 || signbit(v)) {
      s[0] = '-';
      return 1 + fmt_u64(s + 1, (unsigned long long)(-(long long)v));
    }
    return fmt_u64(s, (unsigned long long)v);
  }
  int n = snprintf(s, 32, "%.15g", v);
  if (strtod(s, NULL) == v) return n;
  return snprintf(s, 32, "%.17g", v);
}

int mx_mtx_write(const char *path, const mx_io_csr *A, char *err, size_t errlen)
{
  if (!path) return mx_io_errf(err, errlen, "(null): no file name");
  char cerr[200];
  if (mx_io_csr_check(A, cerr, sizeof(cerr))) return mx_io_errf(err, errlen, "%s: not written: %s", path, cerr);
  FILE *f = fopen(path, "wb");
  if (!f) return mx_io_errf(err, errlen, "%s: cannot open for writing: %s", path, strerror(errno));
  size_t cap = 1u << 20, n = 0;
  char *buf = malloc(cap);
  int bad = !buf;
  if (!bad)
    n = (size_t)snprintf(buf, cap, "%%%%MatrixMarket matrix coordinate real general\n%%%% written by matxtract\n%d %d %lld\n",
                         (int)A->nrows, (int)A->ncols, (long long)A->nnz);
  for (int32_t i = 0; i < A->nrows && !bad; i++) {
    for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
      if (cap - n < 96) {
        if (fwrite(buf, 1, n, f) != n) {
          bad = 1;
          break;
        }
        n = 0;
      }
      n += (size_t)fmt_u64(buf + n, (unsigned long long)i + 1);
      buf[n++] = ' ';
      n += (size_t)fmt_u64(buf + n, (unsigned long long)A->colidx[k] + 1);
      buf[n++] = ' ';
      n += (size_t)fmt_double(buf + n, A->val[k]);
      buf[n++] = '\n';
    }
  }
  if (!bad && n && fwrite(buf, 1, n, f) != n) bad = 1;
  int e = errno;
  free(buf);
  if (fclose(f)) bad = 1, e = errno;
  if (bad) {
    remove(path);
    return mx_io_errf(err, errlen, "%s: write failed: %s", path, strerror(e));
  }
  return 0;
}
