#!/usr/bin/env python3
"""conformance.py - PETSc's own Mat test suite (src/mat/tests), run with -mat_type aij and with
-mat_type matxtract, outputs compared.  Entry point: tests/conformance/run.sh (same arguments).

Sources.  The tests are NOT in this repository: they come from the PETSc installation (Debian:
libpetsc3.18-dev-examples, /usr/share/petsc/3.18/share/petsc/examples).  Each exN.c ends with a
/*TEST ... TEST*/ block; PETSc's own parser (examples/config/testparse.py, imported from the examples
folder) turns it into test cases (testsets flattened, args concatenated, requires merged).  The
runner then expands the loops PETSc leaves in args and nsize ("-x {{a b}}", "{{a b}shared output}",
nsize "{{1 2}}") into one case per combination (id suffix "+x-a"), substitutes ${wPETSC_DIR},
${PETSC_DIR} and ${DATAFILESPATH}, and compiles each program at run time into the work folder with
the compiler and flags of that PETSc (petscvariables: PCC/CXX, PETSC_CC_INCLUDES, PETSC_WITH_EXTERNAL_LIB;
else `pkg-config --cflags --libs PETSc`).  C and C++ programs; Fortran ones are SKIPs.

A case (program + args + nsize) runs twice, in two empty run folders, under
`mpiexec -n NSIZE [--oversubscribe --bind-to none]` (Open MPI), both with `-petsc_ci` first and
PETSC_OPTIONS="-check_pointer_intensity 0 -malloc_dump" (as PETSc's harness: memory still allocated at
PetscFinalize is listed on stdout, so a leak of the type is a DIFF), `-log_view :log_view.txt` (see
"used" below) and --extra-args:
    aij: ARGS -mat_type aij
    mx:  ARGS -dll_append LIB -mat_type matxtract
The appended -mat_type overrides one in ARGS (the last value of an option wins) and applies to every
matrix the program gives to MatSetFromOptions without a prefix (-dm_mat_type, -A_mat_type stay): a test
that needs a BAIJ/dense/... matrix there fails already with aij and is a SKIP.  When the aij run fails,
the test runs once more with its own ARGS only, to tell "needs another type" from "fails here anyway".

Mapping before the comparison (both runs; nothing else is changed):
  1. the text "-dll_append LIB" (LIB = the library's path) is removed;
  2. the run folder's absolute path -> "<rundir>";
  3. whole lowercase words: seqaijmatxtract -> seqaij, mpiaijmatxtract -> mpiaij, matxtract -> aij;
  4. default object names made from an address (PETSc 3.22: "Mat_0x5624..._0") -> "Mat_<addr>_0":
     the address differs between any two runs, of one type or two;
  5. vector types seqcuda/mpicuda -> seq/mpi: on a GPU, matxtract's MatCreateVecs gives device
     vectors (as aijcusparse's does) where AIJ's are host vectors; values are still compared.
  The "MatXtract:" lines the type adds to -mat_view ::ascii_info are NOT removed: they are a difference.
Then the test's own `filter:` (a shell pipeline, run in the run folder) is applied to stdout, as
PETSc's harness does, and the mapping again (filters that read files the program wrote); stdout and stderr are compared separately (stderr is not filtered).  Lines are
compared with runs of blanks collapsed (petscdiff uses diff -w).  Where lines differ only in floating
point numbers within --rtol/--atol they count as the same ("numeric" in the case line), unless the test
has `diff_args: -j` (PETSc compares it exactly; so do we).

"used": did the type do any of its own work in the mx run?  Detected without changing the output or
the library: the mx run's -log_view goes to a file (log_view.txt), and the run "used" the type when an
event named MatXtract* (MatXtractBuild: the shadow format built at assembly; MatXtractRefresh,
MatXtractMult, MatXtractMultT, ...) has a nonzero count.  A matxtract matrix that is created but never
assembled, or whose assembly builds nothing (e.g. MAT_STRUCTURE_ONLY), is not "used".  The aij run
gets the same -log_view so that the two runs differ only in the type.

Classes (per case):
  SAME     outputs identical (after mapping/filter/tolerance) and matxtract was "used"
  DIFF     both exit 0, outputs differ (first differing line reported)
  CRASH    mx run died on a signal (PETSc "Caught signal", exit 59/134/136/139, mpiexec "signal")
           where the aij run exited 0
  ERROR    mx run exited nonzero (a PETSc error) or printed a PETSc error aij did not
  TIMEOUT  mx run exceeded --timeout seconds (times the test's timeoutfactor)
  SKIP     not compared, reason given: requires unmet (packages, precision, datafilespath, cuda, ...),
           nsize > 4 (or > 1 with --seq-only), TODO/SKIP in the test, Fortran (not built), build failed,
           aij itself fails or times out, or identical outputs with matxtract not "used"
  EXPECTED a DIFF/ERROR/CRASH/TIMEOUT on the expected-differences list (tests/conformance/
           expected_differences.txt: id glob, a regex the reported line must match, reason); the
           original class is kept in the line
Exit status: 0 when no case is DIFF/CRASH/ERROR/TIMEOUT outside the list; 1 otherwise; 77 when the
examples are not installed (ctest SKIP_RETURN_CODE); 2 on a usage or setup error.
"""
import argparse
import concurrent.futures
import datetime
import fnmatch
import glob
import hashlib
import itertools
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FAILING = ("DIFF", "CRASH", "ERROR", "TIMEOUT")
CLASSES = ("SAME", "DIFF", "CRASH", "ERROR", "TIMEOUT", "EXPECTED", "SKIP")
MAX_NSIZE = 4
SKIP_EXIT = 77


# ---- setup: PETSc, examples, library -------------------------------------------------------------

def sh(cmd, env=None):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True, env=env).stdout.strip()


def read_conf(petsc_dir):
    """petscconf.h defines + petscvariables (as gmakegen.read_conf does)."""
    conf = {}
    with open(os.path.join(petsc_dir, "include", "petscconf.h")) as f:
        for line in f:
            if line.startswith("#define "):
                key, _, val = line[8:].strip().partition(" ")
                conf[key] = val.strip()
    pv = os.path.join(petsc_dir, "lib", "petsc", "conf", "petscvariables")
    if os.path.isfile(pv):
        with open(pv) as f:
            for line in f:
                m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$", line.rstrip("\n"))
                if m:
                    conf[m.group(1)] = m.group(2).strip()
    return conf


def petsc_version(petsc_dir):
    v = {}
    try:
        with open(os.path.join(petsc_dir, "include", "petscversion.h")) as f:
            for line in f:
                m = re.match(r"#define PETSC_VERSION_(MAJOR|MINOR|SUBMINOR)\s+(\d+)", line)
                if m:
                    v[m.group(1)] = m.group(2)
    except OSError:
        return "unknown"
    return "%s.%s.%s" % (v.get("MAJOR", "?"), v.get("MINOR", "?"), v.get("SUBMINOR", "?"))


def pkg_env(petsc_dir):
    env = dict(os.environ)
    pc = os.path.join(petsc_dir, "lib", "pkgconfig")
    if os.path.isdir(pc):
        env["PKG_CONFIG_PATH"] = pc + (":" + env["PKG_CONFIG_PATH"] if env.get("PKG_CONFIG_PATH") else "")
    return env


def default_petsc_dir():
    if os.environ.get("PETSC_DIR"):
        return os.path.join(os.environ["PETSC_DIR"], os.environ.get("PETSC_ARCH", ""))
    return sh("pkg-config --variable=prefix PETSc")


def default_examples_dir(petsc_dir, version):
    mm = ".".join(version.split(".")[:2])
    for d in (os.path.join(petsc_dir, "share", "petsc", "examples"),
              "/usr/share/petsc/%s/share/petsc/examples" % mm):
        if os.path.isdir(os.path.join(d, "src", "mat", "tests")):
            return d
    return None


# ---- cases ---------------------------------------------------------------------------------------

LOOP = re.compile(r"\{\{([^{}]*)\}([^{}]*)\}")


class Case:
    def __init__(self, cid, src, args, nsize, test):
        self.id, self.src, self.args, self.nsize, self.test = cid, src, args, nsize, test
        self.cls, self.reason, self.used, self.note, self.seconds = None, "", "-", "", 0.0


def expand_loops(args):
    """'-a {{1 2}} -b {{x y}shared output}' -> [(suffix, args), ...] over all combinations."""
    loops = []  # (name, values, span)
    for m in LOOP.finditer(args):
        before = args[:m.start()].split()
        name = before[-1].lstrip("-") if before and before[-1].startswith("-") else "loop%d" % len(loops)
        loops.append((name, m.group(1).split(), m.span()))
    if not loops:
        return [("", args)]
    out = []
    for combo in itertools.product(*[l[1] for l in loops]):
        s, last, parts = "", 0, []
        for (name, _, (a, b)), val in zip(loops, combo):
            parts.append(args[last:a] + val)
            last = b
            s += "%s-%s_" % (name, val)
        out.append(("+" + s.rstrip("_"), "".join(parts) + args[last:]))
    return out


def parse_cases(tests_dir, config_dir):
    sys.path.insert(0, config_dir)
    sys.dont_write_bytecode = True  # no __pycache__ in PETSc's (system) examples folder
    import testparse  # PETSc's parser, from the examples folder
    cases, files = [], {}
    srcs = sorted(glob.glob(os.path.join(tests_dir, "ex*.c")) + glob.glob(os.path.join(tests_dir, "ex*.cxx"))
                  + glob.glob(os.path.join(tests_dir, "ex*.F90")) + glob.glob(os.path.join(tests_dir, "ex*.F"))
                  + glob.glob(os.path.join(tests_dir, "ex*.cu")))
    for path in srcs:
        base = os.path.basename(path)
        cwd = os.getcwd()
        os.chdir(tests_dir)
        try:
            d = testparse.parseTestFile(base, 0).get(base, {})
        except Exception as e:  # a block PETSc's parser rejects: one SKIP case
            d = {"runparse_error": {"SKIP": ["testparse: %s" % e]}}
        finally:
            os.chdir(cwd)
        files[base] = {k: v for k, v in d.items() if not isinstance(v, dict)}
        for name, t in sorted(d.items()):
            if not isinstance(t, dict):
                continue
            tid = name[3:] if name.startswith("run") else name
            subs = t.get("subtests") or [None]
            for sub in subs:
                tt = dict(t)
                if sub is not None:
                    st = t[sub]
                    for k, v in st.items():
                        if k in ("args", "requires") and tt.get(k):
                            tt[k] = tt[k] + " " + v
                        else:
                            tt[k] = v
                sid = tid if sub is None or len(subs) == 1 else "%s_%s" % (tid, st.get("suffix", sub))
                nsz = str(tt.get("nsize", "1")).strip()
                m = LOOP.fullmatch(nsz)
                nsizes = m.group(1).split() if m else [nsz]
                for ns in nsizes:
                    for suffix, args in expand_loops(tt.get("args", "")):
                        cid = sid + suffix + ("+nsize-%s" % ns if len(nsizes) > 1 else "")
                        try:
                            n = int(ns)
                        except ValueError:
                            n = 1
                        cases.append(Case(cid, path, " ".join(args.split()), n, tt))
    return cases, files


def requirements_unmet(requires, conf, have_datafiles):
    """gmakegentest._isRun's rules: precision, int size, datafilespath, defined(), PETSC_HAVE_/USE_."""
    why = []
    prec = conf.get("PETSC_PRECISION", "double")
    for req in requires.split():
        neg = req.startswith("!")
        r = req[1:] if neg else req
        if r in ("__fp16", "single", "double", "__float128"):
            ok = prec == r
        elif r in ("int32", "int64"):
            ok = conf.get("PETSC_SIZEOF_INT", "4") == ("4" if r == "int32" else "8")
        elif r.startswith("long") and r[4:].isdigit():
            ok = conf.get("PETSC_SIZEOF_LONG", "8").strip() == str(int(r[4:]) // 8)
        elif r == "datafilespath":
            ok = have_datafiles
        elif "defined(" in r.lower():
            ok = r.split("(")[1].split(")")[0] in conf
        elif r in ("complex", "debug"):
            ok = bool(conf.get("PETSC_USE_" + r.upper()))
        else:
            ok = bool(conf.get("PETSC_HAVE_" + r.upper()))
        if ok == neg and req not in why:
            why.append(req)
    return why


# ---- running -------------------------------------------------------------------------------------

class Slots:
    """A case with N ranks takes min(N, total) of -j slots, so the machine is not oversubscribed."""

    def __init__(self, n):
        self.free, self.cv = n, threading.Condition()
        self.total = n

    def take(self, k):
        k = min(k, self.total)
        with self.cv:
            while self.free < k:
                self.cv.wait()
            self.free -= k
        return k

    def give(self, k):
        with self.cv:
            self.free += k
            self.cv.notify_all()


def run_cmd(cmd, cwd, env, timeout):
    """Run in its own process group; returns (rc or None on timeout, stdout, stderr, seconds)."""
    t0 = time.time()
    with open(os.path.join(cwd, "stdout.txt"), "wb") as fo, open(os.path.join(cwd, "stderr.txt"), "wb") as fe:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    p.wait(timeout=5)
                    break
                except subprocess.TimeoutExpired:
                    pass
            rc = None
    rd = lambda n: open(os.path.join(cwd, n), "rb").read().decode("utf-8", "replace")
    return rc, rd("stdout.txt"), rd("stderr.txt"), time.time() - t0


CRASH_TEXT = re.compile(r"Caught signal number|exited on signal|terminated with signal|Segmentation fault|"
                        r"double free|corrupted size|free\(\): invalid|malloc\(\): |Aborted \(core dumped\)")


def is_crash(rc, text):
    return rc is not None and rc != 0 and (rc < 0 or rc in (59, 134, 136, 139) or bool(CRASH_TEXT.search(text)))


def error_line(text):
    """The first PETSc error message line(s), else the last non-blank line."""
    lines = text.splitlines()
    for i, l in enumerate(lines):
        if "Caught signal number" in l:
            return l.strip()
    msg = []
    for i, l in enumerate(lines):
        if "PETSC ERROR:" in l and "-----" in l and "Error Message" in l:
            for m in lines[i + 1:i + 4]:
                s = re.sub(r"^\[\d+\]PETSC ERROR:\s*", "", m).strip()
                if ("PETSC ERROR:" not in m or not s or s.startswith("See https") or s.startswith("Petsc Release")
                        or s.startswith("WARNING! There are option")):
                    break
                msg.append(s)
            break
    if msg:
        return " / ".join(msg)
    for l in lines:
        if "PETSC ERROR:" in l:
            return l.strip()
    rest = [l.strip() for l in lines if l.strip()]
    return rest[-1] if rest else "(no output)"


def mapped(text, lib, rundir):
    text = text.replace("-dll_append " + lib, "").replace(rundir, "<rundir>")
    text = re.sub(r"\b(seq|mpi)aijmatxtract\b", r"\1aij", text)
    text = re.sub(r"\b([A-Za-z]+)_0x[0-9a-f]+_(\d+)\b", r"\1_<addr>_\2", text)
    text = re.sub(r"\b(seq|mpi)cuda\b", r"\1", text)
    return re.sub(r"\bmatxtract\b", "aij", text)


def apply_filter(text, filt, rundir):
    if not filt:
        return text
    p = subprocess.run(["bash", "-c", filt], input=text, capture_output=True, text=True, cwd=rundir)
    return p.stdout


NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def lines_close(a, b, rtol, atol):
    if NUM.sub("#", a) != NUM.sub("#", b):
        return False
    for x, y in zip(NUM.findall(a), NUM.findall(b)):
        fx, fy = float(x), float(y)
        if abs(fx - fy) > max(atol, rtol * max(abs(fx), abs(fy))):
            return False
    return True


def compare(a, b, tol, rtol, atol):
    """None if same, ('numeric', None) if same within tolerance, else ('diff', first differing pair)."""
    la = [" ".join(l.split()) for l in a.splitlines()]
    lb = [" ".join(l.split()) for l in b.splitlines()]
    while la and not la[-1]:
        la.pop()
    while lb and not lb[-1]:
        lb.pop()
    if la == lb:
        return None
    numeric = tol and len(la) == len(lb)
    for i, (x, y) in enumerate(itertools.zip_longest(la, lb, fillvalue="<end of output>")):
        if x == y:
            continue
        if numeric and lines_close(x, y, rtol, atol):
            continue
        return ("diff", "line %d: aij [%s] mx [%s]" % (i + 1, x[:160], y[:160]))
    return ("numeric", None)


def log_used(path):
    """'yes' if a MatXtract* event has a nonzero count in the -log_view file, 'no', or '?' (no file)."""
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return "?"
    if "Event" not in text:
        return "?"
    for l in text.splitlines():
        f = l.split()
        if len(f) > 1 and f[0].startswith("MatXtract") and f[1].isdigit() and int(f[1]) > 0:
            return "yes"
    return "no"


class Runner:
    def __init__(self, o):
        self.o = o
        self.mpiexec = shlex.split(o.mpiexec)
        self.env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                        OMPI_MCA_rmaps_base_oversubscribe="1")
        # PETSc's harness options (minus -error_output_stdout: stderr is compared on its own)
        self.env["PETSC_OPTIONS"] = (os.environ.get("PETSC_OPTIONS", "") + " -check_pointer_intensity 0 -malloc_dump").strip()
        self.slots = Slots(o.jobs)
        # OpenMPI 4: runs at once must not share a session folder (one that finalizes removes it while
        # another's MPI_Init creates it); every run gets a base of its own under the work folder
        self.session_ids = itertools.count()

    def mpi_cmd(self, n):
        cmd = list(self.mpiexec) + ["-n", str(n)]
        if self.o.openmpi:
            if "--oversubscribe" not in cmd:
                cmd.append("--oversubscribe")
            cmd += ["--bind-to", "none"]
        return cmd

    def run_one(self, case, exe, which):
        o = self.o
        rundir = os.path.join(o.work, "runs", case.id, which)
        shutil.rmtree(rundir, ignore_errors=True)
        os.makedirs(rundir)
        for f in (case.test.get("localrunfiles") or "").split():
            src = os.path.join(os.path.dirname(case.src), f)
            if os.path.exists(src):
                os.symlink(src, os.path.join(rundir, os.path.basename(f)))
        args = ["-petsc_ci"] + shlex.split(case.args) + ["-log_view", ":log_view.txt"] + shlex.split(o.extra_args)
        if which == "aij":
            args += ["-mat_type", "aij"]
        elif which == "mx":
            args += ["-dll_append", o.lib, "-mat_type", "matxtract"]
        else:  # "plain": the test's own arguments only, to tell why an aij run failed
            args = ["-petsc_ci"] + shlex.split(case.args) + shlex.split(o.extra_args)
        env = dict(self.env)
        for kv in (case.test.get("env") or "").split():
            k, _, v = kv.partition("=")
            env[k] = v.strip("'\"")
        env["OMPI_MCA_orte_tmpdir_base"] = os.path.join(o.work, "mpi-session", str(next(self.session_ids)))
        tmo = o.timeout * float(case.test.get("timeoutfactor", 1) or 1)
        rc, out, err, secs = run_cmd(self.mpi_cmd(case.nsize) + [exe] + args, rundir, env, tmo)
        with open(os.path.join(rundir, "command.txt"), "w") as f:
            f.write(shlex.join(self.mpi_cmd(case.nsize) + [exe] + args) + "\n")
        return rundir, rc, out, err, secs

    def run_case(self, case, exe):
        o = self.o
        k = self.slots.take(case.nsize)
        try:
            ra, rca, outa, erra, ta = self.run_one(case, exe, "aij")
            case.seconds = ta
            if rca is None:
                case.cls, case.reason = "SKIP", "aij run timed out"
                return
            if rca != 0:
                _, rcp, _, _, _ = self.run_one(case, exe, "plain")
                why = "aij fails" if rcp != 0 else "aij fails (passes without -mat_type aij)"
                case.cls, case.reason = "SKIP", "%s (exit %d): %s" % (why, rca, error_line(outa + "\n" + erra))
                return
            rm, rcm, outm, errm, tm = self.run_one(case, exe, "mx")
            case.seconds += tm
        finally:
            self.slots.give(k)
        case.used = log_used(os.path.join(rm, "log_view.txt"))
        if rcm is None:
            case.cls, case.reason = "TIMEOUT", "mx run exceeded %g s" % (o.timeout * float(case.test.get("timeoutfactor", 1) or 1))
            return
        both = outm + "\n" + errm
        if is_crash(rcm, both):
            case.cls, case.reason = "CRASH", "exit %d: %s" % (rcm, error_line(both))
            return
        if rcm != 0:
            case.cls, case.reason = "ERROR", "exit %d: %s" % (rcm, error_line(both))
            return
        filt = case.test.get("filter", "")
        A = mapped(apply_filter(mapped(outa, o.lib, ra), filt, ra), o.lib, ra)
        M = mapped(apply_filter(mapped(outm, o.lib, rm), filt, rm), o.lib, rm)
        tol = "-j" not in (case.test.get("diff_args") or "").split()
        d_out = compare(A, M, tol, o.rtol, o.atol)
        d_err = compare(mapped(erra, o.lib, ra), mapped(errm, o.lib, rm), tol, o.rtol, o.atol)
        if (d_out and d_out[0] == "diff") or (d_err and d_err[0] == "diff"):
            if "PETSC ERROR" in both and "PETSC ERROR" not in outa + erra:
                case.cls, case.reason = "ERROR", "exit 0 but: %s" % error_line(both)
            else:
                case.cls = "DIFF"
                case.reason = ("stdout " + d_out[1]) if d_out and d_out[0] == "diff" else ("stderr " + d_err[1])
            with open(os.path.join(o.work, "runs", case.id, "diff.txt"), "w") as f:
                f.write(unified(A, M, "aij stdout (mapped, filtered)", "mx stdout (mapped, filtered)"))
                f.write(unified(mapped(erra, o.lib, ra), mapped(errm, o.lib, rm), "aij stderr", "mx stderr"))
            return
        if case.used != "yes":
            case.cls, case.reason = "SKIP", "matxtract not used (no MatXtract* event in -log_view; outputs identical)"
            return
        case.cls = "SAME"
        notes = []
        if d_out or d_err:
            notes.append("numeric")
        if filt and mapped(outa, o.lib, ra) != mapped(outm, o.lib, rm):
            notes.append("raw output differs; same after the test's filter")
        case.note = "; ".join(notes)


def unified(a, b, la, lb):
    import difflib
    return "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True), la, lb, n=2))


# ---- building ------------------------------------------------------------------------------------

def compile_flags(petsc_dir, conf):
    """Include and link flags as PETSc's own makefiles use them (petscvariables: PETSC_CC_INCLUDES,
    PETSC_WITH_EXTERNAL_LIB, so tests that include hypre/fftw headers build too), else pkg-config;
    an rpath for every -L folder."""
    env = pkg_env(petsc_dir)
    inc, lib = conf.get("PETSC_CC_INCLUDES", ""), conf.get("PETSC_WITH_EXTERNAL_LIB", "")
    if inc and lib and "$" not in inc + lib:
        cflags, libs = shlex.split(inc), shlex.split(lib)
    else:
        cflags = shlex.split(sh("pkg-config --cflags PETSc", env)) or ["-I" + os.path.join(petsc_dir, "include")]
        libs = shlex.split(sh("pkg-config --static --libs PETSc", env)) or ["-L" + os.path.join(petsc_dir, "lib"), "-lpetsc"]
    rpaths = ["-Wl,-rpath," + f[2:] for f in libs if f.startswith("-L")]
    return cflags, rpaths + libs


def build(src, files, o, conf, cflags, libs):
    """Compile one test program into WORK/bin; returns (exe or None, reason)."""
    base = os.path.basename(src)
    name = base.split(".")[0]
    exe = os.path.join(o.bindir, name)
    log = os.path.join(o.work, "build-logs", name + ".log")
    if os.path.exists(exe) and os.path.getmtime(exe) > os.path.getmtime(src):  # built before, same PETSc and flags
        return exe, ""
    extra = [os.path.join(os.path.dirname(src), d) for d in (files.get(base, {}).get("depends") or "").split()]
    if base.endswith(".c"):
        cc = conf.get("PCC") or conf.get("CC") or "mpicc"
        std = []
    else:
        cc = conf.get("CXX") or "mpicxx"
        std = ["-std=c++14"] if "-std=" not in conf.get("CXX_FLAGS", "") else []
    cmd = shlex.split(cc) + std + ["-O0", "-w"] + cflags + [src] + extra + ["-o", exe] + libs + ["-lm"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(log, "w") as f:
        f.write(shlex.join(cmd) + "\n" + p.stdout + p.stderr)
    if p.returncode != 0:
        return None, "build failed (%s)" % os.path.relpath(log, o.work)
    return exe, ""


# ---- main ----------------------------------------------------------------------------------------

def load_list(path):
    """subset.txt: 'ID-GLOB  [comment]'.  expected_differences.txt: 'ID-GLOB "REGEX" reason', REGEX
    searched in the failure's reported line.  '#' starts a comment line."""
    out = []
    if not path or not os.path.isfile(path):
        return out
    for n, line in enumerate(open(path), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            f = shlex.split(line)
        except ValueError as e:
            raise SystemExit("conformance: %s line %d: %s" % (path, n, e))
        try:
            re.compile(f[1] if len(f) > 1 else "")
        except re.error as e:
            raise SystemExit("conformance: %s line %d: bad regular expression: %s" % (path, n, e))
        out.append((f[0], f[1] if len(f) > 1 else "", " ".join(f[2:]), n))
    return out


def main():
    ap = argparse.ArgumentParser(description="PETSc's src/mat/tests with -mat_type aij vs -mat_type matxtract",
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--subset", action="store_true", help="the CI subset (tests/conformance/subset.txt)")
    mode.add_argument("--full", action="store_true", help="every case (default)")
    mode.add_argument("--cases", nargs="+", metavar="GLOB", help="only cases whose id matches a glob (e.g. 'ex89_*')")
    ap.add_argument("--lib", help="libmatxtract.so (default: build/src/libmatxtract.so)")
    ap.add_argument("--petsc-dir", help="PETSc prefix with include/petscconf.h (default: $PETSC_DIR[/$PETSC_ARCH] or pkg-config PETSc)")
    ap.add_argument("--examples-dir", help="PETSc's examples folder holding src/mat/tests and config/testparse.py "
                    "(default: PETSC_DIR/share/petsc/examples or /usr/share/petsc/X.Y/share/petsc/examples)")
    ap.add_argument("--datafilespath", help="PETSc's datafiles repository (enables 'requires: datafilespath')")
    ap.add_argument("--work", help="programs and run folders (default: build-conformance/ in the repository, git-ignored)")
    ap.add_argument("--out", help="where results.txt goes (default: the work folder)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2, help="parallel slots (default nproc); a case takes nsize slots")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per run (times the test's timeoutfactor; default 60)")
    ap.add_argument("--extra-args", default="", help="arguments appended to both runs (e.g. '-vec_type cuda')")
    ap.add_argument("--seq-only", action="store_true", help="run only cases with nsize 1")
    ap.add_argument("--expected", default=os.path.join(HERE, "expected_differences.txt"), help="expected-differences list")
    ap.add_argument("--subset-file", default=os.path.join(HERE, "subset.txt"))
    ap.add_argument("--mpiexec", help="MPI launcher (default: petscvariables MPIEXEC or mpiexec)")
    ap.add_argument("--rtol", type=float, default=1e-8, help="relative tolerance for numbers (default 1e-8)")
    ap.add_argument("--atol", type=float, default=1e-12, help="absolute tolerance for numbers (default 1e-12)")
    ap.add_argument("--keep", action="store_true", help="keep the run folders of SAME/SKIP cases too")
    ap.add_argument("--list", action="store_true", help="list the selected cases (id, nsize, args) and exit")
    o = ap.parse_args()
    t_start = time.time()
    repo = os.path.dirname(os.path.dirname(HERE))

    o.petsc_dir = os.path.abspath(o.petsc_dir or default_petsc_dir() or "")
    if not os.path.isfile(os.path.join(o.petsc_dir, "include", "petscconf.h")):
        print("conformance: no PETSc at '%s' (give --petsc-dir)" % o.petsc_dir, file=sys.stderr)
        return 2
    version = petsc_version(o.petsc_dir)
    o.examples_dir = o.examples_dir or default_examples_dir(o.petsc_dir, version)
    tests_dir = os.path.join(o.examples_dir or "", "src", "mat", "tests")
    config_dir = os.path.join(o.examples_dir or "", "config")
    if not o.examples_dir or not os.path.isdir(tests_dir) or not os.path.isfile(os.path.join(config_dir, "testparse.py")):
        print("conformance: PETSc's examples (src/mat/tests, config/testparse.py) not found; Debian: "
              "apt-get install libpetsc%s-dev-examples, or give --examples-dir: skipped" % ".".join(version.split(".")[:2]))
        return SKIP_EXIT
    o.lib = os.path.abspath(o.lib or os.path.join(repo, "build", "src", "libmatxtract.so"))
    if not o.list and not os.path.isfile(o.lib):
        print("conformance: library %s not found (give --lib)" % o.lib, file=sys.stderr)
        return 2
    o.work = os.path.abspath(o.work or os.path.join(repo, "build-conformance"))
    o.out = os.path.abspath(o.out or o.work)
    conf = read_conf(o.petsc_dir)
    o.mpiexec = o.mpiexec or conf.get("MPIEXEC") or "mpiexec"
    o.openmpi = "Open MPI" in sh(shlex.split(o.mpiexec)[0] + " --version 2>&1")
    # ${wPETSC_DIR}: the tree that holds share/petsc/datafiles (Debian: /usr/share/petsc/X.Y)
    wpetsc = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(o.examples_dir))))
    if not os.path.isdir(os.path.join(wpetsc, "share", "petsc", "datafiles")):
        wpetsc = o.petsc_dir

    cases, files = parse_cases(tests_dir, config_dir)
    if o.subset or o.cases:
        pats = o.cases or [e[0] for e in load_list(o.subset_file)]
        sel = [c for c in cases if any(fnmatch.fnmatchcase(c.id, p) for p in pats)]
        missing = [p for p in pats if not any(fnmatch.fnmatchcase(c.id, p) for c in cases)]
        if missing:
            print("conformance: no case matches: %s" % " ".join(missing), file=sys.stderr)
            return 2
        cases = sel
    expected = load_list(o.expected)

    # plan: what is skipped before running
    have_data = bool(o.datafilespath)
    for c in cases:
        t = c.test
        a = c.args.replace("${wPETSC_DIR}", wpetsc).replace("${PETSC_DIR}", wpetsc)
        if have_data:
            a = a.replace("${DATAFILESPATH}", o.datafilespath)
        c.args = a
        why = requirements_unmet(t.get("requires", "") + " " + (files[os.path.basename(c.src)].get("requires") or ""),
                                 conf, have_data)
        lang = c.src.rsplit(".", 1)[-1]
        if t.get("SKIP"):
            skip = t["SKIP"] if isinstance(t["SKIP"], list) else [str(t["SKIP"])]
            c.cls, c.reason = "SKIP", "test says SKIP: %s" % "; ".join(skip)
        elif t.get("TODO"):
            c.cls, c.reason = "SKIP", "TODO in the test: %s" % t["TODO"]
        elif lang in ("F90", "F"):
            c.cls, c.reason = "SKIP", "Fortran (not built by this runner)"
        elif lang == "cu" or ".kokkos." in c.src:
            c.cls, c.reason = "SKIP", "CUDA/Kokkos source (not built by this runner)"
        elif why:
            c.cls, c.reason = "SKIP", "requires " + " ".join(why)
        elif "${" in c.args:
            c.cls, c.reason = "SKIP", "needs " + ",".join(sorted(set(re.findall(r"\$\{\w+\}", c.args))))
        elif t.get("command"):
            c.cls, c.reason = "SKIP", "custom command: not an aij/matxtract comparison"
        elif c.nsize > MAX_NSIZE:
            c.cls, c.reason = "SKIP", "nsize %d > %d" % (c.nsize, MAX_NSIZE)
        elif o.seq_only and c.nsize > 1:
            c.cls, c.reason = "SKIP", "nsize %d (--seq-only)" % c.nsize
    if o.list:
        for c in cases:
            print("%-48s np=%d %s%s" % (c.id, c.nsize, c.args, ("   [SKIP: %s]" % c.reason) if c.cls else ""))
        return 0

    cflags, libs = compile_flags(o.petsc_dir, conf)
    # programs are reused across runs only for the same PETSc, sources and flags
    key = hashlib.sha1(repr((o.petsc_dir, o.examples_dir, cflags, libs)).encode()).hexdigest()[:10]
    o.bindir = os.path.join(o.work, "bin", key)
    for d in (o.bindir, os.path.join(o.work, "build-logs"), os.path.join(o.work, "runs")):
        os.makedirs(d, exist_ok=True)
    os.makedirs(o.out, exist_ok=True)

    todo = [c for c in cases if not c.cls]
    srcs = sorted(set(c.src for c in todo))
    print("conformance: PETSc %s (%s), %d cases (%d to run, %d programs to build), -j %d, library %s"
          % (version, o.petsc_dir, len(cases), len(todo), len(srcs), o.jobs, o.lib), flush=True)
    exes = {}
    with concurrent.futures.ThreadPoolExecutor(o.jobs) as ex:
        for src, (exe, why) in zip(srcs, ex.map(lambda s: build(s, files, o, conf, cflags, libs), srcs)):
            exes[src] = (exe, why)
    t_built = time.time()
    for c in todo:
        if not exes[c.src][0]:
            c.cls, c.reason = "SKIP", exes[c.src][1]
    todo = [c for c in todo if not c.cls]
    runner = Runner(o)
    done = [0]
    lock = threading.Lock()

    def job(c):
        try:
            runner.run_case(c, exes[c.src][0])
        except Exception as e:  # a runner bug must not hide the other cases
            c.cls, c.reason = "ERROR", "runner: %r" % e
        with lock:
            done[0] += 1
            if c.cls in FAILING or sys.stdout.isatty():
                print("  [%d/%d] %-44s np=%d %-7s %s" % (done[0], len(todo), c.id, c.nsize, c.cls, c.reason[:150]), flush=True)

    # longest-running programs first would need timings; larger nsize first packs the slots better
    with concurrent.futures.ThreadPoolExecutor(o.jobs) as ex:
        list(ex.map(job, sorted(todo, key=lambda c: -c.nsize)))

    for c in cases:
        listed = [e for e in expected if fnmatch.fnmatchcase(c.id, e[0])]
        if c.cls in FAILING and listed:
            hit = [e for e in listed if re.search(e[1], c.reason)]
            if hit:
                c.note = "expected (line %d): %s" % (hit[0][3], hit[0][2])
                c.reason = "%s: %s" % (c.cls, c.reason)
                c.cls = "EXPECTED"
            else:
                c.note = "on the expected-differences list, but fails otherwise"
        elif listed and c.cls == "SAME":
            c.note = (c.note + "; " if c.note else "") + "on the expected-differences list but the same now"
        if c.cls in ("SAME", "SKIP") and not o.keep:
            shutil.rmtree(os.path.join(o.work, "runs", c.id), ignore_errors=True)

    # ---- report ----
    counts = {k: sum(1 for c in cases if c.cls == k) for k in CLASSES}
    unexpected = [c for c in cases if c.cls in FAILING]
    skip_why = {}
    for c in cases:
        if c.cls == "SKIP":
            key = re.sub(r" ?\(exit \d+\):.*", "", c.reason)
            key = key.replace("aij fails (passes", "aij fails: the test needs another type for some matrix (passes")
            key = re.sub(r"^aij fails$", "aij fails: the test fails here with or without -mat_type aij", key)
            key = re.sub(r"^requires .*", "requires unmet", key)
            key = re.sub(r"^nsize \d+ > .*", "nsize > %d" % MAX_NSIZE, key)
            key = re.sub(r"^TODO in the test.*", "TODO in the test", key)
            key = re.sub(r"^build failed.*", "build failed", key)
            key = re.sub(r"^needs .*", "needs ${DATAFILESPATH} (not given)", key)
            skip_why[key] = skip_why.get(key, 0) + 1
    wall = time.time() - t_start
    mode = "subset" if o.subset else ("cases " + " ".join(o.cases) if o.cases else "full")
    head = ["# matxtract conformance: PETSc's src/mat/tests, -mat_type aij vs -mat_type matxtract",
            "date: %s" % datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "mode: %s; PETSc %s (%s); examples %s" % (mode, version, o.petsc_dir, o.examples_dir),
            "library: %s" % o.lib,
            "machine: %s, %d cores; -j %d; timeout %g s; extra args: '%s'%s" % (os.uname().nodename, os.cpu_count() or 0, o.jobs, o.timeout,
                                                                              o.extra_args, "; seq-only" if o.seq_only else ""),
            "wall: %.0f s (building %d programs: %.0f s)" % (wall, len(srcs), t_built - t_start),
            "",
            "| class | cases |", "|---|---|"]
    head += ["| %s | %d |" % (k, counts[k]) for k in CLASSES]
    head += ["| total | %d |" % len(cases), ""]
    used = sum(1 for c in cases if c.cls != "SKIP" and c.used == "yes")
    head += ["matxtract used (a MatXtract* event in -log_view) in %d of the %d compared cases; SAME within numeric tolerance: %d"
             % (used, len(cases) - counts["SKIP"], sum(1 for c in cases if c.cls == "SAME" and "numeric" in c.note)), ""]
    head += ["SKIP reasons:"] + ["  %5d  %s" % (n, k) for k, n in sorted(skip_why.items(), key=lambda x: -x[1])] + [""]
    head += ["unexpected failures: %d%s" % (len(unexpected), "" if unexpected else " (pass)"), ""]
    order = {k: i for i, k in enumerate(FAILING + ("EXPECTED", "SAME", "SKIP"))}
    body = ["# case  ranks  class  used  seconds  reason / first differing line  [note]"]
    for c in sorted(cases, key=lambda c: (order[c.cls], natural(c.id))):
        body.append("%s  np=%d  %s  used=%s  %.1fs  %s%s" % (c.id, c.nsize, c.cls, c.used, c.seconds, c.reason,
                                                            ("  [%s]" % c.note) if c.note else ""))
    path = os.path.join(o.out, "results.txt")
    with open(path, "w") as f:
        f.write("\n".join(head + body) + "\n")
    with open(os.path.join(o.out, "summary.txt"), "w") as f:  # the counts and the non-SAME, non-SKIP lines
        f.write("\n".join(head + [l for l in body if not re.search(r"  (SAME|SKIP)  used=", l)]) + "\n")
    print("\n".join(head))
    for c in unexpected:
        print("  %s np=%d %s: %s" % (c.id, c.nsize, c.cls, c.reason[:200]))
    print("results: %s, summary.txt (run folders of failing cases: %s)" % (path, os.path.join(o.work, "runs")))
    return 1 if unexpected else 0


def natural(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


if __name__ == "__main__":
    sys.exit(main())
