/* mx_engine.h - the plan engine's decision loop (pure C, no PETSc, no CUDA).
 *
 * Everything the Mat type may do to a matrix after its first build is a lever: predict the plan,
 * switch the cold kernel, rebuild at the predicted plan, the row-pattern form, the pack, the hub
 * split. A lever is a row of one table: its estimated cost (fixed + per nonzero, plus the products
 * its guard times), its expected gain, and how to apply and undo it (callbacks of the caller, who
 * owns the matrix). One loop (mx_engine_step, before each product) decides when each pays, with
 * the ski-rental rule mx_upgrade_decide; one guard times what a lever changed and keeps the faster;
 * each lever has one state.
 *
 * Invariants:
 *   - A lever leaves PENDING once, to KEPT, DECLINED or FAILED; only mx_engine_arm puts it back.
 *   - A lever that fails to apply (soft failure: out of memory, a kernel the device refuses) leaves
 *     the plan in use exactly as it was (the callback's contract) and is FAILED.
 *   - With the guard on, a lever kept is one the guard timed strictly faster than the plan before it;
 *     one timed not faster is undone (the callback restores the plan before it) and DECLINED.
 *   - A lever whose peak bytes exceed the bytes available is DECLINED without being applied.
 *   - At most one lever is applied per step (its products and its timing are the step's cost). */
#ifndef MX_ENGINE_H
#define MX_ENGINE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  MX_LEVER_OFF = 0,  /* not for this plan or these settings (why says which) */
  MX_LEVER_PENDING,  /* waits until it pays (asked before every product) */
  MX_LEVER_KEPT,     /* applied and kept */
  MX_LEVER_DECLINED, /* decided against: cannot pay, too many bytes, or the guard timed it slower */
  MX_LEVER_FAILED    /* applying it failed; the plan stayed as it was */
} mx_lever_state;

/* The table's constants of one lever (seconds, nanoseconds per nonzero, fraction of a product). */
typedef struct {
  const char *name;
  double fixed_s;    /* cost of applying it: fixed seconds ... */
  double ns_per_nnz; /* ... plus nanoseconds per nonzero of the matrix */
  double gain;       /* fraction of a product it is assumed to save until its guard times it */
  int guard_reps;    /* products the guard times of the new form (and of the old one when
                        guard_times_old): counted in the cost when the guard is on. 0: a lever
                        that changes no format (the prediction): never timed, t_cur unchanged */
  int guard_times_old; /* 1: the guard times the plan before the lever too (its time is not known
                          from the same kind of timing); a timing above 1.1 t_cur is taken again
                          and the lower kept */
} mx_lever_row;

typedef struct {
  const mx_lever_row *row;
  mx_lever_state state;
  const char *why;   /* static text: why OFF, DECLINED or FAILED; NULL otherwise */
  double cost_s;     /* the last estimated cost (0: never weighed) */
  double t_new_s;    /* the last predicted seconds per product after it (0: never weighed) */
  double t_before_s; /* guard: seconds per product before it (0: not timed) */
  double t_after_s;  /* guard: seconds per product after it (0: not timed) */
} mx_lever;

/* What the caller knows now. t_cur: seconds per product of the plan in use (> 0 to weigh any
 * lever); spent: seconds of products on it so far; expected: products the user expects in all
 * (<= 0: unknown); nnz: the matrix's nonzeros; bytes_free: bytes a lever may take at its peak
 * (SIZE_MAX: no bound); guard: 1 = time what a lever changed and keep the faster; t_floor: seconds
 * of a product that no lever shortens (launch and latency; 0: none): a lever saves at most
 * t_cur - t_floor, so a product at or below it declines every lever. */
typedef struct {
  double t_cur, spent, expected, nnz;
  size_t bytes_free;
  int guard;
  double t_floor;
} mx_engine_clock;

/* Callback results. */
enum { MX_LEVER_OK = 0, MX_LEVER_SOFT_FAIL = 1, MX_LEVER_NOT_YET = 2, MX_LEVER_NOT_NEEDED = 3, MX_LEVER_HARD_ERROR = -1 };

/* The caller's side of each lever; ctx is the caller's object, i the lever's index in the table.
 * Every callback returns MX_LEVER_OK or MX_LEVER_HARD_ERROR (the caller's own error, which the step
 * returns at once, changing no state), plus the codes each one lists. */
typedef struct {
  /* whether lever i may be weighed now: OK, NOT_YET (asked again before the next product: e.g. a
   * prediction still running) or NOT_NEEDED (*why set: the lever becomes OFF). NULL: always OK. */
  int (*ready)(void *ctx, int i, const char **why);
  /* predicted seconds per product after lever i; NULL or not set (*t_new <= 0): the row's gain of
   * the movable part (see mx_engine_clock's t_floor) */
  int (*predict)(void *ctx, int i, double t_cur, double *t_new);
  /* bytes lever i needs at its peak beyond what is held; NULL: 0 */
  int (*bytes)(void *ctx, int i, size_t *bytes);
  /* apply lever i: OK, or SOFT_FAIL (*why set, the plan as it was) */
  int (*apply)(void *ctx, int i, const char **why);
  /* seconds per product of what is in use now (the guard's timing) */
  int (*time)(void *ctx, double *seconds);
  /* undo lever i (after the guard timed it slower): the plan before it again */
  int (*undo)(void *ctx, int i);
} mx_lever_ops;

/* Set lever i PENDING (why NULL) or OFF (why: the reason) and clear its numbers. */
void mx_engine_arm(mx_lever *levers, int i, int pending, const char *why);

/* Estimated cost of lever i at clk (seconds): fixed + ns * nnz + guard products
 * (guard_reps * t_new, + guard_reps * t_cur when guard_times_old) when clk->guard. */
double mx_engine_cost(const mx_lever_row *row, const mx_engine_clock *clk, double t_new);

typedef enum {
  MX_ENGINE_IDLE = 0, /* nothing pending */
  MX_ENGINE_WAIT,     /* something pending, nothing applied this step */
  MX_ENGINE_CHANGED,  /* a lever was applied (kept or undone): the plan's time is clk->t_cur now */
  MX_ENGINE_ERROR     /* a callback returned MX_LEVER_HARD_ERROR */
} mx_engine_result;

/* One decision before a product. Levers are weighed in table order; a PENDING lever is skipped for
 * this step when ready says NOT_YET or the rule says LATER (later levers are still weighed). The
 * first one the rule says NOW for is applied (bytes first: more than bytes_free -> DECLINED), then,
 * with the guard, timed: faster -> KEPT and clk->t_cur the new time; not faster -> undone, DECLINED.
 * Without the guard -> KEPT and clk->t_cur = its predicted time; a row with guard_reps 0 -> KEPT,
 * clk->t_cur unchanged. NEVER -> DECLINED. A SOFT_FAIL of apply -> FAILED (the next lever may still
 * be weighed in the same step).
 * *applied: the index of the lever applied this step, or -1. */
mx_engine_result mx_engine_step(mx_lever *levers, int n, const mx_lever_ops *ops, void *ctx, mx_engine_clock *clk, int *applied);

/* Lever i now, whatever the rule says (a decision at the build, where its cost is small next to the
 * build's): ready first (NOT_YET -> WAIT, nothing done; NOT_NEEDED -> OFF, WAIT), then as a step that
 * said NOW: bytes, apply, guard. CHANGED when it was applied (kept or undone), WAIT when not
 * (declined for bytes, failed, not ready), ERROR on a hard error; IDLE when i is not PENDING. */
mx_engine_result mx_engine_apply_now(mx_lever *levers, int n, int i, const mx_lever_ops *ops, void *ctx, mx_engine_clock *clk);

/* Whether any lever is PENDING. */
int mx_engine_pending(const mx_lever *levers, int n);

const char *mx_lever_state_name(mx_lever_state s);

#ifdef __cplusplus
}
#endif
#endif
