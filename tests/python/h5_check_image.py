"""Reads an HDF5 image written by nanoscopy with h5py and checks it against the
pattern of h5_make_fixtures.py (p(t, y, x) for uint16, 0.25 p - 7.5 for float32).
Usage: h5_check_image.py <file> <dataset> <frames> <height> <width> <uint16|float32> <pixel_size_nm|0> <software>
Prints "ok" or exits non-zero with the first mismatch."""
import sys

import h5py
import numpy as np

from h5_make_fixtures import pattern


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    path, name, frames, height, width, dtype, pixel_size, software = sys.argv[1:9]
    frames, height, width, pixel_size = int(frames), int(height), int(width), float(pixel_size)
    expected_dtype = np.dtype("<u2") if dtype == "uint16" else np.dtype("<f4")
    with h5py.File(path, "r") as f:
        if name not in f:
            fail(f"no dataset {name}; file has {list(f.keys())}")
        d = f[name]
        shape = (frames, height, width) if frames > 1 else (height, width)
        if d.shape != shape:
            fail(f"shape {d.shape}, expected {shape}")
        if d.dtype != expected_dtype:
            fail(f"dtype {d.dtype.str}, expected {expected_dtype.str}")
        chunks = (1, height, width) if frames > 1 else (height, width)
        if d.chunks != chunks:
            fail(f"chunks {d.chunks}, expected {chunks}")
        want = pattern((frames, height, width), expected_dtype)
        got = d[...].reshape(frames, height, width)
        if not np.array_equal(got, want):
            idx = np.argwhere(got != want)[0]
            fail(f"pixel {tuple(idx)} is {got[tuple(idx)]}, expected {want[tuple(idx)]}")
        if pixel_size > 0:
            if "pixel_size_nm" not in d.attrs:
                fail("no pixel_size_nm attribute")
            if abs(float(d.attrs["pixel_size_nm"]) - pixel_size) > 1e-9:
                fail(f"pixel_size_nm {d.attrs['pixel_size_nm']}, expected {pixel_size}")
        elif "pixel_size_nm" in d.attrs:
            fail("pixel_size_nm written although unknown")
        sw = d.attrs.get("software")
        if isinstance(sw, bytes):
            sw = sw.decode()
        if sw != software:
            fail(f"software attribute {sw!r}, expected {software!r}")
    print("ok")


if __name__ == "__main__":
    main()
