/* test_core_engine.c - the plan engine's decision loop (mx_engine_step) with fake levers over a fake
 * matrix: the "plan in use" is an int, each plan has a true time per product (what the guard's
 * timing returns), each lever switches to its own plan, and every callback counts its calls and can
 * be told to fail. Cases: a lever that pays after a few products, one timed slower (undone), one that
 * fails to apply, one too big for the free bytes, expected products (now / never), ready (not yet /
 * not needed), hard errors from every callback (nothing changed), guard off, guard_reps 0, predict,
 * the cost formula, the guard timing the old plan (and once more after a slow timing), one lever per
 * step, pending/idle, t_cur <= 0, the latency floor. */
#include <math.h>
#include <string.h>
#include "core/mx_engine.h"
#include "test_util.h"

/* ---- the fake matrix and its levers ------------------------------------------------------------- */
#define NL 4    /* levers at most */
#define NPLAN 8 /* plan ids */

/* Which callback returns MX_LEVER_HARD_ERROR (for lever hard_lever; time: on call number hard_call). */
enum { H_NONE, H_READY, H_PREDICT, H_BYTES, H_APPLY, H_TIME, H_UNDO };

typedef struct {
  int plan;             /* the plan in use */
  double t_true[NPLAN]; /* seconds per product of each plan: what time() returns */
  int target[NL];       /* the plan lever i switches to */
  int prev[NL];         /* the plan before lever i's apply: what undo restores */
  int ready_rc[NL];     /* MX_LEVER_OK, NOT_YET or NOT_NEEDED */
  const char *ready_why[NL];
  double predict_t[NL];    /* what predict sets (<= 0: nothing) */
  double predict_tcur[NL]; /* the t_cur predict was last given */
  size_t bytes[NL];
  int soft_fail[NL]; /* 1: apply fails softly (with apply_why) */
  const char *apply_why[NL];
  int hard, hard_lever, hard_call;
  int spike_call;  /* > 0: time() call number spike_call returns spike_t (one slow timing) */
  double spike_t;
  int n_ready[NL], n_predict[NL], n_bytes[NL], n_apply[NL], n_undo[NL], n_time;
} fake;

static int is_hard(const fake *f, int what, int i) { return f->hard == what && f->hard_lever == i; }

static int f_ready(void *ctx, int i, const char **why) {
  fake *f = ctx;
  f->n_ready[i]++;
  if (is_hard(f, H_READY, i)) return MX_LEVER_HARD_ERROR;
  if (f->ready_rc[i] == MX_LEVER_NOT_NEEDED) *why = f->ready_why[i];
  return f->ready_rc[i];
}

static int f_predict(void *ctx, int i, double t_cur, double *t_new) {
  fake *f = ctx;
  f->n_predict[i]++;
  f->predict_tcur[i] = t_cur;
  if (is_hard(f, H_PREDICT, i)) return MX_LEVER_HARD_ERROR;
  if (f->predict_t[i] > 0.0) *t_new = f->predict_t[i];
  return MX_LEVER_OK;
}

static int f_bytes(void *ctx, int i, size_t *bytes) {
  fake *f = ctx;
  f->n_bytes[i]++;
  if (is_hard(f, H_BYTES, i)) return MX_LEVER_HARD_ERROR;
  *bytes = f->bytes[i];
  return MX_LEVER_OK;
}

static int f_apply(void *ctx, int i, const char **why) {
  fake *f = ctx;
  f->n_apply[i]++;
  if (is_hard(f, H_APPLY, i)) return MX_LEVER_HARD_ERROR;
  if (f->soft_fail[i]) {
    *why = f->apply_why[i];
    return MX_LEVER_SOFT_FAIL;
  }
  f->prev[i] = f->plan;
  f->plan = f->target[i];
  return MX_LEVER_OK;
}

static int f_time(void *ctx, double *seconds) {
  fake *f = ctx;
  f->n_time++;
  if (f->hard == H_TIME && f->n_time == f->hard_call) return MX_LEVER_HARD_ERROR;
  *seconds = f->n_time == f->spike_call ? f->spike_t : f->t_true[f->plan];
  return MX_LEVER_OK;
}

static int f_undo(void *ctx, int i) {
  fake *f = ctx;
  f->n_undo[i]++;
  if (is_hard(f, H_UNDO, i)) return MX_LEVER_HARD_ERROR;
  f->plan = f->prev[i];
  return MX_LEVER_OK;
}

static const mx_lever_ops ops_all = {f_ready, f_predict, f_bytes, f_apply, f_time, f_undo};
static const mx_lever_ops ops_min = {NULL, NULL, NULL, f_apply, f_time, f_undo};

/* A fake at plan 0 (true time 1 s), lever i switching to plan i + 1 (true time 1 s until set). */
static fake fake_new(void) {
  fake f;
  memset(&f, 0, sizeof f);
  for (int p = 0; p < NPLAN; p++) f.t_true[p] = 1.0;
  for (int i = 0; i < NL; i++) f.target[i] = i + 1, f.prev[i] = -1;
  return f;
}

/* Levers 0..n-1 over rows, all PENDING. */
static void arm_all(mx_lever *lv, const mx_lever_row *rows, int n) {
  for (int i = 0; i < n; i++) {
    lv[i].row = &rows[i];
    mx_engine_arm(lv, i, 1, NULL);
  }
}

/* t_cur 1 s, nothing spent, expected unknown, 1e6 nonzeros, no byte bound, guard on. */
static mx_engine_clock clock_new(void) {
  mx_engine_clock c = {1.0, 0.0, 0.0, 1e6, SIZE_MAX, 1, 0.0};
  return c;
}

static int untouched(const mx_lever *l) {
  return l->state == MX_LEVER_PENDING && !l->why && l->cost_s == 0.0 && l->t_new_s == 0.0 && l->t_before_s == 0.0 &&
         l->t_after_s == 0.0;
}

/* ---- cases ------------------------------------------------------------------------------------------ */

/* gain 0.5, fixed 2 s, 2 guard reps: cost = 2 + 2 * 0.5 = 3 s; unknown expected: NOW iff
 * (spent + 1) * 0.5 >= 3, i.e. spent >= 5 products of 1 s. LATER five steps, then applied, timed 0.75. */
static void pays_after_a_few(void) {
  const mx_lever_row rows[] = {{"late", 2.0, 0.0, 0.5, 2, 0}};
  mx_lever lv[1];
  arm_all(lv, rows, 1);
  fake f = fake_new();
  f.t_true[1] = 0.75;
  mx_engine_clock clk = clock_new();
  int applied = 7;
  for (int k = 0; k < 5; k++, clk.spent += clk.t_cur) {
    CHECK(mx_engine_step(lv, 1, &ops_all, &f, &clk, &applied) == MX_ENGINE_WAIT, "step %d: WAIT", k);
    CHECK(applied == -1 && lv[0].state == MX_LEVER_PENDING && !lv[0].why, "step %d: still pending", k);
    CHECK(lv[0].cost_s == 3.0 && lv[0].t_new_s == 0.5, "step %d: weighed (cost %g, t_new %g)", k, lv[0].cost_s,
          lv[0].t_new_s);
    CHECK(f.plan == 0 && f.n_apply[0] == 0 && f.n_time == 0 && clk.t_cur == 1.0, "step %d: nothing applied", k);
  }
  CHECK(mx_engine_step(lv, 1, &ops_all, &f, &clk, &applied) == MX_ENGINE_CHANGED && applied == 0, "spent 5: CHANGED");
  CHECK(lv[0].state == MX_LEVER_KEPT && !lv[0].why, "kept (%s)", mx_lever_state_name(lv[0].state));
  CHECK(clk.t_cur == 0.75 && lv[0].t_before_s == 1.0 && lv[0].t_after_s == 0.75, "t_cur = the timed time (%g)",
        clk.t_cur);
  CHECK(f.plan == 1 && f.n_apply[0] == 1 && f.n_time == 1 && f.n_undo[0] == 0, "plan 1 in use, applied once");
  CHECK(f.n_ready[0] == 6 && f.n_predict[0] == 6 && f.n_bytes[0] == 1, "ready %d predict %d bytes %d", f.n_ready[0],
        f.n_predict[0], f.n_bytes[0]);
  CHECK(mx_engine_step(lv, 1, &ops_all, &f, &clk, &applied) == MX_ENGINE_IDLE && applied == -1, "then IDLE");
  CHECK(f.n_ready[0] == 6 && f.n_apply[0] == 1 && f.plan == 1, "a KEPT lever is not asked again");
}

/* Applied at once (cost 0.5 <= regret 0.5), timed slower (1.25) or equal (1.0): undone, DECLINED. */
static void slower_undone(void) {
  const double slow[] = {1.25, 1.0};
  for (int s = 0; s < 2; s++) {
    const mx_lever_row rows[] = {{"slow", 0.0, 0.0, 0.5, 1, 0}};
    mx_lever lv[1];
    arm_all(lv, rows, 1);
    fake f = fake_new();
    f.t_true[1] = slow[s];
    mx_engine_clock clk = clock_new();
    int applied = 7;
    CHECK(mx_engine_step(lv, 1, &ops_all, &f, &clk, &applied) == MX_ENGINE_CHANGED && applied == 0, "%g: CHANGED",
          slow[s]);
    CHECK(lv[0].state == MX_LEVER_DECLINED && lv[0].why && !strcmp(lv[0].why, "the guard timed it slower"),
          "%g: declined by the guard (%s)", slow[s], lv[0].why ? lv[0].why : "NULL");
    CHECK(f.plan == 0 && f.n_apply[0] == 1 && f.n_undo[0] == 1 && f.n_time == 1, "%g: plan 0 again", slow[s]);
    CHECK(clk.t_cur == 1.0 && lv[0].t_before_s == 1.0 && lv[0].t_after_s == slow[s], "%g: t_cur unchanged", slow[s]);
    CHECK(mx_engine_step(lv, 1, &ops_all, &f, &clk, &applied) == MX_ENGINE_IDLE && f.n_apply[0] == 1, "%g: not again",
          slow[s]);
  }
}

/* Lever 0 fails softly (with and without a reason): FAILED, plan as it was; lever 1 weighed and
 * applied in the same step. */
static void soft_fail_then_next(void) {
  for (int with_why = 0; with_why < 2; with_why++) {
    const mx_lever_row rows[] = {{"refused", 0.0, 0.0, 0.5, 1, 0}, {"fine", 0.0, 0.0, 0.5, 1, 0}};
    mx_lever lv[2];
    arm_all(lv, rows, 2);
    fake f = fake_new();
    f.soft_fail[0] = 1;
    f.apply_why[0] = with_why ? "fake: out of device memory" : NULL;
    f.t_true[2] = 0.5;
    mx_engine_clock clk = clock_new();
    int applied = 7;
    CHECK(mx_engine_step(lv, 2, &ops_all, &f, &clk, &applied) == MX_ENGINE_CHANGED && applied == 1,
          "lever 1 applied (%d)", applied);
    CHECK(lv[0].state == MX_LEVER_FAILED && lv[0].why, "lever 0 FAILED with a reason");
    if (with_why) CHECK(lv[0].why && !strcmp(lv[0].why, "fake: out of device memory"), "the callback's reason");
    CHECK(f.n_apply[0] == 1 && f.n_undo[0] == 0 && f.prev[0] == -1, "lever 0 tried once, nothing to undo");
    CHECK(lv[1].state == MX_LEVER_KEPT && f.plan == 2 && clk.t_cur == 0.5, "lever 1 kept, plan 2 (%d)", f.plan);
    CHECK(f.n_apply[1] == 1 && f.prev[1] == 0 && f.n_time == 1, "lever 1 applied over plan 0");
  }
}

/* Lever 0 needs one byte more than is free: DECLINED, never applied; lever 1 needs exactly the free
 * bytes: applied in the same step. */
static void too_many_bytes(void) {
  const mx_lever_row rows[] = {{"big", 0.0, 0.0, 0.5, 1, 0}, {"fits", 0.0, 0.0, 0.5, 1, 0}};
  mx_lever lv[2];
  arm_all(lv, rows, 2);
  fake f = fake_new();
  f.bytes[0] = 1001, f.bytes[1] = 1000;
  f.t_true[2] = 0.5;
  mx_engine_clock clk = clock_new();
  clk.bytes_free = 1000;
  int applied = 7;
  CHECK(mx_engine_step(lv, 2, &ops_all, &f, &clk, &applied) == MX_ENGINE_CHANGED && applied == 1, "lever 1 applied");
  CHECK(lv[0].state == MX_LEVER_DECLINED && lv[0].why && !strcmp(lv[0].why, "needs more device memory than is free"),
        "lever 0 declined for memory (%s)", lv[0].why ? lv[0].why : "NULL");
  CHECK(f.n_bytes[0] == 1 && f.n_apply[0] == 0 && f.n_time == 1, "lever 0 never applied nor timed");
  CHECK(lv[1].state == MX_LEVER_KEPT && f.plan == 2 && clk.t_cur == 0.5, "lever 1 kept");
}

/* cost 3 s (fixed 2 + 2 reps * 0.5), gain 0.5 per product: expected 10 from spent 0 -> 10 * 0.5 > 3,
 * NOW at once; expected 6 -> 3 > 3 false, NEVER; expected 10 after 5 products -> 2.5, NEVER. */
static void expected_products(void) {
  const double expected[] = {10.0, 6.0, 10.0}, spent[] = {0.0, 0.0, 5.0};
  for (int c = 0; c < 3; c++) {
    const mx_lever_row rows[] = {{"exp", 2.0, 0.0, 0.5, 2, 0}};
    mx_lever lv[1];
    arm_all(lv, rows, 1);
    fake f = fake_new();
    f.t_true[1] = 0.5;
    mx_engine_clock clk = clock_new();
    clk.expected = expected[c], clk.spent = spent[c];
    int applied = 7;
    const mx_engine_result r = mx_engine_step(lv, 1, &ops_all, &f, &clk, &applied);
    if (c == 0) {
      CHECK(r == MX_ENGINE_CHANGED && applied == 0 && lv[0].state == MX_LEVER_KEPT, "expected 10: NOW at once");
      CHECK(f.plan == 1 && clk.t_cur == 0.5 && f.n_apply[0] == 1, "expected 10: plan 1");
    } else {
      CHECK(r == MX_ENGINE_IDLE && applied == -1 && lv[0].state == MX_LEVER_DECLINED, "case %d: NEVER -> DECLINED", c);
      CHECK(lv[0].why && !strcmp(lv[0].why, "the expected products cannot pay for it"), "case %d: why %s", c,
            lv[0].why ? lv[0].why : "NULL");
      CHECK(lv[0].cost_s == 3.0 && f.plan == 0 && clk.t_cur == 1.0 && f.n_apply[0] == 0 && f.n_bytes[0] == 0,
            "case %d: never applied", c);
    }
  }
  /* no gain, expected unknown: NEVER with its own reason */
  const mx_lever_row rows[] = {{"nogain", 0.0, 0.0, 0.0, 1, 0}};
  mx_lever lv[1];
  arm_all(lv, rows, 1);
  fake f = fake_new();
  mx_engine_clock clk = clock_new();
  int applied = 7;
  CHECK(mx_engine_step(lv, 1, &ops_all, &f, &clk, &applied) == MX_ENGINE_IDLE && lv[0].state == MX_LEVER_DECLINED &&
            lv[0].why && !strcmp(lv[0].why, "it cannot pay for its cost (no gain)") && f.n_apply[0] == 0,
        "no gain: DECLINED");
}

/* Lever 0 NOT_YET: skipped (not weighed), lever 1 (NOT_NEEDED) OFF, lever 2 applied in the same step;
 * next step lever 0 asked again, still NOT_YET: WAIT; then OK: applied. */
static void ready_states(void) {
  const mx_lever_row rows[] = {{"notyet", 0.0, 0.0, 0.5, 1, 0},
                               {"notneeded", 0.0, 0.0, 0.5, 1, 0},
                               {"now", 0.0, 0.0, 0.5, 1, 0},
                               {"noreason", 0.0, 0.0, 0.5, 1, 0}};
  mx_lever lv[4];
  arm_all(lv, rows, 4);
  fake f = fake_new();
  f.ready_rc[0] = MX_LEVER_NOT_YET;
  f.ready_rc[1] = MX_LEVER_NOT_NEEDED, f.ready_why[1] = "fake: the plan has no hot region";
  f.ready_rc[3] = MX_LEVER_NOT_NEEDED, f.ready_why[3] = NULL;
  f.t_true[3] = 0.5, f.t_true[1] = 0.25;
  mx_engine_clock clk = clock_new();
  int applied = 7;
  CHECK(mx_engine_step(lv, 4, &ops_all, &f, &clk, &applied) == MX_ENGINE_CHANGED && applied == 2,
        "lever 2 applied (%d)", applied);
  CHECK(untouched(&lv[0]) && f.n_ready[0] == 1 && f.n_predict[0] == 0 && f.n_apply[0] == 0,
        "lever 0 skipped, not weighed");
  CHECK(lv[1].state == MX_LEVER_OFF && lv[1].why && !strcmp(lv[1].why, "fake: the plan has no hot region"),
        "lever 1 OFF");
  CHECK(f.n_predict[1] == 0 && f.n_apply[1] == 0, "an OFF lever is not weighed");
  CHECK(lv[2].state == MX_LEVER_KEPT && f.plan == 3 && clk.t_cur == 0.5, "lever 2 kept");
  CHECK(f.n_ready[3] == 0 && lv[3].state == MX_LEVER_PENDING, "lever 3 not reached after the applied one");
  CHECK(mx_engine_step(lv, 4, &ops_all, &f, &clk, &applied) == MX_ENGINE_WAIT && applied == -1, "lever 0 still waits");
  CHECK(f.n_ready[0] == 2 && untouched(&lv[0]) && f.n_ready[1] == 1 && f.n_ready[2] == 1,
        "asked again; settled ones not");
  CHECK(lv[3].state == MX_LEVER_OFF && lv[3].why, "NOT_NEEDED without a reason: OFF with a default reason");
  f.ready_rc[0] = MX_LEVER_OK;
  CHECK(mx_engine_step(lv, 4, &ops_all, &f, &clk, &applied) == MX_ENGINE_CHANGED && applied == 0,
        "lever 0 applied now");
  CHECK(lv[0].state == MX_LEVER_KEPT && f.plan == 1 && clk.t_cur == 0.25 && f.prev[0] == 3, "lever 0 kept over plan 3");
  CHECK(mx_engine_step(lv, 4, &ops_all, &f, &clk, &applied) == MX_ENGINE_IDLE, "then IDLE");
}

/* A hard error from each callback: ERROR at once, the lever and the clock exactly as they were. */
static void hard_errors(void) {
  const int where[] = {H_READY, H_PREDICT, H_BYTES, H_APPLY, H_TIME, H_UNDO, H_TIME};
  const char *names[] = {"ready", "predict", "bytes", "apply", "time", "undo", "time of the old plan"};
  for (int c = 0; c < 7; c++) {
    const int old = c == 6;
    const mx_lever_row rows[] = {{"hard", 0.0, 0.0, 0.5, 1, old}};
    mx_lever lv[1];
    arm_all(lv, rows, 1);
    fake f = fake_new();
    f.hard = where[c], f.hard_lever = 0, f.hard_call = 1;
    f.t_true[1] = where[c] == H_UNDO ? 2.0 : 0.5; /* undo is called only after a slower timing */
    mx_engine_clock clk = clock_new();
    clk.spent = old ? 2.0 : 0.0; /* the old timed too: cost 1.5, NOW from spent 2 */
    int applied = 7;
    CHECK(mx_engine_step(lv, 1, &ops_all, &f, &clk, &applied) == MX_ENGINE_ERROR && applied == -1, "%s: ERROR",
          names[c]);
    CHECK(untouched(&lv[0]), "%s: lever unchanged (%s)", names[c], mx_lever_state_name(lv[0].state));
    CHECK(clk.t_cur == 1.0 && clk.spent == (old ? 2.0 : 0.0), "%s: clock unchanged", names[c]);
    CHECK(f.n_undo[0] == (where[c] == H_UNDO) && f.n_apply[0] == (where[c] >= H_APPLY && !old), "%s: calls", names[c]);
  }
  /* the error ends the step: a later lever is not asked */
  const mx_lever_row rows[] = {{"hard", 0.0, 0.0, 0.5, 1, 0}, {"after", 0.0, 0.0, 0.5, 1, 0}};
  mx_lever lv[2];
  arm_all(lv, rows, 2);
  fake f = fake_new();
  f.hard = H_PREDICT, f.hard_lever = 0;
  mx_engine_clock clk = clock_new();
  int applied = 7;
  CHECK(mx_engine_step(lv, 2, &ops_all, &f, &clk, &applied) == MX_ENGINE_ERROR && f.n_ready[1] == 0 &&
            untouched(&lv[1]),
        "a hard error returns at once");
  /* per lever: a lever settled earlier in the step keeps what it became (it did fail) */
  arm_all(lv, rows, 2);
  f = fake_new();
  f.soft_fail[0] = 1, f.apply_why[0] = "fake: refused";
  f.hard = H_APPLY, f.hard_lever = 1;
  clk = clock_new();
  CHECK(mx_engine_step(lv, 2, &ops_all, &f, &clk, &applied) == MX_ENGINE_ERROR, "hard error on lever 1");
  CHECK(lv[0].state == MX_LEVER_FAILED && untouched(&lv[1]) && f.plan == 0 && clk.t_cur == 1.0,
        "lever 0 FAILED, lever 1 as it was");
}

/* Guard off: KEPT, t_cur = the predicted time, never timed (cost without guard reps). guard_reps 0
 * (guard on): KEPT, t_cur unchanged, never timed. */
static void guard_off_and_no_reps(void) {
  const mx_lever_row rows[] = {{"g", 0.25, 0.0, 0.5, 4, 1}};
  mx_lever lv[1];
  arm_all(lv, rows, 1);
  fake f = fake_new();
  f.t_true[1] = 2.0; /* slower in truth: without the guard nobody knows */
  mx_engine_clock clk = clock_new();
  clk.guard = 0;
  int applied = 7;
  CHECK(mx_engine_step(lv, 1, &ops_all, &f, &clk, &applied) == MX_ENGINE_CHANGED && applied == 0, "guard off: CHANGED");
  CHECK(lv[0].state == MX_LEVER_KEPT && clk.t_cur == 0.5 && lv[0].cost_s == 0.25 && f.n_time == 0 && f.plan == 1,
        "guard off: kept at the predicted time (t_cur %g, cost %g)", clk.t_cur, lv[0].cost_s);
  CHECK(lv[0].t_before_s == 0.0 && lv[0].t_after_s == 0.0, "guard off: not timed");

  const mx_lever_row prow[] = {{"predict", 0.0, 0.0, 0.5, 0, 0}};
  arm_all(lv, prow, 1);
  f = fake_new();
  clk = clock_new();
  CHECK(mx_engine_step(lv, 1, &ops_all, &f, &clk, &applied) == MX_ENGINE_CHANGED && applied == 0, "reps 0: CHANGED");
  CHECK(lv[0].state == MX_LEVER_KEPT && clk.t_cur == 1.0 && f.n_time == 0 && f.n_apply[0] == 1 && f.plan == 1,
        "reps 0: kept, t_cur unchanged (%g)", clk.t_cur);
  arm_all(lv, prow, 1);
  f = fake_new();
  clk = clock_new();
  clk.guard = 0;
  CHECK(mx_engine_step(lv, 1, &ops_all, &f, &clk, &applied) == MX_ENGINE_CHANGED && lv[0].state == MX_LEVER_KEPT &&
            clk.t_cur == 1.0 && f.n_time == 0,
        "reps 0, guard off: t_cur unchanged");
}

/* predict sets t_new (0.25 instead of (1 - 0.5) * 1): in t_new_s, the cost and, guard off, t_cur; a
 * predict that sets nothing leaves (1 - gain) t_cur (lever 1, guard on, cost 1 rep * 0.125). */
static void predict_used(void) {
  const mx_lever_row rows[] = {{"p", 0.0, 0.0, 0.5, 2, 0}, {"q", 0.0, 0.0, 0.5, 1, 0}};
  mx_lever lv[2];
  arm_all(lv, rows, 2);
  fake f = fake_new();
  f.predict_t[0] = 0.25;
  mx_engine_clock clk = clock_new();
  clk.guard = 0;
  int applied = 7;
  CHECK(mx_engine_step(lv, 2, &ops_all, &f, &clk, &applied) == MX_ENGINE_CHANGED && applied == 0, "lever 0 applied");
  CHECK(lv[0].t_new_s == 0.25 && clk.t_cur == 0.25 && f.n_predict[0] == 1 && f.predict_tcur[0] == 1.0,
        "t_new from predict (%g)", lv[0].t_new_s);
  clk.guard = 1;
  CHECK(mx_engine_step(lv, 2, &ops_all, &f, &clk, &applied) == MX_ENGINE_CHANGED && applied == 1, "lever 1 applied");
  CHECK(lv[1].t_new_s == 0.125 && lv[1].cost_s == 0.125 && f.n_predict[1] == 1, "(1 - gain) t_cur = %g, cost %g",
        lv[1].t_new_s, lv[1].cost_s);
  CHECK(lv[1].state == MX_LEVER_DECLINED && f.plan == 1 && clk.t_cur == 0.25, "plan 2 timed 1 s > 0.25: undone");
  /* the cost formula */
  const mx_lever_row r = {"c", 0.5, 2.0, 0.5, 3, 1};
  mx_engine_clock c = clock_new();
  c.t_cur = 0.25;
  const double want = 0.5 + 2.0 * 1e6 * 1e-9 + 3 * 0.125 + 3 * 0.25;
  CHECK(fabs(mx_engine_cost(&r, &c, 0.125) - want) <= 1e-15 * want, "cost with the old timed %.17g",
        mx_engine_cost(&r, &c, 0.125));
  const mx_lever_row r2 = {"c", 0.5, 2.0, 0.5, 3, 0};
  CHECK(fabs(mx_engine_cost(&r2, &c, 0.125) - (0.502 + 0.375)) <= 1e-15, "cost, new only");
  c.guard = 0;
  CHECK(fabs(mx_engine_cost(&r, &c, 0.125) - 0.502) <= 1e-15, "cost without the guard");
}

/* guard_times_old: the guard times the plan before too (1.0 claimed, 0.8 true) and compares like with
 * like: new 0.9 < t_cur 1.0 but not < 0.8 -> undone, DECLINED; new 0.7 -> KEPT at 0.7. */
static void guard_times_old(void) {
  const double t_new_true[] = {0.9, 0.7};
  for (int c = 0; c < 2; c++) {
    const mx_lever_row rows[] = {{"old", 0.0, 0.0, 0.5, 1, 1}};
    mx_lever lv[1];
    arm_all(lv, rows, 1);
    fake f = fake_new();
    f.t_true[0] = 0.8, f.t_true[1] = t_new_true[c];
    mx_engine_clock clk = clock_new();
    clk.spent = 2.0; /* cost 0.5 + 1 (the old timed): NOW iff (spent + 1) * 0.5 >= 1.5 */
    int applied = 7;
    CHECK(mx_engine_step(lv, 1, &ops_min, &f, &clk, &applied) == MX_ENGINE_CHANGED && applied == 0, "%d: CHANGED", c);
    CHECK(f.n_time == 2 && lv[0].t_before_s == 0.8 && lv[0].t_after_s == t_new_true[c], "%d: both timed", c);
    if (c == 0)
      CHECK(lv[0].state == MX_LEVER_DECLINED && lv[0].why && f.plan == 0 && f.n_undo[0] == 1 && clk.t_cur == 1.0,
            "undone");
    else
      CHECK(lv[0].state == MX_LEVER_KEPT && f.plan == 1 && f.n_undo[0] == 0 && clk.t_cur == 0.7, "kept");
  }
}

/* guard_times_old with one slow timing of the plan before (t_cur 1.0): old timed 1.3 (> 1.1 t_cur), timed
 * again 1.0, the lower kept: new 1.05 -> undone, DECLINED (3 timings). Where the plan before really
 * takes 1.25 (both timings), new 1.05 is faster like with like -> KEPT. Old timed 1.05 (within 1.1
 * t_cur): not timed again (2 timings). */
static void guard_retimes_slow_old(void) {
  const double old_true[] = {1.0, 1.25, 1.05};
  const int spike[] = {1, 0, 0}, timings[] = {3, 3, 2};
  for (int c = 0; c < 3; c++) {
    const mx_lever_row rows[] = {{"old", 0.0, 0.0, 0.5, 1, 1}};
    mx_lever lv[1];
    arm_all(lv, rows, 1);
    fake f = fake_new();
    f.t_true[0] = old_true[c], f.t_true[1] = 1.05;
    f.spike_call = spike[c], f.spike_t = 1.3;
    mx_engine_clock clk = clock_new();
    clk.spent = 2.0;
    int applied = 7;
    CHECK(mx_engine_step(lv, 1, &ops_min, &f, &clk, &applied) == MX_ENGINE_CHANGED && applied == 0, "%d: CHANGED", c);
    CHECK(f.n_time == timings[c] && lv[0].t_before_s == old_true[c], "%d: %d timings, before %g", c, f.n_time, lv[0].t_before_s);
    if (c == 0)
      CHECK(lv[0].state == MX_LEVER_DECLINED && f.plan == 0 && clk.t_cur == 1.0, "slow timing retaken: undone");
    else if (c == 1)
      CHECK(lv[0].state == MX_LEVER_KEPT && f.plan == 1 && clk.t_cur == 1.05, "old truly slower: kept");
    else
      CHECK(lv[0].state == MX_LEVER_DECLINED && f.plan == 0, "within the factor: one timing, undone");
  }
}

/* Three levers that all pay at once: one applied per step, in table order; a lever the rule says
 * LATER for does not stop the next one from being weighed. */
static void one_per_step(void) {
  const mx_lever_row rows[] = {{"later", 100.0, 0.0, 0.5, 1, 0},
                               {"a", 0.0, 0.0, 0.5, 1, 0},
                               {"b", 0.0, 0.0, 0.5, 1, 0},
                               {"c", 0.0, 0.0, 0.5, 1, 0}};
  mx_lever lv[4];
  arm_all(lv, rows, 4);
  fake f = fake_new();
  f.t_true[2] = 0.5, f.t_true[3] = 0.25, f.t_true[4] = 0.125;
  mx_engine_clock clk = clock_new();
  int applied = 7;
  for (int k = 1; k <= 3; k++) {
    CHECK(mx_engine_step(lv, 4, &ops_all, &f, &clk, &applied) == MX_ENGINE_CHANGED && applied == k,
          "step %d applies %d", k, applied);
    CHECK(f.plan == k + 1 && lv[k].state == MX_LEVER_KEPT, "step %d: plan %d", k, f.plan);
    for (int j = 1; j < 4; j++)
      CHECK(f.n_apply[j] == (j <= k), "step %d: lever %d applied %d times", k, j, f.n_apply[j]);
    CHECK(lv[0].state == MX_LEVER_PENDING && f.n_apply[0] == 0, "step %d: lever 0 LATER", k);
    CHECK(mx_engine_pending(lv, 4), "step %d: pending", k);
  }
  CHECK(clk.t_cur == 0.125 && f.n_time == 3, "t_cur %g", clk.t_cur);
  CHECK(mx_engine_step(lv, 4, &ops_all, &f, &clk, &applied) == MX_ENGINE_WAIT && applied == -1, "lever 0 waits");
  mx_engine_arm(lv, 0, 0, "fake: switched off");
  CHECK(lv[0].state == MX_LEVER_OFF && !strcmp(lv[0].why, "fake: switched off") && lv[0].cost_s == 0.0, "arm OFF");
  CHECK(!mx_engine_pending(lv, 4), "nothing pending");
  CHECK(mx_engine_step(lv, 4, &ops_all, &f, &clk, &applied) == MX_ENGINE_IDLE && applied == -1, "IDLE");
  mx_engine_arm(lv, 1, 1, NULL);
  CHECK(untouched(&lv[1]) && mx_engine_pending(lv, 4), "arm PENDING again, numbers cleared");
  CHECK(mx_engine_step(NULL, 0, &ops_all, &f, &clk, &applied) == MX_ENGINE_IDLE, "no levers: IDLE");
}

/* t_cur <= 0 (or NaN): nothing can be weighed: WAIT, ready asked, nothing else. */
static void no_clock(void) {
  const double bad[] = {0.0, -1.0, NAN};
  for (int c = 0; c < 3; c++) {
    const mx_lever_row rows[] = {{"x", 0.0, 0.0, 0.5, 1, 0}};
    mx_lever lv[1];
    arm_all(lv, rows, 1);
    fake f = fake_new();
    mx_engine_clock clk = clock_new();
    clk.t_cur = bad[c];
    int applied = 7;
    CHECK(mx_engine_step(lv, 1, &ops_all, &f, &clk, &applied) == MX_ENGINE_WAIT && applied == -1, "t_cur %g: WAIT",
          bad[c]);
    CHECK(untouched(&lv[0]) && f.n_ready[0] == 1 && f.n_predict[0] == 0 && f.n_apply[0] == 0 && f.plan == 0,
          "t_cur %g: not weighed", bad[c]);
  }
}

static void state_names(void) {
  CHECK(!strcmp(mx_lever_state_name(MX_LEVER_OFF), "off") &&
            !strcmp(mx_lever_state_name(MX_LEVER_PENDING), "pending") &&
            !strcmp(mx_lever_state_name(MX_LEVER_KEPT), "kept") &&
            !strcmp(mx_lever_state_name(MX_LEVER_DECLINED), "declined") &&
            !strcmp(mx_lever_state_name(MX_LEVER_FAILED), "failed") &&
            !strcmp(mx_lever_state_name((mx_lever_state)9), "?"),
        "state names");
}

/* mx_engine_apply_now: applied at once although the rule would say LATER (nothing spent), guarded
 * (slower: undone); NOT_YET leaves it pending, untouched; a lever not pending: IDLE. */
static void apply_now(void) {
  const mx_lever_row rows[] = {{"now", 100.0, 0.0, 0.5, 2, 0}, {"slow", 100.0, 0.0, 0.5, 2, 0}};
  mx_lever lv[2];
  arm_all(lv, rows, 2);
  fake f = fake_new();
  f.t_true[1] = 0.5;
  f.t_true[2] = 2.0;
  mx_engine_clock clk = clock_new();
  CHECK(mx_engine_step(lv, 2, &ops_all, &f, &clk, NULL) == MX_ENGINE_WAIT && f.n_apply[0] == 0, "the rule says LATER");
  CHECK(mx_engine_apply_now(lv, 2, 0, &ops_all, &f, &clk) == MX_ENGINE_CHANGED, "apply_now: CHANGED");
  CHECK(lv[0].state == MX_LEVER_KEPT && f.plan == 1 && clk.t_cur == 0.5 && lv[0].cost_s == 101.0, "apply_now: kept (cost %g)", lv[0].cost_s);
  CHECK(mx_engine_apply_now(lv, 2, 0, &ops_all, &f, &clk) == MX_ENGINE_IDLE, "apply_now of a lever not pending: IDLE");
  f.ready_rc[1] = MX_LEVER_NOT_YET;
  CHECK(mx_engine_apply_now(lv, 2, 1, &ops_all, &f, &clk) == MX_ENGINE_WAIT && lv[1].state == MX_LEVER_PENDING && f.n_apply[1] == 0, "apply_now, not ready: WAIT");
  f.ready_rc[1] = MX_LEVER_OK;
  CHECK(mx_engine_apply_now(lv, 2, 1, &ops_all, &f, &clk) == MX_ENGINE_CHANGED, "apply_now slower: CHANGED");
  CHECK(lv[1].state == MX_LEVER_DECLINED && f.plan == 1 && clk.t_cur == 0.5 && f.n_undo[1] == 1, "apply_now slower: undone");
  CHECK(mx_engine_apply_now(lv, 2, 5, &ops_all, &f, &clk) == MX_ENGINE_ERROR, "apply_now out of range: ERROR");
}

/* The latency floor: a product of t_cur 1 s with a floor of 0.5 s has 0.5 s to save. gain 0.5 ->
 * t_new 0.75 (not 0.5): cost 2 + 2 * 0.75 = 3.5, NOW iff (spent + 1) * 0.25 >= 3.5, i.e. spent >= 13.
 * predict's own 0.3 s is capped at the floor: t_new 0.5. At or below the floor every lever is
 * DECLINED at its first weighing, with the floor as the reason, nothing applied. */
static void latency_floor(void) {
  const mx_lever_row rows[] = {{"bandwidth", 2.0, 0.0, 0.5, 2, 0}, {"model", 0.0, 0.0, 0.0, 2, 0}};
  mx_lever lv[2];
  arm_all(lv, rows, 2);
  fake f = fake_new();
  f.predict_t[1] = 0.3;
  mx_engine_clock clk = clock_new();
  clk.t_floor = 0.5;
  clk.spent = 12.0;
  int applied = 7;
  CHECK(mx_engine_step(lv, 1, &ops_all, &f, &clk, &applied) == MX_ENGINE_WAIT && applied == -1, "spent 12: WAIT");
  CHECK(lv[0].t_new_s == 0.75 && lv[0].cost_s == 3.5, "gain of the movable part: t_new %g cost %g",
        lv[0].t_new_s, lv[0].cost_s);
  clk.spent = 13.0;
  CHECK(mx_engine_step(lv, 1, &ops_all, &f, &clk, &applied) == MX_ENGINE_CHANGED && applied == 0, "spent 13: applied");
  arm_all(lv, rows, 2);
  f = fake_new();
  f.predict_t[1] = 0.3;
  clk = clock_new();
  clk.t_floor = 0.5;
  lv[0].state = MX_LEVER_OFF;
  CHECK(mx_engine_step(lv, 2, &ops_all, &f, &clk, &applied) == MX_ENGINE_WAIT, "predict capped: not yet");
  CHECK(lv[1].t_new_s == 0.5, "predict's saving capped at the floor: t_new %g", lv[1].t_new_s);
  arm_all(lv, rows, 2);
  f = fake_new();
  clk = clock_new();
  clk.t_floor = 1.0;
  clk.spent = 1e9;
  CHECK(mx_engine_step(lv, 2, &ops_all, &f, &clk, &applied) == MX_ENGINE_IDLE && applied == -1, "at the floor: IDLE");
  for (int i = 0; i < 2; i++)
    CHECK(lv[i].state == MX_LEVER_DECLINED && lv[i].why && strstr(lv[i].why, "latency"), "lever %d declined by the floor (%s)", i,
          lv[i].why ? lv[i].why : "no reason");
  CHECK(f.n_apply[0] == 0 && f.n_apply[1] == 0 && f.plan == 0, "nothing applied at the floor");
}

int main(void) {
  apply_now();
  pays_after_a_few();
  slower_undone();
  soft_fail_then_next();
  too_many_bytes();
  expected_products();
  ready_states();
  hard_errors();
  guard_off_and_no_reps();
  predict_used();
  guard_times_old();
  guard_retimes_slow_old();
  one_per_step();
  no_clock();
  state_names();
  latency_floor();
  return t_report("test_core_engine");
}
