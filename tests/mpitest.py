"""mpitest.py - what the Python tests that start chakra (also under mpirun)
share: the binary and source from argv, an environment in which Open MPI
runs as root and oversubscribed, check() that records failures, run(), and
a runner of the calling module's test_* functions in a scratch folder."""
import os
import shutil
import subprocess
import sys
import tempfile

CHAKRA = os.path.abspath(sys.argv[1])
SOURCE = os.path.abspath(sys.argv[2])
SKIP = 77
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def run(*args, mpi=0):
    """chakra ARGS, under `mpirun -np MPI` when mpi > 0."""
    cmd = (["mpirun", "--oversubscribe", "-np", str(mpi)] if mpi else []) + [CHAKRA] + [str(a) for a in args]
    return subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=600)


def have_mpi():
    return shutil.which("mpirun") is not None and " replay " in run("--help").stdout


def run_tests(module_globals, name, setup=None):
    """Runs every test_* of the module, in name order, on one scratch folder
    (also $TMPDIR); exits 1 after any failure."""
    work = tempfile.mkdtemp(prefix="chakra-%s-test." % name)
    ENV["TMPDIR"] = work
    try:
        if setup:
            setup(work)
        for fname, fn in sorted(module_globals.items()):
            if fname.startswith("test_"):
                print("-- " + fname)
                fn(work)
    finally:
        shutil.rmtree(work)
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("all passed")
