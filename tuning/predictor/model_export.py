"""model_export.py - the plan model as plain lists, written as (and read from) the model file
(src/core/mx_predictor.h describes the format) and written as the generated C source
src/core/mx_model_default.c (the same arrays, and the same trees once more as one node array).

Command line: regenerate the C source from a model file (e.g. the embedded model, written by
`matxtract-predictor export-default MODEL`) without retraining:
    python3 tuning/predictor/model_export.py --c-source MODEL OUT.c [--command TEXT] [--inputs NAMES]
TEXT is the regeneration command the header states (default: this command line). NAMES (the
library's inputs, `matxtract-predictor names > NAMES`) renumbers the nodes' inputs by name: a model
file of an older library, with fewer features, then embeds as it predicted.

Pure Python (no numpy, no scikit-learn): from_sklearn() only reads the fitted estimators' public
tree_ arrays, so the placeholder model can be written on a machine without scikit-learn.

Why our own exporter and not m2cgen / emlearn / treelite+tl2cgen: (1) none of them is installed on
the GPU host (tuning/predictor/README.md), (2) they emit code (nested if/else), but the library must
also load a model FILE at run time for another GPU, and one set of arrays evaluated by one C function
(mx_model_eval) serves both, so the embedded model and a loaded file cannot disagree, (3) the
candidate plans and the setup model travel in the same file, which none of them carries.
"""

LEAF = -1
ENSEMBLES = ("sum", "mean", "weighted_median")
MODES = ("auto", "du", "se")
COLDS = ("auto", "segment", "merge", "cusparse")
PLAN_INPUTS = ["plan_tau_c", "plan_tau_r", "plan_mode", "plan_cold"]


class Model:
    """trees: list of (weight, nodes), nodes: list of (feature, threshold, left, right, value) with
    tree-local child indices (LEAF at leaves); candidates: list of (tau_c, tau_r, mode, cold) with
    mode/cold names; setup: (ns_const, ns_tau_c, ns_tau_r); input_names: features + PLAN_INPUTS."""

    def __init__(self, trained_on, ensemble, base_score, trees, candidates, setup, input_names):
        assert ensemble in ENSEMBLES, ensemble
        assert "\n" not in trained_on and trained_on.strip(), "trained_on: one non-empty line"
        assert len(trained_on.strip().encode()) < 256, "trained_on: at most 255 bytes (MX_MODEL_TEXT)"
        assert input_names is None or input_names[-4:] == PLAN_INPUTS, "inputs end with the plan's four"
        self.trained_on, self.ensemble, self.base_score = trained_on.strip(), ensemble, float(base_score)
        self.trees = [(float(w), [(int(f), float(t), int(l), int(r), float(v)) for f, t, l, r, v in nodes])
                      for w, nodes in trees]
        self.candidates = [(float(tc), float(tr), m, c) for tc, tr, m, c in candidates]
        self.setup = tuple(float(x) for x in setup)
        self.input_names = list(input_names) if input_names is not None else None  # needed by the model file only
        for tc, tr, m, c in self.candidates:
            assert 0 <= tr <= tc <= 1 and m in MODES and c in COLDS, (tc, tr, m, c)

    def predict(self, x):
        """Reference evaluation in Python (float32 inputs as scikit-learn and mx_model_eval)."""
        import struct
        x32 = [struct.unpack("f", struct.pack("f", v))[0] for v in x]
        outs = []
        for _, nodes in self.trees:
            n = 0
            while nodes[n][2] != LEAF:
                f, t, l, r, _ = nodes[n]
                n = l if x32[f] <= t else r
            outs.append(nodes[n][4])
        if self.ensemble == "mean":
            return sum(outs) / len(outs)
        if self.ensemble == "sum":
            y = self.base_score
            for (w, _), o in zip(self.trees, outs):
                y += w * o
            return y
        order = sorted(range(len(outs)), key=lambda t: (outs[t], t))
        total = sum(self.trees[t][0] for t in order)
        cum = 0.0
        for t in order:
            cum += self.trees[t][0]
            if cum >= 0.5 * total:
                return outs[t]
        return outs[order[-1]]


def _tree_nodes(tree_):
    """scikit-learn tree_ arrays -> node tuples (scikit-learn marks leaves with children -1, feature -2)."""
    nodes = []
    for n in range(tree_.node_count):
        left, right = int(tree_.children_left[n]), int(tree_.children_right[n])
        if left == LEAF:
            nodes.append((LEAF, 0.0, LEAF, LEAF, float(tree_.value[n][0][0])))
        else:
            nodes.append((int(tree_.feature[n]), float(tree_.threshold[n]), left, right, float(tree_.value[n][0][0])))
    return nodes


def from_sklearn(est, trained_on, candidates, setup, input_names):
    """A fitted RandomForestRegressor / ExtraTreesRegressor (mean), GradientBoostingRegressor (sum,
    base = init_ constant, weight = learning_rate) or AdaBoostRegressor (weighted median)."""
    kind = type(est).__name__
    if kind in ("RandomForestRegressor", "ExtraTreesRegressor"):
        trees = [(1.0, _tree_nodes(t.tree_)) for t in est.estimators_]
        return Model(trained_on, "mean", 0.0, trees, candidates, setup, input_names)
    if kind == "GradientBoostingRegressor":
        base = float(est.init_.constant_.ravel()[0]) if hasattr(est.init_, "constant_") else None
        if base is None:
            raise ValueError("GradientBoostingRegressor: only a constant init_ (DummyRegressor) can be exported")
        trees = [(est.learning_rate, _tree_nodes(stage[0].tree_)) for stage in est.estimators_]
        return Model(trained_on, "sum", base, trees, candidates, setup, input_names)
    if kind == "AdaBoostRegressor":
        n = len(est.estimators_)
        trees = [(float(w), _tree_nodes(t.tree_)) for w, t in zip(est.estimator_weights_[:n], est.estimators_)]
        return Model(trained_on, "weighted_median", 0.0, trees, candidates, setup, input_names)
    raise ValueError("cannot export %s" % kind)


def placeholder(input_names, why):
    """The model to embed while no labels exist: one leaf (0) and one candidate, crux (0,0) with the
    hot mode and cold kernel chosen at upload (auto/auto): exactly the behaviour without a predictor."""
    return Model("nothing (placeholder, no labels measured yet): " + why, "sum", 0.0, [(1.0, [(LEAF, 0.0, LEAF, LEAF, 0.0)])],
                 [(0.0, 0.0, "auto", "auto")], (0.0, 0.0, 0.0), input_names)


def write_model_file(m, path):
    g = repr
    assert m.input_names is not None, "the model file lists the input names"
    with open(path, "w") as f:
        f.write("matxtract-model 1\ntrained_on %s\nensemble %s\nbase_score %s\n" % (m.trained_on, m.ensemble, g(m.base_score)))
        f.write("inputs %d\n" % len(m.input_names))
        for i, name in enumerate(m.input_names):
            f.write("input %d %s\n" % (i, name))
        f.write("trees %d\n" % len(m.trees))
        for t, (w, nodes) in enumerate(m.trees):
            f.write("tree %d %d %s\n" % (t, len(nodes), g(w)))
            for n, (feat, thr, left, right, val) in enumerate(nodes):
                f.write("node %d %d %s %d %d %s\n" % (n, feat, g(thr), left, right, g(val)))
        f.write("candidates %d\n" % len(m.candidates))
        for i, (tc, tr, mode, cold) in enumerate(m.candidates):
            f.write("candidate %d %s %s %s %s\n" % (i, g(tc), g(tr), mode, cold))
        f.write("setup_ns_per_nnz %s %s %s\nend\n" % tuple(g(x) for x in m.setup))


def _fields(line, key, n):
    """The n fields after `key` of a model-file record (split on blanks), or ValueError."""
    tok = line.split()
    if not tok or tok[0] != key or len(tok) != n + 1:
        raise ValueError("'%s' with %d fields expected, found %r" % (key, n, line))
    return tok[1:]


def read_model_file(path):
    """The Model in a model file (what write_model_file and mx_model_write write; '#' lines and
    blank lines skipped). Checks the record order and the indices, not the trees (mx_model_read does)."""
    with open(path) as f:
        records = iter([ln.rstrip("\n") for ln in f if ln.strip() and not ln.lstrip().startswith("#")])
    nxt = records.__next__
    if _fields(nxt(), "matxtract-model", 1) != ["1"]:
        raise ValueError("%s: not a version 1 matxtract model file" % path)
    trained_on = nxt().strip()
    if not trained_on.startswith("trained_on "):
        raise ValueError("%s: 'trained_on' expected" % path)
    trained_on = trained_on[len("trained_on "):]
    ensemble, = _fields(nxt(), "ensemble", 1)
    base_score = float(_fields(nxt(), "base_score", 1)[0])
    input_names = []
    for i in range(int(_fields(nxt(), "inputs", 1)[0])):
        idx, name = _fields(nxt(), "input", 2)
        assert int(idx) == i, (path, "input", i)
        input_names.append(name)
    trees = []
    for t in range(int(_fields(nxt(), "trees", 1)[0])):
        idx, nn, w = _fields(nxt(), "tree", 3)
        assert int(idx) == t, (path, "tree", t)
        nodes = []
        for n in range(int(nn)):
            idx, feat, thr, left, right, val = _fields(nxt(), "node", 6)
            assert int(idx) == n, (path, "tree", t, "node", n)
            nodes.append((int(feat), float(thr), int(left), int(right), float(val)))
        trees.append((float(w), nodes))
    candidates = []
    for c in range(int(_fields(nxt(), "candidates", 1)[0])):
        idx, tc, tr, mode, cold = _fields(nxt(), "candidate", 5)
        assert int(idx) == c, (path, "candidate", c)
        candidates.append((float(tc), float(tr), mode, cold))
    setup = [float(v) for v in _fields(nxt(), "setup_ns_per_nnz", 3)]
    _fields(nxt(), "end", 0)
    if next(records, None) is not None:
        raise ValueError("%s: records after 'end'" % path)
    return Model(trained_on, ensemble, base_score, trees, candidates, setup, input_names)


def _c_array(ctype, name, values, per_line=8):
    lines = []
    for k in range(0, len(values), per_line):
        lines.append("    " + ", ".join(values[k:k + per_line]) + ",")
    return "static const %s %s[%d] = {\n%s\n};\n" % (ctype, name, len(values), "\n".join(lines))


def _c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _c_node(f_, t_, l_, r_, v_):
    """One mx_model_node initializer: split = threshold at an inner node, value at a leaf."""
    return "{%s, %d, %d, %d}" % (repr(v_ if l_ == LEAF else t_), f_, l_, r_)


def library_positions(m, library_inputs):
    """Per model input i, its position among library_inputs (the library's input names in its order,
    `matxtract-predictor names`); None: the model's own order. A model trained before an input was
    added lists fewer inputs than the library: its nodes are renumbered by name, as mx_model_read does."""
    if library_inputs is None:
        return list(range(len(m.input_names or [])))
    missing = [n for n in m.input_names if n not in library_inputs]
    if missing:
        raise ValueError("model inputs %s are none of the library's inputs" % missing)
    return [library_inputs.index(n) for n in m.input_names]


def write_c_source(m, path, command, library_inputs=None):
    """src/core/mx_model_default.c: the same arrays as the model file, and the same trees once more
    as the node array (mx_model_node) the evaluation reads, as static const data, each node's input
    numbered as in library_inputs (see library_positions). command: how to regenerate the file (one
    or more lines)."""
    at = library_positions(m, library_inputs)
    starts, weights, feat, thr, left, right, val, node = ["0"], [], [], [], [], [], [], []
    for w, nodes in m.trees:
        weights.append(repr(w))
        for f_, t_, l_, r_, v_ in nodes:
            f_ = at[f_] if f_ != LEAF else f_
            feat.append(str(f_)), thr.append(repr(t_)), left.append(str(l_)), right.append(str(r_)), val.append(repr(v_))
            node.append(_c_node(f_, t_, l_, r_, v_))
        starts.append(str(len(feat)))
    cand = ["{{%s, %s}, MX_MODE_%s, MX_PLAN_COLD_%s}" % (repr(tc), repr(tr), mo.upper(), co.upper())
            for tc, tr, mo, co in m.candidates]
    ens = {"sum": "MX_ENSEMBLE_SUM", "mean": "MX_ENSEMBLE_MEAN", "weighted_median": "MX_ENSEMBLE_WEIGHTED_MEDIAN"}[m.ensemble]
    out = []
    out.append("/* mx_model_default.c - GENERATED by tuning/predictor/model_export.py; do not edit, regenerate with:\n"
               " *   %s\n"
               " * The plan model compiled into the library (see mx_predictor.h for the meaning of every array).\n"
               " * trained_on: %s\n"
               " * %d trees, %d nodes, ensemble %s, %d candidate plans. */\n"
               % ("\n *   ".join(command.replace("*/", "* /").splitlines()), m.trained_on.replace("*/", "* /"), len(m.trees),
                  len(feat), m.ensemble, len(m.candidates)))
    out.append('#include "mx_predictor.h"\n\n')
    out.append(_c_array("int32_t", "tree_start", starts))
    out.append(_c_array("double", "tree_weight", weights, 4))
    out.append(_c_array("int32_t", "feature", feat, 16))
    out.append(_c_array("double", "threshold", thr, 4))
    out.append(_c_array("int32_t", "left", left, 16))
    out.append(_c_array("int32_t", "right", right, 16))
    out.append(_c_array("double", "value", val, 4))
    out.append(_c_array("mx_model_node", "node", node, 4))
    out.append(_c_array("mx_plan", "candidates", cand, 2))
    out.append("\nstatic const mx_model default_model = {\n"
               "    .version = MX_MODEL_VERSION,\n    .trained_on = %s,\n    .ensemble = %s,\n    .base_score = %s,\n"
               "    .ntrees = %d,\n    .nnodes = %d,\n    .tree_start = tree_start,\n    .tree_weight = tree_weight,\n"
               "    .feature = feature,\n    .threshold = threshold,\n    .left = left,\n    .right = right,\n"
               "    .value = value,\n    .node = node,\n    .ncandidates = %d,\n    .candidates = candidates,\n"
               "    .setup = {%s, %s, %s},\n    .owned = 0};\n\n"
               "const mx_model *mx_model_default(void) { return &default_model; }\n"
               % (_c_string(m.trained_on), ens, repr(m.base_score), len(m.trees), len(feat), len(m.candidates),
                  repr(m.setup[0]), repr(m.setup[1]), repr(m.setup[2])))
    with open(path, "w") as f:
        f.write("".join(out))


def main(argv=None):
    import argparse
    import sys
    ap = argparse.ArgumentParser(description="Write the generated C source of a model file (no retraining).")
    ap.add_argument("--c-source", nargs=2, metavar=("MODEL", "OUT"), required=True, help="model file in, C source out")
    ap.add_argument("--command", help="the regeneration command the header states (default: this command line)")
    ap.add_argument("--inputs", metavar="NAMES", help="the library's input names, one per line (`matxtract-predictor "
                    "names`): the nodes renumbered by name (a model trained before an input was added)")
    a = ap.parse_args(argv)
    command = a.command or " ".join(["python3", "tuning/predictor/model_export.py"] + (sys.argv[1:] if argv is None else argv))
    library_inputs = open(a.inputs).read().split() if a.inputs else None
    write_c_source(read_model_file(a.c_source[0]), a.c_source[1], command, library_inputs)


if __name__ == "__main__":
    main()
