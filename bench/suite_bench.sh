#!/usr/bin/env bash
# The benchmark suite's floors (issue 24): `chakra suite make` of the whole
# suite at most 30 s and 2 GB; `chakra suite run` of every workload except
# the 32,768-GPU ones at most 2 minutes, with them at most 5 minutes.
# Prints wall seconds, CPU seconds and peak RSS of make, of the run without
# the 32k workloads (a folder whose manifest lists the others), of the run
# of the 32k workloads alone, of the run of everything in one command and
# of `check --sample 0` of its result (every workload re-simulated), and the
# slowest workloads' simulation seconds. SKIP32K=1 leaves the runs with the
# 32k workloads out (version 1.0 needs ~15 GB for it; 1.1, the
# default, about 0.1 GB).
#
# usage: bench/suite_bench.sh [BUILD_DIR=build]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
chakra=$build/bin/chakra
[ -x "$chakra" ] || { echo "build first: cmake --build $build" >&2; exit 2; }
work=$(mktemp -d /tmp/chakra-suite-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s %8s %8s %10s\n' step wall_s cpu_s peak_MB
measure() { # label command...
  local label=$1
  shift
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" || true
  read -r wall user sys rss < "$work/time"
  printf '%-22s %8.1f %8.1f %10.0f\n' "$label" "$wall" "$(echo "$user + $sys" | bc)" "$((rss / 1024))"
}
measure "make (whole suite)" "$chakra" suite make -q -o "$work/full"
du -sh "$work/full" | sed 's/^/suite folder: /'
# the same files, two manifests: without the 32k workloads, and only them
/usr/bin/python3 - "$work" <<'PY'
import json, os, sys
w = sys.argv[1]
m = json.load(open(os.path.join(w, "full", "suite.json")))
for name, keep in (("small", lambda x: x["ranks"] < 32768), ("big", lambda x: x["ranks"] >= 32768)):
    d = os.path.join(w, name)
    os.mkdir(d)
    sel = [x for x in m["workloads"] if keep(x)]
    for x in sel:
        for f in x["files"]:
            os.link(os.path.join(w, "full", f["name"]), os.path.join(d, f["name"]))
    json.dump(dict(m, workloads=sel), open(os.path.join(d, "suite.json"), "w"))
PY
measure "run without 32k" "$chakra" suite run "$work/small" -q -o "$work/small.json"
if [ "${SKIP32K:-0}" != 1 ]; then
  measure "run of the 32k alone" "$chakra" suite run "$work/big" -q -o "$work/big.json"
  measure "run of everything" "$chakra" suite run "$work/full" -q -o "$work/full.json"
  measure "check --sample 0" "$chakra" suite check --sample 0 -q "$work/full.json"
fi
/usr/bin/python3 - "$work" <<'PY'
import json, os, sys
rows = []
for f in ("small.json", "big.json"):
    p = os.path.join(sys.argv[1], f)
    if os.path.exists(p):
        rows += json.load(open(p))["workloads"]
rows.sort(key=lambda w: -w["sim_seconds"])
print("slowest workloads (simulation seconds, events):")
for w in rows[:8]:
    print("  %-22s %8.1f s %14d  %s" % (w["name"], w["sim_seconds"], w["events"], "ok" if w["ok"] else w.get("error", "")))
PY
