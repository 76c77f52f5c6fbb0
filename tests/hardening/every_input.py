#!/usr/bin/python3
"""every_input.py - what every command does with an input it cannot read and
an output it cannot write (README: exit status 2 for unreadable input or an
output that cannot be written; issue 20 item 8, for every command, not just
from-msccl).

Every subcommand and mode the program lists (`chakra --help`, then each
group's `--help`, as every_output.py finds them) is run with each of its
input files in turn replaced by a path that does not exist and by a
directory. Each run must exit 2 with one line on stderr, `chakra CMD: ...`,
that names the path given. A command without input files writes into a
folder that does not exist instead. Then the commands that print to
standard output, and those that write a file, do it into /dev/full: exit 2
and one line, not a silent success. A command or mode without a command
line here fails the test: a new command is covered as soon as it exists.

Usage: every_input.py CHAKRA
"""
import json
import os
import shutil
import subprocess
import tempfile

from every_output import CHAKRA, ENV, commands, run
from hcheck import check, finish
from tinytraces import write_host_kineto

# Per command, command lines with "{}" where one input goes. The others
# name good inputs made by prepare(): a 2-rank trace t (and its rank file
# t.0.et), an algorithm a, a sim report r.json, a system s.json, a network
# n.yml, a comm-group file c.json, a host trace h.json and its Kineto k.json,
# an ASTRA-sim text workload w.txt, MSCCL XML x.xml.
INPUTS = {
    "jsonize": [["{}"]],
    "pack": [["{}", "-o", "new.et"]],
    "link": [["--host", "{}", "--device", "k.json", "-o", "new.json"],
             ["--host", "h.json", "--device", "{}", "-o", "new.json"]],
    "convert pytorch": [["{}", "-o", "new.et"], ["h.json", "{}", "-o", "new.et"]],
    "convert text": [["{}", "-o", "new", "--num-npus", "2"]],
    "validate": [["{}"], ["t", "--comm-group-configuration", "{}"],
                 ["t", "--system-configuration", "{}", "--network-configuration", "n.yml"],
                 ["t", "--system-configuration", "s.json", "--network-configuration", "{}"]],
    "stats": [["{}"], ["t", "--comm-group-configuration", "{}"]],
    "sim": [["--workload-configuration={}", "--system-configuration=s.json", "--network-configuration=n.yml"],
            ["--workload-configuration=t", "--system-configuration={}", "--network-configuration=n.yml"],
            ["--workload-configuration=t", "--system-configuration=s.json", "--network-configuration={}"],
            ["--workload-configuration=t", "--system-configuration=s.json", "--network-configuration=n.yml",
             "--comm-group-configuration={}"]],
    "coll from-msccl": [["{}", "--size", "1K", "-o", "new"]],
    "coll check": [["{}"]],
    "coll expand": [["{}", "--algo", "ring", "-o", "new"], ["t", "--algo", "allreduce={}", "-o", "new"],
                    ["t", "--algo", "ring", "--comm-group-configuration", "{}", "-o", "new"]],
    "coll synth": [["--topology", "{}", "--coll", "allgather", "--size", "4K"]],
    "sweep": [["--workload={}", "--system=s.json", "--network=n.yml", "--vary", "bandwidth=10"],
              ["--workload=t", "--system={}", "--network=n.yml", "--vary", "bandwidth=10"],
              ["--workload=t", "--system=s.json", "--network={}", "--vary", "bandwidth=10"]],
    "compare": [["{}", "r.json"], ["r.json", "{}"]],
    "replay": [["{}"]],
    "timeline": [["{}", "-o", "new.json"]],
    "diff": [["{}", "t"], ["t", "{}"]],
    "obfuscate": [["{}", "-o", "new.et"], ["t.0.et", "--key", "{}", "-o", "new.et"]],
    "plot": [["{}", "-o", "new.svg"]],
    "dot": [["{}", "-o", "new.dot"]],
    "share": [["{}", "-o", "new"], ["t", "--comm-group-configuration", "{}", "-o", "new"]],
    "unshare": [["{}", "-o", "new"], ["t", "--comm-group-configuration", "{}", "-o", "new"]],
}
# Commands that read no file: their output goes into a missing folder.
NO_INPUT = {
    "gen microbench": ["--coll", "all_reduce", "--npus", "2", "--size", "1K", "-o", "{}/new"],
    "gen dlrm": ["--npus", "2", "-q", "-o", "{}/new"],
    "coll gen": ["--coll", "allreduce", "--algo", "ring", "--ranks", "2", "--size", "1K", "-o", "{}/new"],
    "synth": ["-q", "-o", "{}/new"],
}
# What goes to standard output, or into an output file, given /dev/full.
FULL = [
    ("jsonize", ["t.0.et"]), ("stats", ["t"]), ("validate", ["t"]), ("coll check", ["a"]),
    ("coll synth", ["--topology", "ring:4", "--coll", "allgather", "--size", "4K"]),
    ("sim", ["--workload-configuration=t", "--system-configuration=s.json", "--network-configuration=n.yml"]),
    ("compare", ["r.json", "r.json"]), ("diff", ["t", "t"]), ("timeline", ["t"]), ("plot", ["r.json"]),
    ("dot", ["t.0.et"]), ("pack", ["t.json", "-o", "/dev/full"]),
    ("coll synth", ["--topology", "ring:4", "--coll", "allgather", "--size", "4K", "--xml", "/dev/full"]),
    ("sim", ["--workload-configuration=t", "--system-configuration=s.json", "--network-configuration=n.yml",
             "--report=/dev/full", "-q"]),
    ("sweep", ["--workload=t", "--system=s.json", "--network=n.yml", "--vary", "bandwidth=10"]),
    ("obfuscate", ["t.0.et", "-o", "/dev/full", "-q"]),
    ("share", ["t", "-o", "new"]), ("unshare", ["t", "-o", "new"]),
]


def prepare(d):
    def chakra(*args):
        p = run(list(args), d)
        assert p.returncode == 0, "%s: %s" % (args, p.stderr)
    chakra("gen", "microbench", "--coll", "all_reduce", "--npus", "2", "--size", "1M", "-o", "t")
    chakra("coll", "gen", "--coll", "allreduce", "--algo", "ring", "--ranks", "2", "--size", "1M", "-o", "a")
    chakra("jsonize", "t.0.et", "-o", "t.json")
    with open(os.path.join(d, "n.yml"), "w") as f:
        f.write("topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n")
    with open(os.path.join(d, "s.json"), "w") as f:
        json.dump({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
                   "preferred-dataset-splits": 1, "all-reduce-implementation": ["ring"],
                   "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
                   "all-to-all-implementation": ["ring"], "collective-optimization": "baseline"}, f)
    with open(os.path.join(d, "c.json"), "w") as f:
        f.write('{"0": [0, 1]}\n')
    chakra("sim", "-q", "--workload-configuration=t", "--system-configuration=s.json", "--network-configuration=n.yml",
           "--report=r.json")
    write_host_kineto(d, "h.json", "k.json")
    os.mkdir(os.path.join(d, "adir"))


def one_line(name, argv, d, path, what):
    """argv (of command name) in d must exit 2 with one line naming path;
    whatever it wrote is removed."""
    before = set(os.listdir(d))
    p = run(name.split() + argv, d)
    for n in set(os.listdir(d)) - before:
        (shutil.rmtree if os.path.isdir(os.path.join(d, n)) else os.unlink)(os.path.join(d, n))
    lines = p.stderr.splitlines()
    check(p.returncode == 2 and len(lines) == 1 and lines[0].startswith("chakra") and path in lines[0],
          "%s %s: %s: exit 2 and one line naming %s (got %d: %r)" % (name, " ".join(argv), what, path, p.returncode,
                                                                      p.stderr[-400:]))


def test_every_command(d):
    found = commands()
    check(len(found) >= 20, "the program lists its commands and modes (%s)" % sorted(found))
    for name in sorted(found):
        lines = INPUTS.get(name)
        if name in NO_INPUT:
            argv = [a.replace("{}", "no-such-folder") for a in NO_INPUT[name]]
            one_line(name, argv, d, "no-such-folder", "output in a folder that does not exist")
            continue
        if not check(lines is not None, "%s: every_input.py has a command line for it (add one to INPUTS)" % name):
            continue
        for template in lines:
            for path, what in (("no-such-file", "an input that does not exist"), ("adir", "a directory as input")):
                one_line(name, [a.replace("{}", path) for a in template], d, path, what)


def test_full_disk(d):
    """Standard output, or an output file, on a full device: a write failure."""
    for name, argv in FULL:
        with open("/dev/full", "w") as full:
            p = subprocess.run([CHAKRA] + name.split() + argv, stdout=full, stderr=subprocess.PIPE, text=True, cwd=d,
                               env=ENV, timeout=120)
        lines = p.stderr.splitlines()
        check(p.returncode == 2 and len(lines) == 1 and "write failed" in lines[0],
              "%s %s > /dev/full: exit 2, one line saying the write failed (got %d: %r)" % (
                  name, " ".join(argv), p.returncode, p.stderr[-300:]))


def main():
    d = tempfile.mkdtemp(prefix="chakra-every-input.")
    try:
        prepare(d)
        test_every_command(d)
        if os.path.exists("/dev/full"):
            test_full_disk(d)
        else:
            print("skip: no /dev/full")
    finally:
        shutil.rmtree(d)
    finish()


if __name__ == "__main__":
    main()
