#!/usr/bin/env python3
"""test_model_export.py PREDICTOR_TOOL PREDICTOR_DIR DEFAULT_C - the committed embedded model is what
the generator makes of it: the embedded model written as a model file (matxtract-predictor
export-default), read back by model_export.read_model_file and written again as a file (read once
more: the same model, every double exact) and as C source (model_export --c-source), whose code from its first
#include on equals src/core/mx_model_default.c's (the five arrays, the node array the evaluation
walks, the candidates and the setup model: no hand edit, no stale generator); the same model written
as an older library with fewer features would list it (the inputs no node uses left out) and
embedded with --inputs gives the same C. The header comments differ by design (they name the regenerating command). Exits 1
if anything differs."""
import os
import subprocess
import sys
import tempfile

tool, predictor_dir, default_c = sys.argv[1:4]
sys.path.insert(0, predictor_dir)
import model_export  # noqa: E402
from checks import expect, finish  # noqa: E402 (beside this file)


def code_of(path):
    """the text from the first #include on (the generated header comment left out)"""
    with open(path) as f:
        text = f.read()
    at = text.find("#include")
    return text[at:] if at >= 0 else ""


with tempfile.TemporaryDirectory() as tmp:
    exported = os.path.join(tmp, "model.txt")
    rc = subprocess.run([tool, "export-default", exported]).returncode
    expect(rc == 0 and os.path.exists(exported), "matxtract-predictor export-default writes the embedded model")
    if rc == 0:
        m = model_export.read_model_file(exported)
        again = os.path.join(tmp, "again.txt")
        model_export.write_model_file(m, again)
        expect(vars(model_export.read_model_file(again)) == vars(m),
               "write_model_file + read_model_file give the same model back (every double exact)")
        c_out = os.path.join(tmp, "default.c")
        model_export.main(["--c-source", exported, c_out, "--command", "test"])
        ours, committed = code_of(c_out), code_of(default_c)
        expect(ours != "" and ours == committed,
               "model_export --c-source of the embedded model reproduces src/core/mx_model_default.c's code "
               "(%d vs %d characters)" % (len(ours), len(committed)))
        expect("mx_model_node node[" in committed and ".node = node" in committed,
               "the committed model has the node array the evaluation walks")
        # the same model as an older library with fewer features would have written it (the features
        # no node splits on left out, the nodes numbered among the rest), embedded with --inputs:
        # renumbered by name, the same C
        names = m.input_names
        used = {f for _, nodes in m.trees for f, *_ in nodes if f != model_export.LEAF}
        kept = [n for i, n in enumerate(names) if i in used or i >= len(names) - 4]
        if len(kept) < len(names):
            old_at = {names.index(n): i for i, n in enumerate(kept)}
            old = model_export.Model(m.trained_on, m.ensemble, m.base_score,
                                     [(w, [(old_at[f] if f != model_export.LEAF else f, t, l, r, v) for f, t, l, r, v in nodes])
                                      for w, nodes in m.trees], m.candidates, m.setup, kept)
            old_file, names_file, c_old = (os.path.join(tmp, x) for x in ("old.txt", "names.txt", "old.c"))
            model_export.write_model_file(old, old_file)
            with open(names_file, "w") as f:
                f.write("\n".join(names) + "\n")
            model_export.main(["--c-source", old_file, c_old, "--command", "test", "--inputs", names_file])
            expect(code_of(c_old) == committed, "a model file listing %d of the %d inputs, renumbered by name (--inputs), "
                   "embeds as the same C" % (len(kept), len(names)))
        else:
            print("every input is split on: no shorter layout to check --inputs with")
finish()
