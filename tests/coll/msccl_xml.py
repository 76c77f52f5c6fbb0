#!/usr/bin/python3
"""Writes MSCCL-IR XML (collectives.md section 3) for ring all-reduce, as
msccl-tools' allreduce_a100_ring would with one channel and instruction
fusion off (s/rrc then s/r, like ASTRA-sim's custom_allreduce.xml) or on
(s, rrs..., rrcs, rcs..., r). msccl-tools is not installable here; tests and
bench/coll_bench.sh use this instead.

usage: msccl_xml.py N [--fused] [--channels C] > ring.xml"""
import sys


def step(s, t, srcoff, cnt=1, depid=-1, deps=-1, hasdep=0):
    return ('      <step s="%d" type="%s" srcbuf="i" srcoff="%d" dstbuf="i" dstoff="%d" cnt="%d" '
            'depid="%d" deps="%d" hasdep="%d"/>' % (s, t, srcoff, srcoff, cnt, depid, deps, hasdep))


def ring_allreduce(n, fused=False, channels=1):
    out = ['<algo name="allreduce_ring_%s" proto="Simple" nchannels="%d" nchunksperloop="%d" ngpus="%d" '
           'coll="allreduce" inplace="1">' % ("fused" if fused else "nofusion", channels, n * channels, n, )]
    for r in range(n):
        out.append('  <gpu id="%d" i_chunks="%d" o_chunks="0" s_chunks="0">' % (r, n * channels))
        for c in range(channels):
            out.append('    <tb id="%d" send="%d" recv="%d" chan="%d">' % (c, (r + 1) % n, (r - 1) % n, c))
            blk = lambda b: c * n + b % n
            steps = []
            if fused:
                steps.append(("s", blk(r)))
                for k in range(1, n - 1):
                    steps.append(("rrs", blk(r - k)))
                steps.append(("rrcs", blk(r - n + 1)))
                for k in range(1, n - 1):
                    steps.append(("rcs", blk(r - n + 1 - k)))
                steps.append(("r", blk(r + 2)))
            else:
                for k in range(n - 1):
                    steps.append(("s", blk(r - k)))
                    steps.append(("rrc", blk(r - k - 1)))
                for k in range(n - 1):
                    steps.append(("s", blk(r - k + 1)))
                    steps.append(("r", blk(r - k)))
            for i, (t, off) in enumerate(steps):
                out.append(step(i, t, off))
            out.append('    </tb>')
        out.append('  </gpu>')
    out.append('</algo>')
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    args = sys.argv[1:]
    ch = int(args[args.index("--channels") + 1]) if "--channels" in args else 1
    sys.stdout.write(ring_allreduce(int(args[0]), "--fused" in args, ch))
