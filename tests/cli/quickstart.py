#!/usr/bin/python3
"""Runs scripts/quickstart.sh on the chakra under test (--build-dir, --out a
temporary folder: nothing installed, nothing built, the source tree
untouched) and checks what it prints against what it wrote:

  * every step succeeds and every file the script lists exists;
  * each row of the table (iteration time, mean exposed communication,
    mean GPU compute, in ms with three decimals) is the report's own
    numbers: the largest finish_ns and the means over ranks;
  * the three runs are what the rows say: the native job runs ten
    all-reduces per rank, the expanded one none (sends and receives
    instead), the custom run the synthesised algorithm (faster than native
    on this mesh, as synth's estimate says);
  * the timelines and SVGs parse;
  * the table pasted in README.md is the one the script prints today.

Usage: quickstart.py CHAKRA SOURCE_DIR
"""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import check, run  # noqa: E402

CHAKRA, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])



ROW = re.compile(r"^(native|synthesised)[^\d]*?\s+(\d+\.\d{3}) ms\s+(\d+\.\d{3}) ms\s+(\d+\.\d{3}) ms$")


def table_rows(text):
    return [l for l in text.splitlines() if ROW.match(l)]


def near(ms_text, ns):
    """A value printed in ms with three decimals is ns rounded to the µs."""
    return abs(float(ms_text) * 1e6 - ns) <= 500.5


def main(tmp):
    build_dir = os.path.dirname(os.path.dirname(CHAKRA))
    if os.path.join(build_dir, "bin", "chakra") != CHAKRA:
        print("skip: %s is not BUILD/bin/chakra, which quickstart.sh --build-dir expects" % CHAKRA)
        return 77
    out = os.path.join(tmp, "out")
    p = subprocess.run(["bash", os.path.join(SOURCE, "scripts", "quickstart.sh"), "--build-dir", build_dir,
                        "--out", out], capture_output=True, text=True, timeout=600)
    check("quickstart.sh --build-dir --out: exit 0, nothing on stderr", p.returncode == 0 and p.stderr == "",
          (p.returncode, p.stdout[-3000:], p.stderr))
    if p.returncode != 0:
        return 1
    rows = table_rows(p.stdout)
    check("three rows in the table", len(rows) == 3, p.stdout)
    if len(rows) != 3:
        return 1
    reports = {}
    for row, name in zip(rows, ("native", "expanded", "custom")):
        with open(os.path.join(out, "report-%s.json" % name)) as f:
            r = json.load(f)
        reports[name] = r
        ranks = r["ranks"]
        _, it, exposed, gpu = ROW.match(row).groups()
        check("%s: 64 ranks, every one finished" % name,
              r["npus"] == 64 and len(ranks) == 64 and all(k["finished"] for k in ranks) and not r["stuck"])
        check("%s: iteration %s ms = the last finish_ns" % (name, it),
              near(it, max(k["finish_ns"] for k in ranks)) and near(it, r["max_finish_ns"]), row)
        check("%s: exposed communication %s ms = the mean over ranks" % (name, exposed),
              near(exposed, sum(k["exposed_comm_ns"] for k in ranks) / 64), row)
        check("%s: GPU compute %s ms = the mean over ranks" % (name, gpu),
              near(gpu, sum(k["gpu_ns"] for k in ranks) / 64), row)
    native, expanded, custom = reports["native"], reports["expanded"], reports["custom"]
    check("native: ten all-reduces per rank, no sends",
          all(k["collectives"].get("ALL_REDUCE", {}).get("count") == 10 and k["p2p_sends"] == 0
              for k in native["ranks"]), native["ranks"][0])
    check("expanded: no collective left, the algorithm's sends instead",
          all(not k["collectives"] and k["p2p_sends"] > 0 for k in expanded["ranks"]), expanded["ranks"][0])
    check("custom: the synthesised all-reduce, faster than native on the mesh",
          custom["max_finish_ns"] < native["max_finish_ns"] and custom["messages"] > native["messages"],
          (custom["max_finish_ns"], native["max_finish_ns"]))
    listed = ["gpt.0.et", "gpt.63.et", "gpt.json", "ar.0.et", "ar.63.et", "gpt-x.0.et", "gpt-x.63.et",
              "native.txt", "expanded.txt", "custom.txt", "timeline-native.json", "timeline-expanded.json",
              "breakdown-native.svg", "breakdown-expanded.svg"]
    missing = [f for f in listed if not os.path.isfile(os.path.join(out, f))]
    check("every file the script lists is there", not missing and ("files in %s/:" % out) in p.stdout, missing)
    for name in ("native", "expanded"):
        with open(os.path.join(out, "timeline-%s.json" % name)) as f:
            events = json.load(f)["traceEvents"]
        check("timeline-%s.json: a Chrome trace of 64 ranks" % name,
              len({e["pid"] for e in events if e.get("ph") == "X"}) == 64)
        svg = ET.parse(os.path.join(out, "breakdown-%s.svg" % name)).getroot()
        bars = [e for e in svg.iter() if e.tag.endswith("rect") and e.get("class") == "bar"]
        check("breakdown-%s.svg: bars for the 64 ranks" % name,
              {b.get("data-label") for b in bars} >= {"rank %d" % r for r in range(64)})
    with open(os.path.join(SOURCE, "README.md")) as f:
        readme = f.read()
    check("README.md shows today's table", table_rows(readme) == rows,
          "\n".join(table_rows(readme)) + "\n---\n" + "\n".join(rows))


if __name__ == "__main__":
    run(main, "chakra-quickstart-")
