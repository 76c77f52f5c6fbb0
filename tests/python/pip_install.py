"""pip_install.py - `pip install ./python --no-build-isolation` offline (no
index, Debian's setuptools) into a temporary prefix, then the installed
package used from a fresh interpreter: it carries the library it was built
with and needs no CHAKRA_LIB; from the source tree it finds the build
tree's library."""
import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pyenv
from pyenv import check

A = pyenv.args()

PROBE = ("import chakra_c, sys; m, n = chakra_c.read(sys.argv[1]); "
         "print(chakra_c.library_path); print(len(n), n[0].type == chakra_c.COMM_COLL_NODE, chakra_c.__version__)")


def project_version():
    """CMakeLists.txt's project(VERSION): the package's version must be it."""
    text = open(os.path.join(A.source_dir, "CMakeLists.txt"), encoding="utf-8").read()
    return re.search(r"project\([^)]*VERSION\s+([0-9.]+)", text).group(1)


def run_probe(env, trace):
    p = subprocess.run([sys.executable, "-c", PROBE, trace], capture_output=True, text=True, env=env)
    return p.returncode, p.stdout.splitlines(), p.stderr


def main():
    for module, package in (("pip", "python3-pip"), ("setuptools", "python3-setuptools")):
        if importlib.util.find_spec(module) is None:
            print(f"skipped: {module} is not installed (Debian: {package}; scripts/install-deps.sh)")
            sys.exit(pyenv.SKIP)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "src")  # pip builds in place: a copy keeps the tree clean
        shutil.copytree(os.path.join(A.source_dir, "python"), src,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        env = dict(os.environ, CHAKRA_LIB=A.lib, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
        p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                            "--no-deps", "--prefix", os.path.join(tmp, "prefix"), src],
                           capture_output=True, text=True, env=env)
        check(p.returncode == 0, f"pip install offline: {p.stdout[-400:]} {p.stderr[-800:]}")
        sites = glob.glob(os.path.join(tmp, "prefix", "**", "chakra_c", "__init__.py"), recursive=True)
        check(len(sites) == 1, f"one installed package: {sites}")
        if not sites:
            pyenv.finish()
        site = os.path.dirname(os.path.dirname(sites[0]))
        bundled = os.path.join(site, "chakra_c", "libchakra.so")
        check(os.path.exists(bundled), "the built library is in the installed package")
        trace = os.path.join(tmp, "mb")
        pyenv.chakra(A, "gen", "microbench", "--coll", "all_reduce", "--npus", "2", "--size", "1K", "-o", trace)
        env = {k: v for k, v in os.environ.items() if k != "CHAKRA_LIB"}
        env["PYTHONPATH"] = site
        rc, out, err = run_probe(env, trace + ".0.et")
        check(rc == 0 and out[0] == bundled and out[1] == f"1 True {project_version()}",
              f"the installed package reads a trace with its own library: {out} {err[-500:]}")
        env["CHAKRA_LIB"] = os.path.join(tmp, "nowhere", "libchakra.so")
        rc, out, err = run_probe(env, trace + ".0.et")
        check(rc != 0 and "CHAKRA_LIB" in err and "nowhere" in err,
              f"a CHAKRA_LIB that names no library is said so: {err[-300:]}")
        env = {k: v for k, v in os.environ.items() if k != "CHAKRA_LIB"}
        env["PYTHONPATH"] = os.path.join(A.source_dir, "python")
        rc, out, err = run_probe(env, trace + ".0.et")
        check(rc == 0 and out[0].startswith(A.source_dir) and "/lib/libchakra.so" in out[0],
              f"from the source tree, the build tree's library: {out} {err[-300:]}")
    pyenv.finish()


if __name__ == "__main__":
    main()
