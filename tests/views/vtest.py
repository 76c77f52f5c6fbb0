"""What the view-command tests (dot, timeline, diff, obfuscate, plot) share:
traces built from JSON Lines with `chakra pack`, the shared folder, a
check() that records results. Imported by the test scripts beside it."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

# SVG's namespace, and a simulator system configuration for the pictures' runs.
NS = "{http://www.w3.org/2000/svg}"
SYSTEM = {"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
          "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"],
          "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["ring"],
          "collective-optimization": "localBWAware", "local-mem-bw": 1600}

FAILED = []
PASSED = []


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)[:2000]))
    (PASSED if cond else FAILED).append(name)


def finish():
    print("%d passed, %d failed" % (len(PASSED), len(FAILED)))
    return 1 if FAILED else 0


def shared_dir():
    d = os.environ.get("CHAKRA_SHARED") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                                          "shared")
    return d if os.path.isdir(os.path.join(d, "data")) else None


class Work:
    """A scratch directory removed at exit, and the chakra binary."""

    def __init__(self, chakra):
        self.chakra = os.path.abspath(chakra)
        self.dir = tempfile.mkdtemp(prefix="chakra-views-")

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def run(self, *args, **kw):
        return subprocess.run([self.chakra] + [str(a) for a in args], capture_output=True, **kw)

    def trace(self, name, nodes, metadata=None):
        """Packs nodes (JSON objects of the protobuf JSON mapping) into NAME.et."""
        jl = self.path(name + ".jsonl")
        with open(jl, "w", encoding="utf-8") as f:
            f.write(json.dumps(metadata or {"version": "1.0.0"}) + "\n")
            for n in nodes:
                f.write(json.dumps(n) + "\n")
        out = self.path(name + ".et")
        subprocess.run([self.chakra, "pack", jl, "-o", out], check=True)
        return out


def comp(i, us, deps=(), name=None, cpu=False, ctrl=()):
    n = {"id": str(i), "name": name if name is not None else "comp%d" % i, "type": "COMP_NODE",
         "duration_micros": str(us), "attr": [{"name": "is_cpu_op", "bool_val": cpu}]}
    if deps:
        n["data_deps"] = [str(d) for d in deps]
    if ctrl:
        n["ctrl_deps"] = [str(d) for d in ctrl]
    return n


def coll(i, size, deps=(), name=None, comm_type=0, pg=None):
    n = {"id": str(i), "name": name if name is not None else "ar%d" % i, "type": "COMM_COLL_NODE",
         "attr": [{"name": "is_cpu_op", "bool_val": False}, {"name": "comm_type", "int64_val": str(comm_type)},
                  {"name": "comm_size", "int64_val": str(size)}]}
    if pg is not None:
        n["attr"].append({"name": "pg_name", "string_val": pg})
    if deps:
        n["data_deps"] = [str(d) for d in deps]
    return n


def main(tests):
    if len(sys.argv) < 2:
        print("usage: %s CHAKRA_BINARY" % sys.argv[0])
        return 2
    w = Work(sys.argv[1])
    try:
        for t in tests:
            t(w)
    finally:
        w.close()
    return finish()
