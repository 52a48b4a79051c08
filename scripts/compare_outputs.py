#!/usr/bin/python3
"""Compares cpufold's `evaluate` output with a reference file's outputs/ group, one line per
dataset: the largest absolute difference and whether it is within cpufold's tolerances
(atoms 1e-3 A, pLDDT and PAE 1e-3, pTM 1e-5, everything else 1e-4 + 1e-4*|ref|).

usage: compare_outputs.py OURS.h5 REFERENCE.h5      (exit status 1 when anything differs)
Needs Debian's python3-h5py and python3-numpy.
"""
import sys

import h5py
import numpy as np


def tolerance(name):
    if "positions" in name or name.endswith("trans") or "frames" in name or "affine" in name:
        return 1e-3, 0.0  # atoms and frames (translations in A; rotations held to the same)
    if name in ("plddt", "predicted_aligned_error", "max_predicted_aligned_error"):
        return 1e-3, 0.0
    if name == "ptm_score":
        return 1e-5, 0.0
    return 1e-4, 1e-4


def collect(group, prefix=""):
    out = {}
    for key, item in group.items():
        if isinstance(item, h5py.Group):
            out.update(collect(item, prefix + key + "/"))
        else:
            out[prefix + key] = np.asarray(item, dtype=np.float64)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ours = collect(h5py.File(sys.argv[1], "r")["outputs"])
    ref = collect(h5py.File(sys.argv[2], "r")["outputs"])
    bad = 0
    for name in sorted(ref):
        if name not in ours:
            print(f"missing  {name}")
            bad += 1
            continue
        atol, rtol = tolerance(name)
        diff = np.abs(ours[name] - ref[name])
        ok = bool(np.all(diff <= atol + rtol * np.abs(ref[name])))
        bad += not ok
        print(f"{'ok  ' if ok else 'DIFF'}     {name:32s} max|d| {diff.max() if diff.size else 0:.2e}")
    print(f"{len(ref) - bad} of {len(ref)} outputs within tolerance")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
