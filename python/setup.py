"""Copies libchakra.so into the package when it is built (CHAKRA_LIB, else
the repository's build*/lib), so an installed chakra_c needs no search
path; without one the package looks for the library when imported
(docs/python.md). Everything else is in pyproject.toml."""
import os
import shutil
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "chakra_c"))
import _builds  # noqa: E402  (not the package: importing it loads the library)


def built_library():
    env = os.environ.get("CHAKRA_LIB")
    if env:
        return os.path.join(env, "libchakra.so") if os.path.isdir(env) else env
    found = _builds.libraries(os.path.dirname(HERE))
    return found[0] if found else None


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        lib = built_library()
        if lib and os.path.exists(lib):
            dest = os.path.join(self.build_lib, "chakra_c", "libchakra.so")
            shutil.copyfile(os.path.realpath(lib), dest)
            print(f"chakra_c: bundled {os.path.realpath(lib)}")
        else:
            print("chakra_c: no built libchakra.so found; the package will search for it when imported")


setup(cmdclass={"build_py": BuildWithLibrary})
