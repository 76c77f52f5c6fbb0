#!/usr/bin/python3
"""The progress line of long commands (cli/progress.c), seen through a
pseudo-terminal: with standard error on a terminal, synth, unshare, share, gen dlrm, validate,
stats, coll check, coll gen,
coll synth, coll from-msccl, coll expand, sim, sweep, convert pytorch, link,
jsonize, pack, timeline, diff, obfuscate and gen microbench draw "chakra CMD: P% (DONE of
TOTAL UNIT)" lines redrawn in place (a carriage return, the line, an
erase to its end), at most ten a second, and erase the last one before
they exit; with -q, or with standard error not a terminal, not a byte of
it. Standard output is the same either way.

Usage: progress.py CHAKRA SOURCE_DIR
"""
import json
import os
import pty
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import check, run  # noqa: E402

CHAKRA, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
DRAW = re.compile(rb"\rchakra ([a-z -]+): (\d+)% \((\d+) of (\d+) ([a-z ]+?)(?:, [^)]*)?\)[^\r\x1b]*\x1b\[K")



def run_tty(args, cwd):
    """Runs with standard error on a pseudo-terminal: (status, stdout, what the terminal got, seconds)."""
    master, slave = pty.openpty()
    t0 = time.monotonic()
    out_file = tempfile.TemporaryFile()  # not a pipe: a command with much to say must not block on it
    p = subprocess.Popen([CHAKRA] + args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out_file, stderr=slave)
    os.close(slave)
    got = b""
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: every writer has closed it
            break
        if not data:
            break
        got += data
    p.wait()
    out_file.seek(0)
    out = out_file.read()
    out_file.close()
    os.close(master)
    return p.returncode, out, got, time.monotonic() - t0


def run_pipe(args, cwd):
    p = subprocess.run([CHAKRA] + args, cwd=cwd, capture_output=True)
    return p.returncode, p.stdout, p.stderr


def command(args):
    return "chakra " + " ".join(a for a in args if not a.startswith("/"))


def shows_progress(args, cwd, unit, total=None, same_stdout=True):
    """On a terminal: drawings, in order, of this unit, the last line erased; -q and a pipe: none.
    A command may also draw the rank files it loads first or writes last."""
    rc, out, got, secs = run_tty(args, cwd)
    every = DRAW.findall(got)
    draws = [d for d in every if d[4].decode() == unit]
    name = command(args[:2] if args[0] in ("coll", "convert", "gen") else args[:1])
    check("%s on a terminal: exit 0, progress drawn in %s" % (name, unit),
          rc == 0 and draws and all(d[4].decode() in (unit, "ranks", "ranks loaded") for d in every), (rc, got[-1500:]))
    if not draws:
        return
    pcts = [int(d[1]) for d in draws]
    dones = [int(d[2]) for d in draws]
    check("%s: percentages rise, each = done / total" % name,
          pcts == sorted(pcts) and dones == sorted(dones)
          and all(int(d[1]) == int(d[2]) * 100 // int(d[3]) for d in draws)
          and (total is None or all(int(d[3]) == total for d in draws)), draws[:5])
    check("%s: the line is erased at the end (nothing drawn after the last erase)" % name,
          got.rstrip(b"\n").endswith(b"\r\x1b[K") or (b"\r\x1b[K" in got and not DRAW.search(got.split(b"\r\x1b[K")[-1])),
          got[-300:])
    check("%s: standard output has no progress" % name, b"\r" not in out and b"\x1b" not in out, out[:300])
    rc_q, out_q, got_q, _ = run_tty(args + ["-q"], cwd)
    check("%s -q on a terminal: no progress" % name, rc_q == 0 and not DRAW.search(got_q) and b"\x1b[K" not in got_q,
          got_q[-500:])
    rc_p, out_p, err_p = run_pipe(args, cwd)
    check("%s with stderr a pipe: no progress, same stdout" % name,
          rc_p == 0 and b"\x1b" not in err_p and b"\r" not in err_p and (out_p == out or not same_stdout),
          (err_p[-500:], out_p[:200]))
    return draws, secs


def main(tmp):
    sys_json = os.path.join(SOURCE, "examples", "system.json")
    # 1,024 ranks: without a rate limit they would be 1,024 drawings.
    big = ["synth", "--num-stacks", "4", "--dmodel", "256", "--dff", "1024", "--head", "8", "--seq", "128",
           "--dp", "32", "--tp", "8", "--pp", "4", "--batch", "128", "--micro-batch", "32", "--threads", "2",
           "-o", "big"]
    r = shows_progress(big, tmp, "ranks", 1024)
    if r:
        draws, secs = r
        check("synth: at most ten drawings a second (%d in %.2f s)" % (len(draws), secs),
              len(draws) <= 10 * secs + 2, len(draws))
    # the same job in the shared form, back to per-rank files, and shared again
    run_pipe(big[:-2] + ["--shared", "-o", "bigs"], tmp)
    shows_progress(["unshare", "bigs", "-o", "bigu"], tmp, "ranks", 1024)
    shows_progress(["share", "bigu", "-o", "bigs2"], tmp, "rank files read", 2048)
    shows_progress(["synth", "--num-stacks", "8", "--dmodel", "512", "--dff", "2048", "--head", "8",
                    "--seq", "256", "--dp", "4", "--tp", "4", "--pp", "4", "--batch", "64", "--micro-batch", "4",
                    "-o", "gpt"], tmp, "ranks", 64)
    shows_progress(["coll", "gen", "--coll", "allreduce", "--algo", "ring", "--ranks", "16", "--size", "1M",
                    "-o", "ring"], tmp, "ranks", 16)
    # the ranks a set loads: one pass each (stats' checks would be a second)
    shows_progress(["coll", "check", "ring"], tmp, "ranks loaded", 16)
    shows_progress(["validate", "gpt"], tmp, "ranks loaded", 64)
    shows_progress(["stats", "gpt", "--no-checks"], tmp, "ranks loaded", 64)
    xml = subprocess.run([sys.executable, os.path.join(SOURCE, "tests", "coll", "msccl_xml.py"), "8"],
                         capture_output=True, check=True).stdout
    with open(os.path.join(tmp, "ring8.xml"), "wb") as f:
        f.write(xml)
    shows_progress(["gen", "dlrm", "--npus", "16", "--batch", "1024", "-o", "dlrm"], tmp, "ranks", 16)
    # matching reports every 1,024 rounds: this all-reduce has about 1,300
    shows_progress(["coll", "synth", "--topology", "mesh:16x16", "--coll", "allreduce", "--size", "1M"], tmp,
                   "transfers", 2 * 256 * 255, same_stdout=False)  # it prints its synthesis time
    shows_progress(["coll", "from-msccl", "ring8.xml", "--size", "1M", "-o", "msccl"], tmp, "ranks", 8)
    shows_progress(["coll", "expand", "gpt", "--algo", "ring", "-o", "gptx"], tmp, "ranks", 64)
    # gpt's 64 ranks hold about 166,000 nodes: over a million events.
    sim = ["sim", "--workload-configuration=gpt", "--system-configuration=" + sys_json,
           "--network-configuration=mesh:4x4x4@50,500"]
    shows_progress(sim, tmp, "nodes")
    got = run_tty(sim, tmp)[2]
    check("sim: the simulated time is shown beside the nodes",
          re.search(rb"\(\d+ of \d+ nodes, [0-9]+\.[0-9]{3} ms simulated\)", got) is not None, got[-500:])
    # convert pytorch: bytes of the host ET parsed, reported every 4 MiB
    io = {"values": [], "shapes": [], "types": []}
    attrs = [{"name": n, "type": "uint64", "value": 0} for n in ("rf_id", "fw_parent", "seq_id", "scope", "tid",
                                                                  "fw_tid")]
    nodes = [{"id": 2, "name": "[pytorch|profiler|execution_trace|thread]", "ctrl_deps": 1}]
    nodes += [{"id": i, "name": "aten::mul", "ctrl_deps": 2} for i in range(3, 40003)]
    for n in nodes:
        n.update(inputs=io, outputs=io, attrs=attrs)
    host = os.path.join(tmp, "host.json")
    with open(host, "w") as f:
        json.dump({"schema": "1.0.2-chakra.0.0.4", "pid": 1, "time": "t", "start_ts": 1, "nodes": nodes,
                   "finish_ts": 2}, f)
    shows_progress(["convert", "pytorch", "host.json", "-o", "host.et"], tmp, "bytes", os.path.getsize(host))
    shows_progress(["convert", "pytorch", "host.json", "-o", "host.et", "--threads", "1"], tmp, "bytes",
                   os.path.getsize(host))
    # link: bytes of the host ET parsed (one Kineto op: almost all host ops unmatched)
    with open(os.path.join(tmp, "kineto.json"), "w") as f:
        json.dump({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 1,
                                    "dur": 1}]}, f)
    shows_progress(["link", "--host", "host.json", "--device", "kineto.json", "--allow-partial", "-o", "linked.json"],
                   tmp, "bytes", os.path.getsize(host))
    # jsonize and pack: bytes of the input read; the largest rank file of gpt
    et = max((os.path.join(tmp, "gpt.%d.et" % r) for r in range(64)), key=os.path.getsize)
    shows_progress(["jsonize", et, "-o", "gpt.jsonl"], tmp, "bytes", os.path.getsize(et))
    shows_progress(["pack", "gpt.jsonl", "-o", "gpt.back.et"], tmp, "bytes",
                   os.path.getsize(os.path.join(tmp, "gpt.jsonl")))
    # ranks: a timeline's, a diff's (of two sets), an obfuscation's, a microbenchmark's
    shows_progress(["timeline", "gpt", "-o", "gpt.trace.json"], tmp, "ranks", 64)
    shows_progress(["diff", "gpt", "gpt"], tmp, "ranks", 64)
    shows_progress(["obfuscate", "gpt", "-o", "gpto"], tmp, "ranks", 64)
    shows_progress(["gen", "microbench", "--coll", "allreduce", "--npus", "512", "--size", "1M", "-o", "mb"], tmp,
                   "ranks", 512)
    shows_progress(["sweep", "--workload-configuration=gpt", "--system-configuration=" + sys_json,
                    "--network-configuration=mesh:4x4x4@50,500", "--vary", "bandwidth=25,50"],
                   tmp, "configurations", 2, same_stdout=False)  # its rows carry wall-clock seconds


if __name__ == "__main__":
    run(main, "chakra-progress-")
