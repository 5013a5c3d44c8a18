"""Compares what nanoscopy read from a Picasso file with h5py's reading of it.
Usage: locs_check_peer.py <file.hdf5> <ours.json>
ours.json: one list per row: frame, x, y, photons, sigma, bg, lpx, lpy, net_gradient, iterations.
Prints "ok" or exits non-zero."""
import json
import sys

import h5py
import numpy as np

from locs_common import fail


def main():
    path, ours_path = sys.argv[1], sys.argv[2]
    with h5py.File(path, "r") as f:
        locs = f["locs"][...]
    with open(ours_path) as f:
        ours = np.array(json.load(f), dtype=np.float64)
    if ours.shape != (len(locs), 10):
        fail(f"we read {ours.shape}, h5py reads {len(locs)} rows")
    sigma = (locs["sx"].astype(np.float64) + locs["sy"].astype(np.float64)) / 2
    columns = [locs["frame"], locs["x"], locs["y"], locs["photons"], sigma, locs["bg"], locs["lpx"], locs["lpy"],
               locs["net_gradient"], locs["iterations"]]
    names = ["frame", "x", "y", "photons", "sigma", "bg", "lpx", "lpy", "net_gradient", "iterations"]
    for c, (name, col) in enumerate(zip(names, columns)):
        if not np.array_equal(ours[:, c], np.asarray(col, dtype=np.float64)):
            i = int(np.argmax(ours[:, c] != np.asarray(col, dtype=np.float64)))
            fail(f"{name} row {i}: ours {ours[i, c]!r}, h5py {col[i]!r}")
    print(f"ok ({len(locs)} rows)")


if __name__ == "__main__":
    main()
