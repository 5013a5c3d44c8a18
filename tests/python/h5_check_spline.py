"""Reads a nanoscopy spline calibration with h5py (an independent reader) and
prints what a user of Gpufit's SPLINE_3D or Picasso would see: the shape of
/spline/coefficients, one coefficient, and the attributes.
Usage: h5_check_spline.py FILE I J K C"""
import sys

import h5py

path, i, j, k, c = sys.argv[1], *map(int, sys.argv[2:6])
with h5py.File(path, "r") as f:
    g = f["spline"]
    coeff = g["coefficients"]
    print("shape", " ".join(str(n) for n in coeff.shape))
    print("dtype", coeff.dtype)
    print("value %.9g" % coeff[i, j, k, c])
    fmt = g.attrs["format"]
    if isinstance(fmt, bytes):
        fmt = fmt.decode()
    print("format", fmt)
    for name in ("version", "voxel_xy_px", "z_step_nm", "centre_x", "centre_y", "focus_index", "pixel_size_nm"):
        print(name, "%.9g" % float(g.attrs[name]))
    print("volume", " ".join(str(n) for n in g["volume"].shape) if "volume" in g else "none")
