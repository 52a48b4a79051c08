#!/usr/bin/python3
"""Random processed AF2 features in the reference layout (group inputs/, recycling dim last),
for timing `cpufold evaluate` at realistic sizes. The numbers are meaningless; only shapes
and value ranges are realistic.

usage: make_bench_features.py OUT.h5 [--n-res 128] [--n-seq 512] [--n-extra 1024]
                              [--n-templ 4] [--iterations 4] [--seed 0]
Needs Debian's python3-h5py and python3-numpy.
"""
import argparse

import h5py
import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--n-res", type=int, default=128)
    ap.add_argument("--n-seq", type=int, default=512)
    ap.add_argument("--n-extra", type=int, default=1024)
    ap.add_argument("--n-templ", type=int, default=4)
    ap.add_argument("--iterations", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    n, s, e, t, r = a.n_res, a.n_seq, a.n_extra, a.n_templ, a.iterations

    def per_iter(x):  # the same features for every iteration, recycling dim last
        return np.repeat(x[..., None], r, axis=-1)

    aatype = rng.integers(0, 20, n)
    target = np.zeros((n, 22), np.float32)
    target[np.arange(n), aatype + 1] = 1
    msa_feat = np.zeros((s, n, 49), np.float32)
    msa_feat[..., :23] = np.eye(23, dtype=np.float32)[rng.integers(0, 21, (s, n))]
    msa_feat[..., 25:48] = rng.dirichlet(np.ones(23), (s, n)).astype(np.float32)
    atoms = rng.normal(0, 10, (t, n, 37, 3)).astype(np.float32)
    feats = {
        "aatype": aatype.astype(np.int64),
        "residue_index": np.arange(n, dtype=np.int64),
        "seq_mask": np.ones(n, np.float32),
        "target_feat": target,
        "msa_feat": msa_feat,
        "msa_mask": np.ones((s, n), np.float32),
        "extra_msa": rng.integers(0, 23, (e, n)).astype(np.int64),
        "extra_has_deletion": (rng.random((e, n)) < 0.1).astype(np.float32),
        "extra_deletion_value": rng.random((e, n)).astype(np.float32),
        "extra_msa_mask": np.ones((e, n), np.float32),
    }
    if t > 0:
        angles = rng.uniform(-np.pi, np.pi, (t, n, 7))
        sincos = np.stack([np.sin(angles), np.cos(angles)], -1).astype(np.float32)
        feats.update({
            "template_aatype": rng.integers(0, 21, (t, n)).astype(np.int64),
            "template_all_atom_positions": atoms,
            "template_all_atom_mask": np.ones((t, n, 37), np.float32),
            "template_mask": np.ones(t, np.float32),
            "template_pseudo_beta": atoms[:, :, 3],
            "template_pseudo_beta_mask": np.ones((t, n), np.float32),
            "template_torsion_angles_sin_cos": sincos,
            "template_alt_torsion_angles_sin_cos": sincos,
            "template_torsion_angles_mask": np.ones((t, n, 7), np.float32),
        })
    with h5py.File(a.out, "w") as f:
        for k, v in feats.items():
            f.create_dataset("inputs/" + k, data=per_iter(v))
        f.attrs["note"] = "random features for benchmarks (scripts/make_bench_features.py)"


if __name__ == "__main__":
    main()
