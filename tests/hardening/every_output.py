#!/usr/bin/python3
"""every_output.py - no command may write over what it reads, nor write one
file twice (issue 20 item 2, issue 26 item 3).

Every subcommand and mode, taken from the program itself (`chakra --help`
lists the dispatch table, `chakra CMD --help` every mode of a group), is run
with each of its output options (the "Outputs:" line its --help generates
from the option table) set to each of its inputs: by the input's own name
(a prefix output by the input's prefix), and through a symbolic link to it.
Each run must exit 2 with one line on stderr, `chakra CMD: FILE: ...`, and
leave every file of the folder byte for byte as it was, with no file added.
Every pair of output options of a command set to one file must be refused
the same way, and so must every prefix output that would write rank files
beside a shared trace set (PREFIX.set.json): the prefix would hold a set
in both forms. A command or mode this script has no command line for fails
the test: a new command is covered as soon as it exists.

Inputs are named like rank files (NAME.0.et), whatever they hold, so that a
prefix output can name each of them: the check comes before anything is read.

Usage: every_output.py CHAKRA SOURCE_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from hcheck import check, finish

CHAKRA = os.path.abspath(sys.argv[1])
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")

# A command line that reaches the output check, and the input files it
# names (prefixes expanded). t and u are 2-rank traces, a a 2-rank
# algorithm; every other input is a small file of any content.
TRACES = ["t.0.et", "t.1.et"]
CONFIGS = ["--system-configuration=s.0.et", "--network-configuration=n.0.et",
           "--remote-memory-configuration=m.0.et", "--comm-group-configuration=c.0.et"]
CONFIG_FILES = ["s.0.et", "n.0.et", "m.0.et", "c.0.et"]
BASES = {
    "jsonize": [(["t.0.et"], ["t.0.et"])],
    "pack": [(["j.0.et", "-o", "new.et"], ["j.0.et"])],
    "link": [(["--host", "h.0.et", "--device", "k.0.et", "-o", "new.json"], ["h.0.et", "k.0.et"])],
    "convert pytorch": [(["h.0.et", "k.0.et", "-o", "new.et"], ["h.0.et", "k.0.et"])],
    "convert text": [(["w.0.et", "-o", "new"], ["w.0.et"])],
    "validate": [(["t"] + CONFIGS, TRACES + CONFIG_FILES)],
    "stats": [(["t", "--comm-group-configuration", "c.0.et"], TRACES + ["c.0.et"])],
    "sim": [(["--workload-configuration=t"] + CONFIGS, TRACES + CONFIG_FILES)],
    "gen microbench": [(["--coll", "all_reduce", "--npus", "2", "--size", "1K", "-o", "new"], [])],
    "gen dlrm": [(["--npus", "2", "--batch", "4", "-o", "new"], [])],
    "coll gen": [(["--coll", "allreduce", "--algo", "ring", "--ranks", "2", "--size", "1K", "-o", "new"], [])],
    "coll from-msccl": [(["x.0.et", "--size", "1K", "-o", "new"], ["x.0.et"])],
    "coll check": [(["t"], TRACES)],
    "coll expand": [(["t", "--algo", "allreduce=a", "--comm-group-configuration", "c.0.et",
                      "--system-configuration", "s.0.et", "-o", "new"],
                     TRACES + ["a.0.et", "a.1.et", "c.0.et", "s.0.et"])],
    "coll synth": [(["--topology", "l.0.et", "--coll", "allgather", "--size", "4K"], ["l.0.et"])],
    "synth": [(["-o", "new"], []), (["--shared", "-o", "new"], [])],
    "share": [(["t", "-o", "new"], TRACES)],
    "unshare": [(["t", "-o", "new"], TRACES)],
    "sweep": [(["--workload=t", "--system=s.0.et", "--network=n.0.et", "--remote-memory=m.0.et",
                "--comm-group-configuration=c.0.et"], TRACES + CONFIG_FILES)],
    "compare": [(["r.0.et", "q.0.et"], ["r.0.et", "q.0.et"])],
    "replay": [(["t", "--comm-group-configuration", "c.0.et", "--system", "s.0.et"], TRACES + ["c.0.et", "s.0.et"])],
    "timeline": [(["t", "u.0.et"], TRACES + ["u.0.et"])],
    "diff": [(["t", "u"], TRACES + ["u.0.et", "u.1.et"])],
    # -o is a prefix for a prefix input, a file for a file input
    "obfuscate": [(["t", "--key", "key.0.et"], TRACES + ["key.0.et"]), (["u.0.et"], ["u.0.et"])],
    "plot": [(["r.0.et"], ["r.0.et"])],
    "dot": [(["t"], TRACES)],
    "suite list": [([], [])],
    # its -o is a folder it fills (the manifest last), no file output to set to an input: a bad class stops it
    "suite make": [(["--suite-version", "tiny-1.0", "--class", "none", "-o", "new"], [])],
    "suite run": [(["t", "--system", "s.0.et", "--network", "n.0.et", "-o", "new.json"], ["s.0.et", "n.0.et"])],
    "suite score": [(["r.0.et", "q.0.et"], ["r.0.et", "q.0.et"])],
    "suite check": [(["r.0.et"], ["r.0.et"])],
    "suite board": [(["r.0.et", "-o", "new.html"], ["r.0.et"])],
}
OTHER_INPUTS = ["j", "h", "k", "w", "s", "n", "m", "c", "x", "l", "r", "q", "key"]


# Open MPI's own allocations outlive MPI_Finalize: no leak report for replay
# in a sanitizer build (tests/CMakeLists.txt does the same for replay.mpi).
MPI_ENV = dict(ENV, ASAN_OPTIONS="detect_leaks=0")


def run(args, cwd):
    env = MPI_ENV if args[:1] == ["replay"] else ENV
    return subprocess.run([CHAKRA] + args, capture_output=True, text=True, errors="replace", cwd=cwd, env=env,
                          timeout=120)


def commands():
    """Every (command, mode) the program dispatches, with its output options
    as (option, kind) with kind file, prefix or either."""
    top = run(["--help"], ".").stdout
    names = re.findall(r"^  ([a-z][a-z-]*) ", top.split("Commands:", 1)[1], re.M)
    found = {}
    for name in names:
        text = run([name, "--help"], ".").stdout
        for block in re.split(r"(?m)^(?=usage: chakra )", text):
            m = re.match(r"usage: chakra (\S+)(?: ([a-z][a-z-]*))?(?=\s)", block)
            if not m:
                continue
            full = m.group(1) + (" " + m.group(2) if m.group(2) else "")
            outs = []
            o = re.search(r"^Outputs:(.*?);", block, re.M | re.S)
            for opt, mv, alt in re.findall(r"--([a-z-]+) (\S+?)( or \S+?)?(?=,|$)", o.group(1).replace("\n", " ")
                                           if o else ""):
                outs.append(("--" + opt, "either" if alt else "prefix" if mv.endswith(".<r>.et")
                             or mv.endswith(".set.json") else "file"))  # a shared set's prefix is a prefix
            found[full] = outs
    return found


def snapshot(d):
    return {n: open(os.path.join(d, n), "rb").read() if not os.path.isdir(os.path.join(d, n)) else None
            for n in os.listdir(d)}


def prepare(d):
    subprocess.run([CHAKRA, "gen", "microbench", "--coll", "all_reduce", "--npus", "2", "--size", "1M",
                    "-o", os.path.join(d, "t")], check=True)
    for r in (0, 1):
        shutil.copy(os.path.join(d, "t.%d.et" % r), os.path.join(d, "u.%d.et" % r))
    subprocess.run([CHAKRA, "coll", "gen", "--coll", "allreduce", "--algo", "ring", "--ranks", "2",
                    "--size", "1M", "-o", os.path.join(d, "a")], check=True)
    for n in OTHER_INPUTS:
        open(os.path.join(d, n + ".0.et"), "w").write('{"%s": 1}\n' % n)


def with_option(args, opt, value):
    """args with opt set to value (replacing a value already there)."""
    out, skip = [], False
    short = {"--output": "-o"}.get(opt)
    for a in args:
        if skip:
            skip = False
            continue
        if a in (opt, short):
            skip = True
            continue
        if a.startswith(opt + "="):
            continue
        out.append(a)
    return out + [opt + "=" + value]


def refused(name, args, d, what, expect):
    """Runs args in d; it must exit 2, say one line naming the problem, and
    leave every file as it was."""
    before = snapshot(d)
    r = run(name.split() + args, d)
    after = snapshot(d)
    head = "chakra %s: " % name
    ok = check(r.returncode == 2, "%s: %s: exit 2 (got %d: %r)" % (name, what, r.returncode, r.stderr[-300:]))
    ok = check(r.stderr.count("\n") == 1 and r.stderr.startswith(head) and expect in r.stderr,
               "%s: %s: one line '%s...%s', got %r" % (name, what, head, expect, r.stderr[-500:])) and ok
    check(after == before, "%s: %s: every file unchanged, none added (added %s, changed %s)" % (
        name, what, sorted(set(after) - set(before)),
        sorted(n for n in before if before[n] != after.get(n))))
    return ok


def prefix_of(path):
    m = re.match(r"(.*)\.\d+\.et$", path)
    return m.group(1) if m else None


def outputs_against_inputs(name, outs, args, inputs, d):
    runs = 0
    for opt, kind in outs:
        if kind == "either":  # a prefix when the first argument is one (obfuscate)
            kind = "file" if os.path.isfile(os.path.join(d, args[0])) else "prefix"
        for inp in inputs:
            # by its own name, then through a symbolic link to it
            link = "ln-" + inp
            os.symlink(inp, os.path.join(d, link))
            for value, how in ((inp, "its name"), (link, "a link to it")):
                v = value if kind == "file" else prefix_of(value)
                refused(name, with_option(args, opt, v), d, "%s %s = the input %s (%s)" % (opt, v, inp, how),
                        "is the same file as the input")
                runs += 1
            os.unlink(os.path.join(d, link))
    return runs


def outputs_against_each_other(name, outs, args, d):
    runs = 0
    for i, (o1, k1) in enumerate(outs):
        for o2, k2 in outs[i + 1:]:
            if "either" in (k1, k2):
                continue
            v1 = "same" if k1 == "prefix" else "same.0.et"
            v2 = "same" if k2 == "prefix" else "same.0.et"
            refused(name, with_option(with_option(args, o1, v1), o2, v2), d, "%s %s and %s %s" % (o1, v1, o2, v2),
                    "written twice")
            runs += 1
    return runs


def test_every_command(d):
    found = commands()
    check(len(found) >= 20, "the program lists its commands and modes (%s)" % sorted(found))
    check(sum(1 for o in found.values() if o) >= 15, "--help names the outputs of the commands that write (%s)" % found)
    runs = 0
    for name, outs in sorted(found.items()):
        bases = BASES.get(name)
        if not check(bases is not None, "%s: every_output.py has a command line for it (add one to BASES)" % name):
            continue
        for args, inputs in bases:
            for f in inputs:
                check(os.path.exists(os.path.join(d, f)), "%s: input %s exists" % (name, f))
            if not outs:  # reads only: it runs and changes nothing
                before = snapshot(d)
                run(name.split() + args, d)
                check(snapshot(d) == before, "%s (no outputs): every file unchanged" % name)
                continue
            runs += outputs_against_inputs(name, outs, args, inputs, d)
            runs += outputs_against_each_other(name, outs, args, d)
    print("%d refused runs over %d commands and modes" % (runs, len(found)))
    check(not set(BASES) - set(found), "no stale entries in BASES: %s" % sorted(set(BASES) - set(found)))


def test_beside_shared_set(d):
    """Rank files are not written where a shared set is (the opposite of
    --shared over rank files): every command with a prefix output."""
    subprocess.run([CHAKRA, "share", "-q", os.path.join(d, "t"), "-o", os.path.join(d, "sh")], check=True)
    covered = set()
    for name, outs in sorted(commands().items()):
        for args, _ in BASES.get(name, []):
            if name == "share" or "--shared" in args:  # writes the shared form itself
                continue
            for opt, kind in outs:
                if kind == "either":
                    kind = "file" if os.path.isfile(os.path.join(d, args[0])) else "prefix"
                if kind != "prefix":
                    continue
                refused(name, with_option(args, opt, "sh"), d, "%s sh beside the shared set sh" % opt,
                        "sh.set.json: a shared trace set is there; writing rank files beside it")
                covered.add(name)
    want = {"gen microbench", "synth", "coll gen", "coll from-msccl", "convert text", "obfuscate", "coll expand",
            "unshare"}
    check(want <= covered, "every writer of rank files refused beside a shared set (missed %s)" % sorted(want - covered))
    for n in os.listdir(d):
        if n.startswith("sh."):
            os.remove(os.path.join(d, n))


def test_issue_reproductions(d):
    """The reports of issue 20 item 2, as they were typed."""
    for args, expect in ((["obfuscate", "-o", "t", "t"], "same file as the input"),
                         (["timeline", "-o", "t.0.et", "t.0.et"], "same file as the input"),
                         (["dot", "-o", "t.0.et", "t.0.et"], "same file as the input"),
                         (["diff", "-o", "u.1.et", "t", "u"], "same file as the input"),
                         (["coll", "expand", "t", "--algo", "a", "-o", "a"], "same file as the input"),
                         (["coll", "synth", "--topology", "ring:2", "--coll", "allgather", "--size", "4K", "-o", "o",
                           "--xml", "o.0.et"], "written twice")):
        name = " ".join(args[:2]) if args[0] == "coll" else args[0]
        refused(name, args[len(name.split()):], d, " ".join(args), expect)


def test_logging_folder(d):
    """sim --logging-folder DIR writes DIR/log.log: not over an input."""
    os.mkdir(os.path.join(d, "logs"))
    open(os.path.join(d, "logs", "log.log"), "w").write("{}\n")
    refused("sim", ["--workload-configuration=t", "--system-configuration=logs/log.log",
                    "--network-configuration=n.0.et", "--logging-folder=logs"], d,
            "--logging-folder whose log.log is the system file", "is the same file as the input")
    refused("sim", ["--workload-configuration=t", "--system-configuration=s.0.et", "--network-configuration=n.0.et",
                    "--logging-folder=logs", "--report=logs/err.log"], d,
            "--report into the logging folder's err.log", "written twice")
    shutil.rmtree(os.path.join(d, "logs"))


def main():
    d = tempfile.mkdtemp(prefix="chakra-every-output.")
    try:
        prepare(d)
        test_every_command(d)
        test_beside_shared_set(d)
        test_issue_reproductions(d)
        test_logging_folder(d)
    finally:
        shutil.rmtree(d)
    finish()


if __name__ == "__main__":
    main()
