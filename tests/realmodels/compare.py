#!/usr/bin/python3
"""Compares two folders of .npy outputs: compare.py GOT_DIR WANT_DIR [RTOL ATOL].

Every .npy file of WANT_DIR must be in GOT_DIR with the same shape, and elementwise

    |got - want| <= ATOL * min(1, scale) + RTOL * |want|

where scale is the largest finite |want| of that output (default RTOL 1e-3, ATOL 1e-4). ATOL
is thus an absolute tolerance for outputs of scale 1 and above, and relative to the output's
scale below 1: with random weights some models' logits are ~1e-9 or ~1e-14, and a fixed ATOL
of 1e-4 would accept any answer for them, all zeros included. An output whose want is all zero
must be zero. Integer and boolean outputs keep ATOL as it is (their unit is 1 at any scale).
A NaN in either output fails (as np.allclose); infinities must be equal. Exit status 0 when
every output matches, 1 otherwise, with one line per mismatching output (the first says
"max abs error E = R of scale S": R is E / S, the error relative to the output's scale).
"""
import os
import sys

import numpy as np

got_dir, want_dir = sys.argv[1], sys.argv[2]
rtol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-3
atol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-4
names = sorted(f for f in os.listdir(want_dir) if f.endswith(".npy"))
if not names:
    sys.exit(f"no outputs in {want_dir}")


def mismatch(got, want):
    """Returns None when got matches want, else the reason."""
    scaled = np.issubdtype(want.dtype, np.floating)
    got, want = got.astype(np.float64), want.astype(np.float64)
    finite = np.isfinite(want)
    scale = float(np.abs(want[finite]).max()) if finite.any() else 0.0
    nans = int(np.count_nonzero(np.isnan(got) | np.isnan(want)))
    if nans:
        return (f"NaN at {np.count_nonzero(np.isnan(got))} elements of got and {np.count_nonzero(np.isnan(want))} "
                f"of want (a NaN matches nothing; scale {scale:.3g})")
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(got - want)
        bound = (atol * min(1.0, scale) if scaled else atol) + rtol * np.abs(want)
        ok = np.where(finite, err <= bound, got == want)
    if ok.all():
        return None
    err = np.where(finite, err, np.where(ok, 0.0, np.inf))  # matching infinities: 0
    worst = float(err.max())
    relative = f"{worst / scale:.3g}" if scale > 0 else "inf"
    atol_text = f"atol {atol:g} * min(1, scale)" if scaled else f"atol {atol:g}"
    return (f"max abs error {worst:.3g} = {relative} of scale {scale:.3g} (max |want|); "
            f"{np.count_nonzero(~ok)} of {ok.size} elements beyond {atol_text} + rtol {rtol:g} * |want|")


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
        continue
    reason = mismatch(got, want)
    if reason:
        print(f"{name}: {reason}")
        ok = False
sys.exit(0 if ok else 1)
