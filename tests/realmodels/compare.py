#!/usr/bin/python3
"""Compares two folders of .npy outputs: compare.py GOT_DIR WANT_DIR [RTOL ATOL]."""
import os
import sys

import numpy as np

got_dir, want_dir = sys.argv[1], sys.argv[2]
rtol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-3
atol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-4
names = sorted(f for f in os.listdir(want_dir) if f.endswith(".npy"))
if not names:
    sys.exit(f"no outputs in {want_dir}")
ok = True
for name in names:
    want = np.load(os.path.join(want_dir, name))
    path = os.path.join(got_dir, name)
    if not os.path.exists(path):
        print(f"{name}: missing from {got_dir}")
        ok = False
        continue
    got = np.load(path)
    if got.shape != want.shape:
        print(f"{name}: shape {got.shape}, expected {want.shape}")
        ok = False
    elif not np.allclose(got, want, rtol=rtol, atol=atol):
        err = np.abs(got.astype(np.float64) - want)
        print(f"{name}: max abs error {err.max():.3g} (rtol {rtol}, atol {atol})")
        ok = False
sys.exit(0 if ok else 1)
