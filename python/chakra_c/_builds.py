"""The repository's build trees whose libchakra.so this interpreter can
load (used by _lib when importing from the source tree, and by setup.py
when bundling): a sanitizer build's library aborts a process that was not
started with the sanitizer's runtime, so those are left out."""
import glob
import os


def _sanitized(build):
    try:
        with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8", errors="replace") as f:
            return any(line.startswith("CHAKRA_SANITIZE:") and line.strip().endswith("=ON") for line in f)
    except OSError:
        return False


def libraries(repo):
    """build*/lib/libchakra.so under repo, newest first, sanitizer builds left out."""
    found = [p for p in glob.glob(os.path.join(repo, "build*", "lib", "libchakra.so"))
             if not _sanitized(os.path.dirname(os.path.dirname(p)))]
    return sorted(found, key=os.path.getmtime, reverse=True)
