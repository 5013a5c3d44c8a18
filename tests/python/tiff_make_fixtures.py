"""Writes TIFF fixtures with tifffile (and Pillow for LZW/PackBits) for test_tiff.

Usage: tiff_make_fixtures.py OUTDIR

For every readable fixture NAME.tif it writes NAME.raw, the expected pixels as
(T, Y, X) little-endian bytes, and a line in OUTDIR/manifest.txt:
    good NAME frames height width dtype format pixel_size_nm
Files the reader must reject at open:      bad NAME text-the-error-must-contain
Files that open but fail to decode a frame: badread NAME frame text-the-error-must-contain
"""
import os
import sys

import numpy as np
import tifffile

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
manifest = []


def pattern(shape, dtype):
    t, y, x = np.indices(shape, dtype=np.int64)
    v = t * 1009 + y * 37 + x * 3
    dt = np.dtype(dtype)
    if dt.kind == "u":
        if dt.itemsize >= 4:
            v = v * 100003
        return (v % (int(np.iinfo(dt).max) + 1)).astype(dt)
    if dt.kind == "i":
        if dt.itemsize >= 4:
            v = v * 100003
        top = int(np.iinfo(dt).max)
        return (v % top - top // 2).astype(dt)
    return (v * 0.25 - 100.5).astype(dt)


def good(name, data, fmt, pixel_size_nm=0.0, writer=None, **kwargs):
    path = os.path.join(out, name + ".tif")
    if writer is None:
        # Without an explicit photometric, tifffile stores (3, Y, X) as one RGB page.
        kwargs.setdefault("photometric", "minisblack")
        tifffile.imwrite(path, data, **kwargs)
    else:
        writer(path, data)
    data = np.asarray(data)
    data.astype(data.dtype.newbyteorder("<")).tofile(os.path.join(out, name + ".raw"))
    frames, height, width = data.shape
    manifest.append(f"good {name} {frames} {height} {width} {data.dtype.name} {fmt} {pixel_size_nm}")
    return path


def bad(name, expected, data, **kwargs):
    tifffile.imwrite(os.path.join(out, name + ".tif"), data, **kwargs)
    manifest.append(f"bad {name} {expected}")


shape = (5, 17, 23)
for dt in ["uint8", "uint16", "int16", "uint32", "int32", "float32", "float64"]:
    good(f"classic_le_{dt}", pattern(shape, dt), "tiff")
    good(f"classic_be_{dt}", pattern(shape, dt), "tiff", byteorder=">")
for dt in ["uint16", "int32", "float32", "float64"]:
    good(f"bigtiff_le_{dt}", pattern(shape, dt), "bigtiff", bigtiff=True)
good("bigtiff_be_uint16", pattern(shape, "uint16"), "bigtiff", bigtiff=True, byteorder=">")
good("bigtiff_be_float32", pattern(shape, "float32"), "bigtiff", bigtiff=True, byteorder=">")

# Several strips per frame, uncompressed (contiguous: the reader's direct path).
good("strips_uint16", pattern(shape, "uint16"), "tiff", rowsperstrip=4)
good("strips_be_float32", pattern(shape, "float32"), "tiff", rowsperstrip=3, byteorder=">")
# Tiles (partial tiles at the right and bottom edges).
good("tiled_uint16", pattern((3, 40, 50), "uint16"), "tiff", tile=(16, 16))
good("tiled_be_float32", pattern((3, 40, 50), "float32"), "bigtiff", tile=(32, 16), bigtiff=True, byteorder=">")
good("tiled_zlib_int16", pattern((3, 40, 50), "int16"), "tiff", tile=(16, 32), compression="zlib")
# Compression: deflate (with and without the horizontal predictor), LZMA.
good("zlib_uint16", pattern(shape, "uint16"), "tiff", compression="zlib")
good("zlib_predictor_uint16", pattern(shape, "uint16"), "tiff", compression="zlib", predictor=True)
good("zlib_strips_be_int32", pattern(shape, "int32"), "tiff", compression="zlib", rowsperstrip=5, byteorder=">")
good("zlib_float32", pattern(shape, "float32"), "tiff", compression="zlib")
good("zlib_bigtiff_uint8", pattern(shape, "uint8"), "bigtiff", compression="zlib", bigtiff=True)
good("lzma_uint16", pattern(shape, "uint16"), "tiff", compression="lzma")


def pillow_writer(compression):
    from PIL import Image

    def write(path, data):
        frames = [Image.fromarray(frame) for frame in data]
        frames[0].save(path, compression=compression, save_all=True, append_images=frames[1:])

    return write


# tifffile needs imagecodecs to encode LZW and PackBits; Pillow encodes them with libtiff.
good("lzw_uint16", pattern((3, 12, 13), "uint16"), "tiff", writer=pillow_writer("tiff_lzw"))
good("lzw_uint8", pattern((3, 12, 13), "uint8"), "tiff", writer=pillow_writer("tiff_lzw"))
good("packbits_uint16", pattern((3, 12, 13), "uint16"), "tiff", writer=pillow_writer("packbits"))
good("packbits_uint8", pattern((3, 12, 13), "uint8"), "tiff", writer=pillow_writer("packbits"))

# ImageJ hyperstacks: pixel size from XResolution and unit=.
good("imagej_um_uint16", pattern((6, 20, 30), "uint16"), "imagej-tiff", 107.0, imagej=True,
     resolution=(1 / 0.107, 1 / 0.107), metadata={"unit": "um", "axes": "TYX"})
good("imagej_nm_float32", pattern((4, 10, 12), "float32"), "imagej-tiff", 65.0, imagej=True,
     resolution=(1 / 65.0, 1 / 65.0), metadata={"unit": "nm", "axes": "TYX"})
# ImageJ's > 4 GB layout: ONE IFD, images=50, the frames back to back after the first.
path = good("imagej_one_ifd_uint16", pattern((50, 8, 9), "uint16"), "imagej-tiff", 160.0, imagej=True,
            truncate=True, resolution=(1 / 0.16, 1 / 0.16), metadata={"unit": "micron", "axes": "TYX"})
with tifffile.TiffFile(path) as tif:
    assert len(tif.pages) == 1, "tifffile wrote more than one IFD with truncate=True"
    assert "images=50" in tif.pages[0].description

# OME-TIFF: PhysicalSizeX (default unit µm, or an explicit unit).
good("ome_um_uint16", pattern((4, 16, 16), "uint16"), "ome-tiff", 65.0, ome=True,
     metadata={"axes": "TYX", "PhysicalSizeX": 0.065, "PhysicalSizeY": 0.065})
good("ome_nm_float32", pattern((3, 16, 16), "float32"), "ome-tiff", 120.0, ome=True,
     metadata={"axes": "TYX", "PhysicalSizeX": 120.0, "PhysicalSizeXUnit": "nm"})
good("ome_bigtiff_uint16", pattern((3, 16, 16), "uint16"), "ome-tiff", 100.0, ome=True, bigtiff=True,
     metadata={"axes": "TYX", "PhysicalSizeX": 0.1, "PhysicalSizeXUnit": "µm"})
# A single page.
good("single_page_uint16", pattern((1, 7, 9), "uint16"), "tiff")

# Unsupported pixel types.
bad("rgb_uint8", "3 samples per pixel", np.zeros((2, 8, 8, 3), np.uint8), photometric="rgb")
bad("bilevel", "1-bit", np.zeros((8, 16), bool))
bad("complex64", "complex", np.zeros((2, 8, 8), np.complex64))
bad("int64", "int64", np.zeros((2, 8, 8), np.int64))
bad("float16", "16-bit floating point", np.zeros((2, 8, 8), np.float16))
bad("int8", "int8", np.zeros((2, 8, 8), np.int8))
# Pages of different sizes.
mixed = os.path.join(out, "mixed_sizes.tif")
with tifffile.TiffWriter(mixed) as tif:
    tif.write(np.zeros((8, 8), np.uint16), photometric="minisblack")
    tif.write(np.zeros((8, 9), np.uint16), photometric="minisblack")
manifest.append("bad mixed_sizes same size and pixel type")

# Compressed data that does not decode: frame 1's deflate stream is garbled.
corrupt = os.path.join(out, "zlib_corrupt.tif")
tifffile.imwrite(corrupt, pattern((3, 32, 32), "uint16"), compression="zlib", photometric="minisblack")
with tifffile.TiffFile(corrupt) as tif:
    offset = tif.pages[1].dataoffsets[0]
    count = tif.pages[1].databytecounts[0]
with open(corrupt, "r+b") as f:
    f.seek(offset)
    f.write(bytes([0xFF, 0xFF, 0xFF, 0xFF]) * (count // 4))
manifest.append("badread zlib_corrupt 1 frame 1")

with open(os.path.join(out, "manifest.txt"), "w") as f:
    f.write("\n".join(manifest) + "\n")
print(f"wrote {len(manifest)} fixtures to {out}")
