#!/usr/bin/python3
"""Pins the command line every chakra subcommand shares (cli/opts.c):

  * `--help` (and `-h`, `chakra help CMD`) exits 0 and lists every option the
    subcommand has ever taken and every flag its page in docs/ spells;
  * `--key=value` and `--key value` (and `-o value`) give the same result for
    every subcommand, including sim's ASTRA-sim spellings and the
    `--threads=4` / `--p2p-missing drop` forms convert and link once refused;
  * counts reject suffixes, signs, garbage and overflow, unknown options and
    missing values are refused: one line on stderr naming the option, exit
    status 2, nothing written;
  * `--` ends the options.

Needs no shared data: its inputs are generated with chakra itself or written
here.

Usage: cli_options.py CHAKRA SOURCE_DIR
"""
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

CHAKRA, SOURCE = os.path.abspath(sys.argv[1]), sys.argv[2]
FAILURES = []

# Every option each subcommand takes (the flags of the previous hand-written
# parsers, which must keep working).
OPTIONS = {
    ("jsonize",): ["--document", "--compat", "--gzip", "-o", "--output"],
    ("pack",): ["-o", "--output", "--gzip"],
    ("validate",): ["--max-errors", "--strict", "-q", "--quiet", "--comm-group-configuration", "--rendezvous-protocol",
                    "--system-configuration", "--network-configuration", "--remote-memory-configuration",
                    "--network-model", "--num-queues-per-dim", "--injection-scale", "--multidim-p2p",
                    "--custom-collective-scaling"],
    ("stats",): ["--json", "--ignore-ctrl-deps", "--comm-group-configuration", "--no-checks"],
    ("gen", "microbench"): ["--coll", "--npus", "--size", "-o", "--output"],
    ("gen", "dlrm"): ["--npus", "--batch", "--tables", "--rows", "--emb-dim", "--lookups", "--dense-features",
                      "--bottom-mlp", "--top-mlp", "--dtype-bytes", "--peak-tflops", "--mem-bw", "--threads", "-o",
                      "--output", "-q", "--quiet"],
    ("link",): ["--host", "--device", "-o", "--output", "--rank", "--thread-gap-us", "--allow-partial", "--threads",
                "-q", "--quiet"],
    ("convert", "pytorch"): ["-o", "--output", "--comm-groups", "--compat", "--log", "--p2p-missing",
                             "--unknown-coll", "--threads", "-q", "--quiet"],
    ("convert", "text"): ["-o", "--output", "--num-npus", "--num-passes", "--compat", "-q", "--quiet"],
    ("sim",): ["--workload-configuration", "--system-configuration", "--network-configuration",
               "--remote-memory-configuration", "--comm-group-configuration", "--network-model",
               "--num-queues-per-dim", "--injection-scale", "--rendezvous-protocol", "--multidim-p2p",
               "--custom-collective-scaling", "--logging-folder", "--logging-configuration", "--comm-scale", "--compute-scale", "--report",
               "--timeline", "--threads", "--summary", "-q", "--quiet"],
    ("dot",): ["--around", "--depth", "--critical-path", "--collapse", "--max-nodes", "--graphml", "--rank",
               "--ignore-ctrl-deps", "--title", "-o", "--output"],
    ("timeline",): ["--ignore-ctrl-deps", "-q", "--quiet", "-o", "--output"],
    ("diff",): ["--by-name", "--json", "--limit", "--ignore-ctrl-deps", "-q", "--quiet", "-o", "--output"],
    ("obfuscate",): ["-o", "--output", "--key", "--hash-strings", "--keep", "--time-noise", "--seed", "-q",
                     "--quiet"],
    ("plot",): ["-o", "--output"],
}
VIEWS = ("dot", "timeline", "diff", "obfuscate", "plot")


def check(name, ok, detail=""):
    print(("ok    " if ok else "FAIL  ") + name)
    if not ok:
        FAILURES.append(name)
        if detail:
            print("      " + str(detail).replace("\n", "\n      ")[:3000])


def run(*args, cwd=None):
    return subprocess.run([CHAKRA] + list(args), capture_output=True, text=True, cwd=cwd)


def one_line(p):
    return p.stderr.count("\n") == 1 and p.stderr.endswith("\n")


def words(text):
    """The option spellings in text: --long-name and -x."""
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])\b", text))


def test_help():
    for cmd, opts in OPTIONS.items():
        name = " ".join(cmd)
        for form in ("--help", "-h"):
            p = run(*cmd, form)
            missing = [o for o in opts if o not in words(p.stdout)]
            check("%s %s: exit 0, usage on stdout, every option listed" % (name, form),
                  p.returncode == 0 and p.stdout.startswith("usage: chakra " + name) and not p.stderr
                  and not missing, "%d missing %s\n%s%s" % (p.returncode, missing, p.stdout, p.stderr))
    for group, modes in (("convert", ("pytorch", "text")), ("gen", ("microbench", "dlrm"))):
        p = run(group, "--help")
        ok = p.returncode == 0 and all("usage: chakra %s %s" % (group, m) in p.stdout for m in modes)
        opts = set(o for m in modes for o in OPTIONS[(group, m)])
        check("%s --help: every mode's usage and options" % group, ok and opts <= words(p.stdout), p.stdout)
    p = run("help", "sim")
    check("chakra help sim: sim's help", p.returncode == 0 and "--workload-configuration" in p.stdout, p.stderr)


def own_text(page, cmd):
    """The page without the spans that quote another command (`chakra sim
    --timeline` on the timeline page is sim's flag, not timeline's)."""
    text = open(page).read()
    return re.sub(r"chakra (?!%s\b)[a-z]+[^`\n]*" % re.escape(cmd), "", text)


def test_docs_flags_are_in_help():
    """Every flag a page of docs/ spells for its command appears in that command's --help."""
    for cmd in ("jsonize", "pack", "validate", "stats", "gen", "link", "convert", "sim") + VIEWS:
        page = os.path.join(SOURCE, "docs", cmd + ".md")
        if not os.path.exists(page):
            continue
        text = own_text(page, cmd)
        doc = set(o for o in words(text) if o.startswith("--")) - {"--help", "--key", "--name"}  # placeholders: "--name=value"
        help_text = run(cmd, "--help").stdout
        check("docs/%s.md: every flag it spells is in 'chakra %s --help'" % (cmd, cmd),
              doc <= words(help_text), sorted(doc - words(help_text)))


def same_files(a, b):
    return os.path.exists(a) and os.path.exists(b) and filecmp.cmp(a, b, shallow=False)


def test_forms(tmp):
    j = lambda *p: os.path.join(tmp, *p)
    # gen: every value in both spellings and the short option attached
    a = run("gen", "microbench", "--coll=all_reduce", "--npus=8", "--size=1M", "--output=" + j("a"))
    b = run("gen", "microbench", "--coll", "all_reduce", "--npus", "8", "--size", "1048576", "-o", j("b"))
    c = run("gen", "microbench", "--coll", "ALL_REDUCE", "--npus", "8", "--size", "1MiB", "-o" + j("c"))
    check("gen microbench: --k=v, --k v, -oPREFIX and 1M = 1MiB = 1048576 give the same files",
          a.returncode == b.returncode == c.returncode == 0
          and all(same_files(j("a.%d.et" % r), j("%s.%d.et" % (x, r))) for r in range(8) for x in "bc"),
          a.stderr + b.stderr + c.stderr)

    # validate and stats
    v1, v2 = run("validate", "--max-errors=1", "-q", j("a")), run("validate", "--max-errors", "1", "--quiet", j("a"))
    check("validate: --max-errors=1 and --max-errors 1", v1.returncode == v2.returncode == 0 and v1.stdout == v2.stdout
          and "8 file(s)" in v1.stdout, v1.stdout + v1.stderr + v2.stderr)
    s = run("stats", "--json", j("a"))
    check("stats --json PREFIX: 8 ranks", s.returncode == 0 and len(json.loads(s.stdout)["ranks"]) == 8, s.stderr)

    # jsonize and pack
    j1 = run("jsonize", "--document", j("a.0.et"), "--output=" + j("a.json"))
    j2 = run("jsonize", "--document", j("a.0.et"), "-o", j("b.json"))
    p1 = run("pack", j("a.json"), "--output", j("back.et"))
    p2 = run("pack", "--output=" + j("back2.et"), j("b.json"))
    check("jsonize/pack: --output=F, --output F and -o F", all(x.returncode == 0 for x in (j1, j2, p1, p2))
          and same_files(j("a.json"), j("b.json")) and same_files(j("back.et"), j("a.0.et"))
          and same_files(j("back2.et"), j("a.0.et")), j1.stderr + j2.stderr + p1.stderr + p2.stderr)

    # sim: ASTRA-sim's --k=v spelling and --k v
    sysc, net = os.path.join(SOURCE, "examples", "system.json"), os.path.join(SOURCE, "examples", "ring8.yml")
    s1 = run("sim", "--workload-configuration=" + j("a"), "--system-configuration=" + sysc,
             "--network-configuration=" + net, "--network-model=unaware", "--threads=2", "--injection-scale=1")
    s2 = run("sim", "--workload-configuration", j("a"), "--system-configuration", sysc, "--network-configuration", net,
             "--network-model", "unaware", "--threads", "2", "--injection-scale", "1")
    check("sim: --workload-configuration=P and --workload-configuration P (all options both ways)",
          s1.returncode == s2.returncode == 0 and s1.stdout == s2.stdout and s1.stdout.count("finished") == 8,
          s1.stdout + s1.stderr + s2.stderr)

    # convert text
    with open(j("w.txt"), "w") as f:
        f.write("DATA\n2\nconv1 -1 5 NONE 0 6 NONE 0 7 ALLREDUCE 100 1\nfc -1 8 NONE 0 9 NONE 0 10 NONE 0 1\n")
    t1 = run("convert", "text", j("w.txt"), "--num-npus=2", "--num-passes", "2", "--output=" + j("t1"), "-q")
    t2 = run("convert", "text", "--num-npus", "2", "--num-passes=2", "-o", j("t2"), "--quiet", j("w.txt"))
    check("convert text: --num-npus=2 / --num-npus 2, --output=P / -o P", t1.returncode == t2.returncode == 0
          and all(same_files(j("t1.%d.et" % r), j("t2.%d.et" % r)) for r in range(2)), t1.stderr + t2.stderr)

    # link and convert pytorch: --threads=4 and --p2p-missing drop (refused before)
    io = {"values": [], "shapes": [], "types": []}
    attrs = [{"name": n, "type": "uint64", "value": 0} for n in ("rf_id", "fw_parent", "seq_id", "scope", "tid",
                                                                  "fw_tid")]
    nodes = [{"id": 2, "name": "[pytorch|profiler|execution_trace|thread]", "ctrl_deps": 1},
             {"id": 3, "name": "aten::mul", "ctrl_deps": 2}]
    for n in nodes:
        n.update(inputs=io, outputs=io, attrs=attrs)
    with open(j("host.json"), "w") as f:
        json.dump({"schema": "1.0.2-chakra.0.0.4", "pid": 1, "time": "t", "start_ts": 1, "nodes": nodes,
                   "finish_ts": 2}, f)
    with open(j("kineto.json"), "w") as f:
        json.dump({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 10,
                                    "dur": 5, "args": {"External id": 1}}]}, f)
    l1 = run("link", "--host=" + j("host.json"), "--device", j("kineto.json"), "--threads=4", "--thread-gap-us=500",
             "--output=" + j("l1.json"), "-q")
    l2 = run("link", "--host", j("host.json"), "--device=" + j("kineto.json"), "--threads", "4", "--thread-gap-us",
             "500", "-o", j("l2.json"), "--quiet")
    check("link: --threads=4 / --threads 4, --host=F / --host F", l1.returncode == l2.returncode == 0
          and same_files(j("l1.json"), j("l2.json")), l1.stderr + l2.stderr)
    c1 = run("convert", "pytorch", j("l1.json"), "--threads=4", "--p2p-missing", "drop", "--unknown-coll", "comp",
             "-o", j("c1.et"), "-q")
    c2 = run("convert", "pytorch", "--threads", "4", "--p2p-missing=drop", "--unknown-coll=comp",
             "--output=" + j("c2.et"), j("l1.json"), "-q")
    check("convert pytorch: --threads=4, --p2p-missing drop / =drop", c1.returncode == c2.returncode == 0
          and same_files(j("c1.et"), j("c2.et")), c1.stderr + c2.stderr)
    return j("a"), j("host.json"), j("kineto.json"), j("w.txt")


def test_refusals(tmp, prefix, host, kineto, text):
    out = os.path.join(tmp, "refused")
    os.mkdir(out)
    o = lambda name: os.path.join(out, name)
    sim = ["sim", "--workload-configuration=" + prefix, "--system-configuration=x", "--network-configuration=y"]
    gen = ["gen", "microbench", "--coll", "all_reduce", "--size", "1M", "-o", o("g")]
    link = ["link", "--host", host, "--device", kineto, "-o", o("l.json")]
    cases = [
        # (args, the option named, what the line says)
        (gen + ["--npus", "1K"], "--npus", "expected a whole number, got '1K'"),
        (gen + ["--npus=12abc"], "--npus", "expected a whole number, got '12abc'"),
        (gen + ["--npus", "-3"], "--npus", "expected a whole number, got '-3'"),
        (gen + ["--npus="], "--npus", "expected a whole number, got ''"),
        (gen + ["--npus", "4294967297"], "--npus", "out of range: expected 1 to 1000000"),
        (gen + ["--npus", "4", "--size", "1X"], "--size", "expected a byte count"),
        (gen + ["--npus", "4", "--size", "99999999999T"], "--size", "out of range"),
        (gen + ["--npus", "4", "--coll=all_reduc"], "--coll", "expected all_reduce, all_gather, reduce_scatter"),
        (["validate", "--max-errors", "-3", prefix], "--max-errors", "expected a whole number"),
        (["validate", prefix, "--max-errors"], "--max-errors", "expected a value (N)"),
        (["validate", "--max-errors=18446744073709551616", prefix], "--max-errors", "out of range"),
        (link + ["--threads", "1K"], "--threads", "expected a whole number"),
        (link + ["--threads=0"], "--threads", "out of range: expected 1 to 64"),
        (link + ["--rank", "1e3"], "--rank", "expected a whole number"),
        (link + ["--thread-gap-us", "-5"], "--thread-gap-us", "expected a positive number"),
        (["convert", "pytorch", host, "-o", o("c.et"), "--threads="], "--threads", "expected a whole number"),
        (["convert", "pytorch", host, "-o", o("c.et"), "--p2p-missing", "maybe"], "--p2p-missing",
         "expected error or drop, got 'maybe'"),
        (["convert", "text", text, "-o", o("t"), "--num-npus", "2K"], "--num-npus", "expected a whole number"),
        (["convert", "text", text, "-o", o("t"), "--num-passes", "99999999999999999999"], "--num-passes",
         "out of range"),
        (sim + ["--threads=1K"], "--threads", "expected a whole number"),
        (sim + ["--num-queues-per-dim", "65"], "--num-queues-per-dim", "out of range: expected 1 to 64"),
        (sim + ["--injection-scale=0"], "--injection-scale", "expected a positive number"),
        (sim + ["--network-model", "fast"], "--network-model", "expected aware or unaware"),
        (sim + ["--rendezvous-protocol=maybe"], "--rendezvous-protocol", "expected true, false, 1 or 0"),
        (["jsonize", "--gzip=yes", prefix + ".0.et"], "--gzip", "takes no value"),
        (["pack", "x.json"], "--output", "required"),
        (["link", "--host", host], "--device", "required"),
    ]
    for cmd, opt in ((["jsonize"], "--frobnicate"), (["pack"], "--frobnicate"), (["validate"], "-x"),
                     (["stats"], "--frobnicate"), (["gen", "microbench"], "--frobnicate"), (["link"], "-x"),
                     (["convert", "pytorch"], "--frobnicate"), (["convert", "text"], "--frobnicate"),
                     (["sim"], "--frobnicate")):
        cases.append((cmd + [opt], opt, "unknown option"))
    for args, opt, what in cases:
        p = run(*args)
        head = "chakra %s: %s: " % (" ".join(args[:2] if args[0] in ("gen", "convert") else args[:1]), opt)
        check("refused: %s" % " ".join(a.replace(tmp, "T") for a in args),
              p.returncode == 2 and one_line(p) and p.stderr.startswith(head) and what in p.stderr and not p.stdout
              and not os.listdir(out), "%d %r %r" % (p.returncode, p.stderr, os.listdir(out)))
    for args, what in ((["convert"], "expected pytorch or text"), (["convert", "json"], "'json': expected pytorch"),
                       (["gen"], "expected microbench"), (["jsonize"], "missing arguments"),
                       (["jsonize", "a", "b"], "'b': unexpected argument")):
        p = run(*args)
        check("refused: chakra %s" % " ".join(args), p.returncode == 2 and one_line(p) and what in p.stderr, p.stderr)


def test_view_forms(tmp, prefix):
    """dot, timeline, diff, obfuscate and plot: both spellings of every value option give the same output."""
    j = lambda *p: os.path.join(tmp, *p)
    t = j("t1")  # convert text's two-rank workload (12 nodes a rank, ids from 0)
    d1 = run("dot", "--around=0", "--depth=0", "--max-nodes=5", "--rank=1", "--title=T", "--output=" + j("d1.dot"), t)
    d2 = run("dot", "--around", "0", "--depth", "0", "--max-nodes", "5", "--rank", "1", "--title", "T", "-o",
             j("d2.dot"), t)
    d3 = run("dot", "--rank", "1", "-o" + j("d3.dot"), t)
    drawn = lambda f: re.findall(r"^  n(\d+) \[", open(f).read(), re.M) if os.path.exists(f) else None
    check("dot: --k=v and --k v the same; --around 0 is node 0 (0 is an id, not 'not given')",
          d1.returncode == d2.returncode == d3.returncode == 0 and same_files(j("d1.dot"), j("d2.dot"))
          and drawn(j("d1.dot")) == ["0"] and len(drawn(j("d3.dot"))) == 12,
          d1.stderr + d2.stderr + d3.stderr + str(drawn(j("d1.dot"))))
    t1 = run("timeline", "--ignore-ctrl-deps", "-q", "--output=" + j("tl1.json"), t)
    t2 = run("timeline", "--ignore-ctrl-deps", "--quiet", "-o", j("tl2.json"), t + ".0.et", t + ".1.et")
    check("timeline: --output=F and -o F, PREFIX and its files", t1.returncode == t2.returncode == 0
          and same_files(j("tl1.json"), j("tl2.json")) and not t1.stderr, t1.stderr + t2.stderr)
    f1 = run("diff", "--limit=1", "--by-name", "--json", "--output=" + j("df1.json"), t, prefix)
    f2 = run("diff", "--limit", "1", "--by-name", "--json", "-o", j("df2.json"), t, prefix)
    check("diff: --limit=1 and --limit 1; exit 1 for different traces", f1.returncode == f2.returncode == 1
          and same_files(j("df1.json"), j("df2.json")), f1.stderr + f2.stderr)
    with open(j("key"), "w") as f:
        f.write("k")
    o1 = run("obfuscate", "--key=" + j("key"), "--time-noise=10", "--seed=7", "--keep=op_type", "--hash-strings",
             "--output=" + j("o1"), "-q", t)
    o2 = run("obfuscate", "--key", j("key"), "--time-noise", "10", "--seed", "7", "--keep", "op_type",
             "--hash-strings", "-o", j("o2"), "--quiet", t)
    check("obfuscate: --k=v and --k v give the same ranks", o1.returncode == o2.returncode == 0
          and all(same_files(j("o1.%d.et" % r), j("o2.%d.et" % r)) for r in range(2)), o1.stderr + o2.stderr)
    with open(j("st.json"), "w") as f:
        f.write(run("stats", "--json", t).stdout)
    p1, p2 = run("plot", "--output=" + j("p1.svg"), j("st.json")), run("plot", j("st.json"), "-o", j("p2.svg"))
    check("plot: --output=F and -o F", p1.returncode == p2.returncode == 0 and same_files(j("p1.svg"), j("p2.svg")),
          p1.stderr + p2.stderr)
    return t


def test_view_refusals(tmp, prefix, t):
    out = os.path.join(tmp, "refused-views")
    os.mkdir(out)
    o = lambda name: os.path.join(out, name)
    obf = ["obfuscate", t + ".0.et", "-o", o("x.et"), "--key", "/dev/null"]
    cases = [
        (["dot", "--around", "-1", t], "--around", "expected a whole number, got '-1'"),
        (["dot", "--around=18446744073709551616", t], "--around", "out of range"),
        (["dot", "--depth", "2K", t], "--depth", "expected a whole number"),
        (["dot", "--max-nodes", "x", t], "--max-nodes", "expected a whole number, got 'x'"),
        (["dot", "--rank", "4294967296", t], "--rank", "out of range"),
        (["dot", t, "--title"], "--title", "expected a value"),
        (["timeline", t, "-o"], "-o", "expected a value"),
        (["diff", "--limit", "1e3", t, prefix], "--limit", "expected a whole number"),
        (obf + ["--time-noise", "150"], "--time-noise", "not a percentage in [0, 100)"),
        (obf + ["--time-noise=100"], "--time-noise", "not a percentage in [0, 100)"),
        (obf + ["--time-noise", "-1"], "--time-noise", "not a percentage in [0, 100)"),
        (obf + ["--time-noise", "ten"], "--time-noise", "expected a number, got 'ten'"),
        (obf + ["--seed", "-1"], "--seed", "expected a whole number"),
        (["plot", "r.json", "--output"], "--output", "expected a value"),
    ]
    for cmd in VIEWS:
        cases.append(([cmd, "--frobnicate", t], "--frobnicate", "unknown option"))
    for args, opt, what in cases:
        p = run(*args)
        check("refused: %s" % " ".join(a.replace(tmp, "T") for a in args),
              p.returncode == 2 and one_line(p) and p.stderr.startswith("chakra %s: %s: " % (args[0], opt))
              and what in p.stderr and not p.stdout and not os.listdir(out),
              "%d %r %r" % (p.returncode, p.stderr, os.listdir(out)))
    for args, what in ((["diff", t], "missing arguments: expected A B"), (["diff", t, t, t], "unexpected argument"),
                       (["dot"], "missing arguments"), (["dot", t, t], "unexpected argument"),
                       (["timeline"], "missing arguments"), (["obfuscate"], "missing arguments"),
                       (["obfuscate", t, t], "unexpected argument"), (["plot"], "missing arguments"),
                       (["plot", "a", "b"], "unexpected argument")):
        p = run(*args)
        check("refused: chakra %s" % " ".join(a.replace(tmp, "T") for a in args),
              p.returncode == 2 and one_line(p) and p.stderr.startswith("chakra %s: " % args[0]) and what in p.stderr,
              p.stderr)


def test_double_dash(tmp, prefix):
    shutil.copy(prefix + ".0.et", os.path.join(tmp, "-q.et"))
    p = run("validate", "--", "-q.et", cwd=tmp)
    check("validate -- -q.et: a file whose name starts with a dash", p.returncode == 0 and "1 file(s)" in p.stdout,
          p.stdout + p.stderr)


def test_messages_one_line_command_form(tmp, prefix):
    """Issues 20 and 26: every message is one line, 'chakra COMMAND: ...',
    whatever the value echoed; limits are named as integers."""
    o = lambda name: os.path.join(tmp, name)
    synth_topo = ["coll", "synth", "--coll", "allgather", "--size", "1M", "--topology"]
    cases = [
        (["gen", "microbench", "--coll", "all_reduce", "--size", "1K", "-o", o("nl"), "--npus", "4\n5"],
         "chakra gen microbench: --npus: expected a whole number, got '4\\n5'"),
        (["synth", "-o", o("nl"), "--model-type", "gp\nt\x01"], "chakra synth: --model-type 'gp\\nt\\x01'"),
        (["coll", "ge\nn"], "chakra coll: 'ge\\nn': expected gen"),
        (["compare", o("missing1.json"), o("missing2.json")], "chakra compare: " + o("missing1.json")),
        (synth_topo + ["mesh:8x8@0,500"], "chakra coll synth: topology 'mesh:8x8@0,500': link bandwidth 0 GB/s: "
                                          "expected more than 0 (e.g. mesh:8x8@50,500)"),
        (synth_topo + ["hypercube:131072"], "chakra coll synth: topology 'hypercube:131072': 17 dimensions: at most 16"),
        (synth_topo + ["mesh:" + "x".join(["2"] * 17) + "@50,500"], "17 dimensions: at most 16"),
        (synth_topo + ["mesh:8x8@50,-5"], "latency must be 0 to 1000000000000000 ns"),
    ]
    with open(os.path.join(SOURCE, "examples", "system.json")) as f:
        system = json.load(f)
    system["preferred-dataset-splits"] = 1048577
    with open(o("splits.json"), "w") as f:
        json.dump(system, f)
    cases.append((["sim", "--workload-configuration=" + prefix, "--system-configuration=" + o("splits.json"),
                   "--network-configuration=ring:8@50,500"],
                  '"preferred-dataset-splits" must be a whole number from 1 to 1048576, not 1048577'))
    for args, want in cases:
        p = run(*args)
        check("one line: chakra %s" % " ".join(a.replace(tmp, "T") for a in args).replace("\n", "\\n"),
              p.returncode == 2 and one_line(p) and want in p.stderr and p.stderr.startswith("chakra ")
              and "compare: compare:" not in p.stderr, "%d %r" % (p.returncode, p.stderr))
    # Summaries of timeline and obfuscate are in the command's form too.
    for args, want in ((["timeline", prefix + ".0.et", "-o", o("t.json")], "chakra timeline: timeline of 1 rank(s)"),
                       (["obfuscate", prefix + ".0.et", "-o", o("ob.et")], "chakra obfuscate: obfuscated ")):
        p = run(*args)
        lines = p.stderr.splitlines()
        check("summary line: chakra %s" % args[0], p.returncode == 0 and any(l.startswith(want) for l in lines)
              and all(l.startswith("chakra %s: " % args[0]) for l in lines), p.stderr)


def test_scripts_refuse_what_they_do_not_know(tmp):
    """scripts/test.sh --asan ran the plain suite (--werror goes with it),
    quickstart.sh --help ran
    everything. Copies of the scripts run beside stubs of what they call."""
    root = os.path.join(tmp, "scripts-tree")
    bin_dir = os.path.join(root, "bin")
    os.makedirs(os.path.join(root, "scripts"))
    os.makedirs(bin_dir)
    log = os.path.join(root, "log")
    for name in ("test.sh", "quickstart.sh"):
        shutil.copy(os.path.join(SOURCE, "scripts", name), os.path.join(root, "scripts", name))
    for path in (os.path.join(root, "scripts", "install-deps.sh"), os.path.join(bin_dir, "cmake"),
                 os.path.join(bin_dir, "ctest")):
        with open(path, "w") as f:
            f.write("#!/bin/sh\necho %s \"$@\" >> %s\n" % (os.path.basename(path), log))
        os.chmod(path, 0o755)
    env = dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"])

    def script(name, *args):
        if os.path.exists(log):
            os.remove(log)
        p = subprocess.run(["bash", os.path.join(root, "scripts", name)] + list(args), capture_output=True,
                           text=True, env=env, timeout=60)
        ran = open(log).read() if os.path.exists(log) else ""
        return p, ran

    p, ran = script("test.sh", "--asan")
    check("test.sh --asan builds with the sanitizers", p.returncode == 0 and "-DCHAKRA_SANITIZE=ON" in ran, ran)
    p, ran = script("test.sh", "--werror", "--asan")
    check("test.sh --werror --asan: both", p.returncode == 0 and "-DCHAKRA_SANITIZE=ON" in ran
          and "-DCHAKRA_WERROR=ON" in ran, ran)
    for args in (["--bogus"], ["--sanitize", "extra"]):
        p, ran = script("test.sh", *args)
        check("test.sh %s: refused, nothing run" % " ".join(args),
              p.returncode == 2 and not ran and one_line(p) and "expected" in p.stderr, (p.stderr, ran))
    p, ran = script("quickstart.sh", "--help")
    check("quickstart.sh --help prints help and runs nothing",
          p.returncode == 0 and "--help" in p.stdout and not ran, (p.stdout, p.stderr, ran))
    p, ran = script("quickstart.sh", "--bogus")
    check("quickstart.sh --bogus: refused, nothing run", p.returncode == 2 and not ran, (p.stderr, ran))


def main():
    tmp = tempfile.mkdtemp(prefix="chakra-cli-test-")
    try:
        test_help()
        test_docs_flags_are_in_help()
        prefix, host, kineto, text = test_forms(tmp)
        test_refusals(tmp, prefix, host, kineto, text)
        t = test_view_forms(tmp, prefix)
        test_view_refusals(tmp, prefix, t)
        test_double_dash(tmp, prefix)
        test_messages_one_line_command_form(tmp, prefix)
        test_scripts_refuse_what_they_do_not_know(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
