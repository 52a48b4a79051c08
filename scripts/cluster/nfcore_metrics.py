#!/usr/bin/env python3
"""The per-protein metric files nf-core/proteinfold's COLABFOLD_BATCH process emits, made from a
cpufold predict output directory (ColabFold's file names):

  ID_colabfold.pdb       the rank 1 structure
  ID_plddt_mqc.tsv       per-residue pLDDT of every rank (columns Positions, rank_0, rank_1, ...)
  ID_colabfold_msa.tsv   the MSA the job used, one row per sequence, residues coded 0-21
  ID_K_pae.tsv           PAE of rank K (0-based), when the model has a PAE head
  ID_ptm.tsv             "K<TAB>pTM" per rank, when it does

Usage: nfcore_metrics.py ID RAW_DIR [OUT_DIR]
"""
import csv
import glob
import json
import os
import re
import shutil
import sys

CODES = {c: i for i, c in enumerate("ACDEFGHIKLMNPQRSTVWY")}
CODES.update({".": 20, "-": 21})


def ranked(raw, job, kind, ext):
    """Files of `kind` ("unrelaxed", "scores") in rank order."""
    pattern = os.path.join(raw, f"{job}_{kind}_rank_*{ext}")
    files = [f for f in glob.glob(pattern) if not re.search(r"\.r\d+\.pdb$", f)]
    return sorted(files, key=lambda f: int(re.search(r"_rank_(\d+)_", f).group(1)))


def write_tsv(path, rows):
    with open(path, "w", newline="") as f:
        csv.writer(f, delimiter="\t", lineterminator="\n").writerows(rows)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    job, raw = sys.argv[1], sys.argv[2]
    out = sys.argv[3] if len(sys.argv) == 4 else "."
    pdbs = ranked(raw, job, "unrelaxed", ".pdb")
    scores = ranked(raw, job, "scores", ".json")
    if not pdbs or len(pdbs) != len(scores):
        sys.exit(f"{raw}: no ranked structures and scores of job {job} (did predict finish?)")
    shutil.copyfile(pdbs[0], os.path.join(out, f"{job}_colabfold.pdb"))

    plddts, ptms = [], []
    for k, path in enumerate(scores):
        with open(path) as f:
            s = json.load(f)
        plddts.append(s["plddt"])
        if "pae" in s:
            write_tsv(os.path.join(out, f"{job}_{k}_pae.tsv"),
                      [[f"{v:.4f}" for v in row] for row in s["pae"]])
        if "ptm" in s:
            ptms.append([k, f"{s['ptm']:.3f}"])
    rows = [["Positions"] + [f"rank_{k}" for k in range(len(plddts))]]
    rows += [[i] + [p[i] for p in plddts] for i in range(len(plddts[0]))]
    write_tsv(os.path.join(out, f"{job}_plddt_mqc.tsv"), rows)
    if ptms:
        write_tsv(os.path.join(out, f"{job}_ptm.tsv"), ptms)

    msa_rows = []
    a3m = os.path.join(raw, f"{job}.a3m")
    if os.path.exists(a3m):
        with open(a3m) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith(">") and not line.startswith("#"):
                    msa_rows.append([CODES.get(c, 20) for c in line if not c.islower()])
    write_tsv(os.path.join(out, f"{job}_colabfold_msa.tsv"), msa_rows)


if __name__ == "__main__":
    main()
