#!/usr/bin/python3
"""How far one `cpufold evaluate --trace` run drifts from another, block by block: for every
extra-MSA and Evoformer block output in both traces, the relative RMS difference
rms(B - A) / rms(A) of the MSA (or extra MSA), of the MSA's first row (what the single
representation is projected from) and of the pair representation. Typical use: A an fp32
run, B the same run with --precision bf16.

usage: trace_drift.py A.h5 B.h5 [--call K]      (K: the recycling iteration, default 0)
Needs Debian's python3-h5py and python3-numpy.
"""
import argparse
import re
import sys

import h5py
import numpy as np

BLOCK = re.compile(r"^trace/(evoformer|extra_msa)_block_(\d+)/call_(\d+)/out_([01])$")


def relative_rms(a, b):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    scale = np.sqrt(np.mean(a * a))
    return np.sqrt(np.mean((b - a) ** 2)) / scale if scale > 0 else float("nan")


def block_outputs(f, call):
    found = {}

    def visit(name, obj):
        m = BLOCK.match(name)
        if isinstance(obj, h5py.Dataset) and m and int(m.group(3)) == call:
            found[(m.group(1), int(m.group(2)), int(m.group(4)))] = name

    f.visititems(lambda n, o: visit(n, o))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--call", type=int, default=0)
    args = ap.parse_args()
    with h5py.File(args.a, "r") as fa, h5py.File(args.b, "r") as fb:
        ours, theirs = block_outputs(fa, args.call), block_outputs(fb, args.call)
        keys = sorted(set(ours) & set(theirs), key=lambda k: (k[0] != "extra_msa", k[1], k[2]))
        if not keys:
            sys.exit(f"no block outputs of call {args.call} in both traces (run evaluate --trace)")
        print(f"{'block':<16} {'msa':>10} {'msa row 0':>10} {'pair':>10}")
        blocks = sorted({(k[0], k[1]) for k in keys}, key=lambda k: (k[0] != "extra_msa", k[1]))
        for stack, i in blocks:
            row = []
            for out in (0, 1):
                if (stack, i, out) not in ours:
                    row += [None, None] if out == 0 else [None]
                    continue
                a = fa[ours[(stack, i, out)]][()]
                b = fb[theirs[(stack, i, out)]][()]
                if out == 0:
                    row += [relative_rms(a, b), relative_rms(a[0], b[0])]
                else:
                    row.append(relative_rms(a, b))
            cells = " ".join(f"{v:10.3e}" if v is not None else f"{'-':>10}" for v in row)
            print(f"{stack + ' ' + str(i):<16} {cells}")


if __name__ == "__main__":
    main()
