#!/usr/bin/env bash
# Figure 8 of the Chakra collective paper (Yoo et al., IEEE Micro 2025),
# reproduced with chakra-c alone: All-Gather algorithmic bandwidth against
# collective size on an 8x8 2D mesh and a 4x4x4 3D mesh (links 50 GB/s,
# 500 ns; GB/s as the simulator reads it, 2^30 bytes), for three algorithms
# written as per-rank ETs:
#   ring         `chakra coll gen --algo ring` (ranks 0..63 in id order,
#                embedded into the mesh over dimension-ordered paths)
#   direct       `chakra coll gen --algo direct`
#   synthesized  `chakra coll synth` (TACOS-style greedy link-chunk matching)
# each run by `chakra sim` as the all-gather's custom implementation on the
# mesh, congestion-aware. size = the all-gather's output (1 KiB .. 1 GiB,
# x4), so each NPU contributes size / 64; algbw = size / time, in 10^9 B/s
# (the unit of the paper and of the TACOS table in the collectives spec).
#
# Writes OUTDIR/fig8.csv (topology,algorithm,size_bytes,time_ns,algbw_GBps)
# and OUTDIR/fig8.svg (the two panels); prints the table.
#
# usage: bench/fig8.sh OUTDIR [BUILD_DIR=build]   (env ALGOS="ring direct synthesized")
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bench/fig8.sh OUTDIR [BUILD_DIR]" >&2; exit 2; }
out=$1
build=${2:-build}
chakra=$build/bin/chakra
algos=${ALGOS:-ring direct synthesized}
[ -x "$chakra" ] || { echo "build first: cmake --build $build" >&2; exit 2; }
mkdir -p "$out"
work=$(mktemp -d /tmp/chakra-fig8.XXXXXX)
trap 'rm -rf "$work"' EXIT

# topology name, inline spec for coll synth, YAML dimensions
topos=("mesh8x8|mesh:8x8|Mesh, Mesh|8, 8|50, 50|500, 500"
       "mesh4x4x4|mesh:4x4x4|Mesh, Mesh, Mesh|4, 4, 4|50, 50, 50|500, 500, 500")
npus=64
csv=$work/fig8.csv
echo "topology,algorithm,size_bytes,time_ns,algbw_GBps" > "$csv"
start=$(date +%s.%N)
for t in "${topos[@]}"; do
  IFS='|' read -r name spec kinds counts bws lats <<< "$t"
  net=$work/$name.yml
  printf 'topology: [ %s ]\nnpus_count: [ %s ]\nbandwidth: [ %s ]\nlatency: [ %s ]\n' "$kinds" "$counts" "$bws" "$lats" > "$net"
  for size in 1024 4096 16384 65536 262144 1048576 4194304 16777216 67108864 268435456 1073741824; do
    per=$((size / npus))
    "$chakra" gen microbench --coll all_gather --npus $npus --size $per -o "$work/mb" > /dev/null
    for algo in $algos; do
      alg=$work/alg_$algo
      rm -f "$alg".*.et
      case $algo in
        synthesized) "$chakra" coll synth --topology "$spec" --bandwidth 50 --latency 500 --coll allgather \
                       --size $per -o "$alg" > /dev/null ;;
        *) "$chakra" coll gen --algo "$algo" --coll allgather --ranks $npus --size $per -o "$alg" > /dev/null ;;
      esac
      printf '{"scheduling-policy": "FIFO", "preferred-dataset-splits": 1, "local-mem-bw": 50,\n "all-gather-implementation-custom": ["%s"]}\n' \
        "$alg" > "$work/sys.json"
      ns=$("$chakra" sim -q --workload-configuration="$work/mb" --system-configuration="$work/sys.json" \
             --network-configuration="$net" --network-model=aware 2> "$work/err" |
           sed -n 's/^sys\[[0-9]*\] finished, \([0-9]*\) cycles.*/\1/p' | sort -n | tail -1)
      [ -n "$ns" ] || { echo "fig8: $name $algo $size: the simulation failed:" >&2; cat "$work/err" >&2; exit 1; }
      awk -v n="$name" -v a="$algo" -v s="$size" -v t="$ns" 'BEGIN{printf "%s,%s,%d,%d,%.3f\n", n, a, s, t, s / t}' >> "$csv"
    done
  done
done
end=$(date +%s.%N)
mv "$csv" "$out/fig8.csv"
column -s, -t "$out/fig8.csv"
echo "($(echo "$end - $start" | bc) s for $(($(wc -l < "$out/fig8.csv") - 1)) generated and simulated points)"

/usr/bin/python3 - "$out/fig8.csv" "$out/fig8.svg" <<'PY'
# Two panels, log2 size against algbw; written by hand (no plotting library).
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
panels = [("mesh8x8", "8x8 2D mesh"), ("mesh4x4x4", "4x4x4 3D mesh")]
colors = {"ring": "#d62728", "direct": "#1f77b4", "synthesized": "#2ca02c"}
W, H, L, R, T, B = 420, 300, 60, 15, 35, 50
ymax = max(float(r["algbw_GBps"]) for r in rows)
ymax = math.ceil(ymax / 20.0) * 20 or 20
sizes = sorted({int(r["size_bytes"]) for r in rows})
x0, x1 = math.log2(sizes[0]), math.log2(sizes[-1])
def label(b):
    for u, n in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << n:
            return "%d %s" % (b >> n, u)
    return "%d B" % b
out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">'
       % (2 * W, H + 20), '<rect width="100%" height="100%" fill="white"/>']
for p, (key, title) in enumerate(panels):
    ox = p * W
    px = lambda s: ox + L + (math.log2(s) - x0) / (x1 - x0) * (W - L - R)
    py = lambda v: T + (1 - v / ymax) * (H - T - B)
    out.append('<text x="%d" y="20" text-anchor="middle" font-size="13">All-Gather, %s (50 GB/s, 500 ns links)</text>'
               % (ox + W / 2, title))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (ox + L, py(0), ox + W - R, py(0)))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (ox + L, T, ox + L, py(0)))
    for v in range(0, int(ymax) + 1, 20 if ymax <= 200 else 50):
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (ox + L, py(v), ox + W - R, py(v)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%d</text>' % (ox + L - 4, py(v) + 4, v))
    for s in sizes[::2]:
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (px(s), H - B + 15, label(s)))
    out.append('<text x="%d" y="%d" text-anchor="middle">collective size (all-gather output)</text>'
               % (ox + (L + W - R) / 2, H - B + 32))
    out.append('<text transform="translate(%d,%d) rotate(-90)" text-anchor="middle">algbw (GB/s)</text>'
               % (ox + 15, (T + H - B) / 2))
    for i, algo in enumerate(colors):
        pts = [(int(r["size_bytes"]), float(r["algbw_GBps"])) for r in rows
               if r["topology"] == key and r["algorithm"] == algo]
        if not pts:
            continue
        pts.sort()
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                   % (colors[algo], " ".join("%.1f,%.1f" % (px(s), py(v)) for s, v in pts)))
        for s, v in pts:
            out.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (px(s), py(v), colors[algo]))
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>'
                   % (ox + L + 10, T + 8 + 15 * i, ox + L + 30, T + 8 + 15 * i, colors[algo]))
        out.append('<text x="%d" y="%d">%s</text>' % (ox + L + 35, T + 12 + 15 * i, algo))
out.append("</svg>")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
echo "wrote $out/fig8.csv and $out/fig8.svg"
