"""Broken and unsupported inputs for tests/test_bad_input.cpp, written by the
independent writers (tifffile, Pillow, h5py): bad_input_fixtures.py DIR MOVIE.tif

MOVIE.tif is a valid uint16 stack (bench simulate movie); its frames become the
float32 stacks with NaN and Inf pixels."""
import sys

import h5py
import numpy as np
import tifffile
from PIL import Image

out, movie = sys.argv[1], sys.argv[2]
frames = tifffile.imread(movie).astype(np.float32)  # (T, Y, X)
t, h, w = frames.shape


def p(name):
    return f"{out}/{name}"


# TIFF: pages of different sizes, 1-bit, 24-bit RGB, complex, int64 pixels.
with tifffile.TiffWriter(p("pages_differ.tif")) as tif:
    tif.write(frames[0].astype(np.uint16), contiguous=False)
    tif.write(np.zeros((h // 2, w // 2), np.uint16), contiguous=False)
    tif.write(frames[2].astype(np.uint16), contiguous=False)
Image.fromarray(frames[0] > frames[0].mean()).convert("1").save(p("bilevel.tif"))
rgb = np.stack([frames[0], frames[1], frames[2]], axis=-1).clip(0, 255).astype(np.uint8)
tifffile.imwrite(p("rgb.tif"), rgb, photometric="rgb")
tifffile.imwrite(p("complex.tif"), frames.astype(np.complex64))
tifffile.imwrite(p("int64.tif"), frames.astype(np.int64))

# float32 stacks with one NaN pixel (frame 3) and one +Inf pixel (frame 5).
nan = frames.copy()
nan[3, h // 2, w // 2] = np.nan
inf = frames.copy()
inf[5, 1, 2] = np.inf
tifffile.imwrite(p("nan.tif"), nan)
tifffile.imwrite(p("inf.tif"), inf)
with h5py.File(p("nan.h5"), "w") as f:
    f["data"] = nan
# Two single images for frc (A and B), with NaN and with Inf.
tifffile.imwrite(p("nan_image.tif"), nan[3])
tifffile.imwrite(p("inf_image.tif"), inf[5])
tifffile.imwrite(p("image.tif"), frames[3])

# HDF5: 1-D, 4-D, compound, complex, strings.
with h5py.File(p("rank1.h5"), "w") as f:
    f["data"] = np.arange(100, dtype=np.uint16)
with h5py.File(p("rank4.h5"), "w") as f:
    f["data"] = np.zeros((2, t, h, w), np.uint16)
with h5py.File(p("compound.h5"), "w") as f:
    f["data"] = np.zeros((t, h, w), dtype=[("a", "<u2"), ("b", "<f4")])
with h5py.File(p("complex.h5"), "w") as f:
    f["data"] = frames.astype(np.complex64)
with h5py.File(p("strings.h5"), "w") as f:
    f["data"] = np.array([["a", "b"], ["c", "d"]], dtype=h5py.string_dtype())

# Camera maps that say 100000 x 100000 pixels: chunked and never written, a few kB on disk (40 GB as floats).
with h5py.File(p("huge_maps.h5"), "w") as f:
    for name in ("offset", "gain", "variance"):
        f.create_dataset(name, shape=(100000, 100000), dtype="f4", chunks=(64, 64))
