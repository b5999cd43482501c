#!/usr/bin/env python3
"""test_petsc4py.py LIBMATXTRACT PETSC_LIBDIR - matxtract from Python: petsc4py.init loads the plugin
with -dll_append, a matrix made with setType('matxtract') must really be MatXtract, and KSP solves
with it must match the same solves with 'aij' (same iteration count, relative error of the solution
<= 1e-12), at the default crux (all cold) and with a hot region. Exit 77 (skip) when petsc4py is
missing or built on another PETSc than PETSC_LIBDIR's (e.g. the 64-bit-index build of variants.sh)."""
import os
import re
import sys
import tempfile

try:
    import petsc4py
except ImportError:
    print("petsc4py is not installed (Debian: apt-get install python3-petsc4py): skipped")
    sys.exit(77)

conf = petsc4py.get_config()
petsc4py_libdir = os.path.realpath(os.path.join(conf["PETSC_DIR"], conf["PETSC_ARCH"] or "", "lib"))
if petsc4py_libdir != os.path.realpath(sys.argv[2]):
    print("petsc4py uses the PETSc in %s, matxtract was built on %s: skipped" % (petsc4py_libdir, sys.argv[2]))
    sys.exit(77)

petsc4py.init(["-dll_append", sys.argv[1]])
from petsc4py import PETSc  # noqa: E402 (after init, as petsc4py requires)

N = 24  # convection-diffusion on an N x N grid: nonsymmetric, so GMRES does real work


def assemble(mat_type):
    """The N^2 x N^2 upwind convection-diffusion matrix (centre 5.5, west -2, south -1.5, east and
    north -1) as a matrix of mat_type, with the options database's settings (-mat_matxtract_crux)."""
    n = N * N
    A = PETSc.Mat().create(comm=PETSc.COMM_SELF)
    A.setSizes((n, n))
    A.setType(mat_type)
    A.setFromOptions()
    A.setPreallocationNNZ(5)
    for i in range(n):
        x, y = i % N, i // N
        A.setValue(i, i, 5.5)
        for ok, j, v in ((x > 0, i - 1, -2.0), (y > 0, i - N, -1.5), (x < N - 1, i + 1, -1.0), (y < N - 1, i + N, -1.0)):
            if ok:
                A.setValue(i, j, v)
    A.assemble()
    return A


def solve(A):
    """Solve A x = b (b = A * ones with a ramp) with GMRES + Jacobi; return (x, iterations)."""
    b = A.createVecLeft()
    b.setArray([1.0 + 0.01 * k for k in range(b.getSize())])
    x = A.createVecRight()
    ksp = PETSc.KSP().create(comm=PETSc.COMM_SELF)
    ksp.setOperators(A)
    ksp.setType("gmres")
    ksp.getPC().setType("jacobi")
    ksp.setTolerances(rtol=1e-10, atol=1e-50, max_it=2000)
    ksp.solve(b, x)
    if ksp.getConvergedReason() <= 0:
        raise SystemExit("KSP did not converge: reason %d" % ksp.getConvergedReason())
    return x, ksp.getIterationNumber()


def info_text(A):
    """What -mat_view ::ascii_info_detail prints for A."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "view.txt")
        viewer = PETSc.Viewer().createASCII(path, comm=PETSc.COMM_SELF)
        viewer.pushFormat(PETSc.Viewer.Format.ASCII_INFO_DETAIL)
        A.view(viewer)
        viewer.destroy()
        with open(path) as f:
            return f.read()


def relative_error(x, ref):
    d = x.copy()
    d.axpy(-1.0, ref)
    return d.norm() / ref.norm()


failures = 0
aij = assemble("aij")
x_aij, it_aij = solve(aij)
for crux in (None, "0.7,0.5"):
    opts = PETSc.Options()
    if crux:
        opts["mat_matxtract_crux"] = crux
    A = assemble("matxtract")
    if crux:
        del opts["mat_matxtract_crux"]
    kind = A.getType()
    hot = re.search(r"hot region (\d+) rows x (\d+) cols", info_text(A))
    hot_rows = int(hot.group(1)) if hot else -1
    x, it = solve(A)
    err = relative_error(x, x_aij)
    ok = kind == "seqaijmatxtract" and it == it_aij and err <= 1e-12 and (hot_rows > 0) == bool(crux)
    failures += not ok
    print("crux %-8s type %s, %d hot rows: %d iterations (aij %d), relative error %.2e vs aij: %s"
          % (crux or "default", kind, hot_rows, it, it_aij, err, "ok" if ok else "FAILED"))
sys.exit(1 if failures else 0)
