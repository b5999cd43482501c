/* mx_engine.c - the plan engine's decision loop: weigh each PENDING lever with the ski-rental rule,
 * apply at most one per step, let the guard keep it only when timed strictly faster. See mx_engine.h.
 *
 * One lever is weighed on a copy (w) that is written back only when no callback returned
 * MX_LEVER_HARD_ERROR: a hard error leaves that lever and the clock exactly as they were. */
#include <math.h>
#include <stddef.h>

#include "mx_engine.h"
#include "mx_plan.h"

/* What weighing one lever leads to. */
typedef enum {
  ONE_NEXT,     /* nothing applied: go on with the next lever (w may be settled) */
  ONE_APPLIED,  /* applied (kept or undone): the step ends, CHANGED */
  ONE_NO_CLOCK, /* t_cur <= 0: nothing can be weighed, the step ends, WAIT */
  ONE_ERROR     /* a callback's hard error (or a code it may not return): the step ends, ERROR */
} one_outcome;

static const char *const why_off = "switched off by the caller";
static const char *const why_not_needed = "not needed";
static const char *const why_expected = "the expected products cannot pay for it";
static const char *const why_no_gain = "it cannot pay for its cost (no gain)";
static const char *const why_floor = "a product takes no more than its fixed latency (nothing to save)";
static const char *const why_bytes = "needs more device memory than is free";
static const char *const why_failed = "applying it failed";
static const char *const why_slower = "the guard timed it slower";

/* PENDING (why NULL) or OFF (why never NULL); numbers cleared, row kept. */
void mx_engine_arm(mx_lever *levers, int i, int pending, const char *why) {
  if (!levers || i < 0) return;
  mx_lever *l = &levers[i];
  l->state = pending ? MX_LEVER_PENDING : MX_LEVER_OFF;
  l->why = pending ? NULL : (why ? why : why_off);
  l->cost_s = l->t_new_s = l->t_before_s = l->t_after_s = 0.0;
}

/* cost = fixed + 1e-9 ns nnz + [guard] reps (t_new + [guard_times_old] t_cur) */
double mx_engine_cost(const mx_lever_row *row, const mx_engine_clock *clk, double t_new) {
  if (!row || !clk) return 0.0;
  double cost = row->fixed_s + 1e-9 * row->ns_per_nnz * clk->nnz;
  if (clk->guard && row->guard_reps > 0) {
    cost += row->guard_reps * t_new;
    if (row->guard_times_old) cost += row->guard_reps * clk->t_cur;
  }
  return cost;
}

/* 1 iff some lever is PENDING */
int mx_engine_pending(const mx_lever *levers, int n) {
  for (int i = 0; levers && i < n; i++)
    if (levers[i].state == MX_LEVER_PENDING) return 1;
  return 0;
}

const char *mx_lever_state_name(mx_lever_state s) {
  static const char *const names[] = {"off", "pending", "kept", "declined", "failed"};
  return ((int)s >= MX_LEVER_OFF && (int)s <= MX_LEVER_FAILED) ? names[s] : "?";
}

/* A lever leaves PENDING once: to its final state with its reason. */
static void settle(mx_lever *w, mx_lever_state s, const char *why) {
  w->state = s;
  w->why = why;
}

/* ready: OK -> weigh; NOT_YET -> next lever (still PENDING); NOT_NEEDED -> OFF, next lever. */
static one_outcome ask_ready(mx_lever *w, int i, const mx_lever_ops *ops, void *ctx, int *go) {
  const char *why = NULL;
  const int rc = ops->ready ? ops->ready(ctx, i, &why) : MX_LEVER_OK;
  *go = rc == MX_LEVER_OK;
  if (rc == MX_LEVER_NOT_NEEDED) settle(w, MX_LEVER_OFF, why ? why : why_not_needed);
  return rc == MX_LEVER_OK || rc == MX_LEVER_NOT_YET || rc == MX_LEVER_NOT_NEEDED ? ONE_NEXT : ONE_ERROR;
}

/* t_new = t_cur - saving: predict's saving (t_cur - its time) when it sets a time > 0, else gain x
 * the movable part t_cur - t_floor (all of t_cur without a floor); a saving is at most the movable
 * part (a lever shortens what a product moves, not its fixed latency), so at or below the floor no
 * lever gains. 0, or -1 on a hard error. */
static int predict_time(const mx_lever *w, int i, const mx_lever_ops *ops, void *ctx, const mx_engine_clock *clk, double *t_new) {
  double t = 0.0;
  if (ops->predict && ops->predict(ctx, i, clk->t_cur, &t) != MX_LEVER_OK) return -1;
  const double movable = clk->t_floor > 0.0 ? fmax(0.0, clk->t_cur - clk->t_floor) : clk->t_cur;
  double saving = t > 0.0 ? clk->t_cur - t : w->row->gain * movable;
  if (saving > movable) saving = movable;
  *t_new = clk->t_cur - saving;
  return 0;
}

/* bytes > bytes_free -> DECLINED, never applied. *fits = 1 when it may be applied. */
static one_outcome check_bytes(mx_lever *w, int i, const mx_lever_ops *ops, void *ctx, size_t bytes_free, int *fits) {
  size_t b = 0;
  if (ops->bytes && ops->bytes(ctx, i, &b) != MX_LEVER_OK) return ONE_ERROR;
  *fits = b <= bytes_free;
  if (!*fits) settle(w, MX_LEVER_DECLINED, why_bytes);
  return ONE_NEXT;
}

/* Kept iff the guard timed the new form strictly faster than the plan before it (0 < t < t_before);
 * else (a time not > 0 included) undone, the plan before it again, and DECLINED. *t_kept: the new time. */
static one_outcome guard(mx_lever *w, int i, const mx_lever_ops *ops, void *ctx, double t_before, double *t_kept) {
  double t = 0.0;
  if (!ops->time || ops->time(ctx, &t) != MX_LEVER_OK) return ONE_ERROR;
  w->t_before_s = t_before;
  w->t_after_s = t;
  if (t > 0.0 && t < t_before) {
    settle(w, MX_LEVER_KEPT, NULL);
    *t_kept = t;
    return ONE_APPLIED;
  }
  if (!ops->undo || ops->undo(ctx, i) != MX_LEVER_OK) return ONE_ERROR;
  settle(w, MX_LEVER_DECLINED, why_slower);
  return ONE_APPLIED;
}

/* The plan before a lever timed (guard_times_old): a timing above MX_GUARD_RETIME times the plan's
 * known time t_cur is taken once more and the lower kept, so that one slow timing of the plan in
 * use does not let a slower form in (both timings are of the kind the new form's is; the
 * measurement behind the factor: docs/performance.md, "Plan engine costs"). 0, or -1 on a hard error. */
#define MX_GUARD_RETIME 1.10
static int time_before(const mx_lever_ops *ops, void *ctx, double t_cur, double *t_before) {
  if (!ops->time || ops->time(ctx, t_before) != MX_LEVER_OK) return -1;
  if (t_cur > 0.0 && *t_before > MX_GUARD_RETIME * t_cur) {
    double again = 0.0;
    if (ops->time(ctx, &again) != MX_LEVER_OK) return -1;
    if (again > 0.0 && again < *t_before) *t_before = again;
  }
  return 0;
}

/* The rule said NOW: bytes first, then (guard_times_old) time the plan before it, apply, and keep:
 * guard_reps 0 -> t_cur unchanged; guard on -> the guard decides; guard off -> t_cur = t_new. */
static one_outcome apply_lever(mx_lever *w, int i, const mx_lever_ops *ops, void *ctx, const mx_engine_clock *clk,
                               double *t_kept) {
  int fits = 0;
  if (check_bytes(w, i, ops, ctx, clk->bytes_free, &fits) == ONE_ERROR) return ONE_ERROR;
  if (!fits) return ONE_NEXT;
  const int timed = clk->guard && w->row->guard_reps > 0;
  double t_before = clk->t_cur;
  if (timed && w->row->guard_times_old && time_before(ops, ctx, clk->t_cur, &t_before)) return ONE_ERROR;
  const char *why = NULL;
  const int rc = ops->apply ? ops->apply(ctx, i, &why) : MX_LEVER_HARD_ERROR;
  if (rc == MX_LEVER_SOFT_FAIL) {
    settle(w, MX_LEVER_FAILED, why ? why : why_failed);
    return ONE_NEXT;
  }
  if (rc != MX_LEVER_OK) return ONE_ERROR;
  if (timed) return guard(w, i, ops, ctx, t_before, t_kept);
  settle(w, MX_LEVER_KEPT, NULL);
  *t_kept = w->row->guard_reps > 0 ? w->t_new_s : clk->t_cur;
  return ONE_APPLIED;
}

/* One PENDING lever: ready, then t_new and cost, then the rule: LATER -> next, NEVER -> DECLINED,
 * NOW -> apply_lever. */
static one_outcome weigh_one(mx_lever *w, int i, const mx_lever_ops *ops, void *ctx, const mx_engine_clock *clk,
                             double *t_kept) {
  int go = 0;
  if (!w->row) return ONE_ERROR; /* a PENDING lever without its row: the caller's bug */
  if (ask_ready(w, i, ops, ctx, &go) == ONE_ERROR) return ONE_ERROR;
  if (!go) return ONE_NEXT;
  if (!(clk->t_cur > 0.0)) return ONE_NO_CLOCK;
  double t_new = 0.0;
  if (predict_time(w, i, ops, ctx, clk, &t_new)) return ONE_ERROR;
  w->t_new_s = t_new;
  w->cost_s = mx_engine_cost(w->row, clk, t_new);
  switch (mx_upgrade_decide(clk->t_cur, t_new, w->cost_s, clk->spent, clk->expected)) {
  case MX_UPGRADE_NOW: return apply_lever(w, i, ops, ctx, clk, t_kept);
  case MX_UPGRADE_LATER: return ONE_NEXT;
  default: /* NEVER */
    settle(w, MX_LEVER_DECLINED, clk->t_floor > 0.0 && clk->t_cur <= clk->t_floor ? why_floor : clk->expected > 0.0 ? why_expected : why_no_gain);
    return ONE_NEXT;
  }
}

/* Levers in table order; the first applied ends the step (CHANGED, clk->t_cur its time); a hard error
 * ends it at once (ERROR, that lever and the clock unchanged); else WAIT while any is PENDING, IDLE. */
mx_engine_result mx_engine_step(mx_lever *levers, int n, const mx_lever_ops *ops, void *ctx, mx_engine_clock *clk,
                                int *applied) {
  if (applied) *applied = -1;
  if ((!levers && n > 0) || !ops || !clk) return MX_ENGINE_ERROR;
  for (int i = 0; i < n; i++) {
    if (levers[i].state != MX_LEVER_PENDING) continue;
    mx_lever w = levers[i];
    double t_kept = clk->t_cur;
    const one_outcome r = weigh_one(&w, i, ops, ctx, clk, &t_kept);
    if (r == ONE_ERROR) return MX_ENGINE_ERROR;
    if (r == ONE_NO_CLOCK) return MX_ENGINE_WAIT;
    levers[i] = w;
    if (r == ONE_APPLIED) {
      clk->t_cur = t_kept;
      if (applied) *applied = i;
      return MX_ENGINE_CHANGED;
    }
  }
  return mx_engine_pending(levers, n) ? MX_ENGINE_WAIT : MX_ENGINE_IDLE;
}

/* Lever i applied whatever the rule says: ready, t_new and cost recorded, then apply_lever. */
mx_engine_result mx_engine_apply_now(mx_lever *levers, int n, int i, const mx_lever_ops *ops, void *ctx, mx_engine_clock *clk) {
  if (!levers || !ops || !clk || i < 0 || i >= n) return MX_ENGINE_ERROR;
  if (levers[i].state != MX_LEVER_PENDING) return MX_ENGINE_IDLE;
  mx_lever w = levers[i];
  int go = 0;
  if (!w.row) return MX_ENGINE_ERROR;
  if (ask_ready(&w, i, ops, ctx, &go) == ONE_ERROR) return MX_ENGINE_ERROR;
  if (!go) {
    levers[i] = w;
    return MX_ENGINE_WAIT;
  }
  double t_new = 0.0, t_kept = clk->t_cur;
  if (predict_time(&w, i, ops, ctx, clk, &t_new)) return MX_ENGINE_ERROR;
  w.t_new_s = t_new;
  w.cost_s = mx_engine_cost(w.row, clk, t_new);
  const one_outcome r = apply_lever(&w, i, ops, ctx, clk, &t_kept);
  if (r == ONE_ERROR) return MX_ENGINE_ERROR;
  levers[i] = w;
  if (r != ONE_APPLIED) return MX_ENGINE_WAIT;
  clk->t_cur = t_kept;
  return MX_ENGINE_CHANGED;
}
