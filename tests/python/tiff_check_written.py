"""Reads a TIFF written by nanoscopy with tifffile and checks it independently.

Usage: tiff_check_written.py FILE FRAMES HEIGHT WIDTH DTYPE PIXEL_SIZE_NM BIGTIFF(0/1) SOFTWARE

The pixels must be test_tiff's pattern: v = t * 1009 + y * 37 + x * 3, stored as
v % 65536 for uint16 and v * 0.25 - 100.5 for float32. Exits 1 with a message
on the first mismatch.
"""
import sys

import numpy as np
import tifffile

path, frames, height, width, dtype, pixel_size_nm, bigtiff, software = sys.argv[1:9]
frames, height, width = int(frames), int(height), int(width)
pixel_size_nm = float(pixel_size_nm)


def fail(message):
    print(f"FAIL {path}: {message}")
    sys.exit(1)


t, y, x = np.indices((frames, height, width), dtype=np.int64)
v = t * 1009 + y * 37 + x * 3
expected = (v % 65536).astype(np.uint16) if dtype == "uint16" else (v * 0.25 - 100.5).astype(np.float32)

with tifffile.TiffFile(path) as tif:
    if tif.is_bigtiff != (bigtiff == "1"):
        fail(f"is_bigtiff is {tif.is_bigtiff}")
    if not tif.is_imagej:
        fail("tifffile does not see an ImageJ file")
    meta = tif.imagej_metadata
    if frames > 1 and meta.get("images") != frames:
        fail(f"ImageJ metadata images={meta.get('images')}, expected {frames}")
    # A stack of frames is a time series: ImageJ frames=, tifffile axes TYX (not Z slices).
    if frames > 1 and (meta.get("frames") != frames or "slices" in meta or tif.series[0].axes != "TYX"):
        fail(f"not a time series: frames={meta.get('frames')} slices={meta.get('slices')} axes {tif.series[0].axes}")
    if len(tif.pages) != frames:
        fail(f"{len(tif.pages)} IFDs, expected {frames}")
    series = tif.series[0].asarray()
    # Every IFD on its own, as a reader that ignores the ImageJ layout sees them.
    pages = np.stack([page.asarray() for page in tif.pages])
    page0 = tif.pages[0]
    if pixel_size_nm > 0:
        num, den = page0.tags["XResolution"].value
        if meta.get("unit") not in ("micron", "um", "\\u00B5m", "µm"):
            fail(f"unit={meta.get('unit')}")
        measured = 1000.0 * den / num
        if abs(measured - pixel_size_nm) > 1e-6 * pixel_size_nm:
            fail(f"pixel size {measured} nm from XResolution, expected {pixel_size_nm}")
        if page0.tags["ResolutionUnit"].value != 1:
            fail("ResolutionUnit is not none")
    elif "XResolution" in page0.tags:
        fail("XResolution written without a pixel size")
    if software and page0.tags["Software"].value != software:
        fail(f"Software tag {page0.tags['Software'].value!r}")

series = series.reshape(pages.shape) if series.size == pages.size else series
for name, array in (("series", series), ("pages", pages)):
    if array.dtype != expected.dtype:
        fail(f"{name} dtype {array.dtype}, expected {expected.dtype}")
    if array.shape != expected.shape:
        fail(f"{name} shape {array.shape}, expected {expected.shape}")
    if not np.array_equal(array, expected):
        bad = np.argwhere(array != expected)[0]
        fail(f"{name} pixel {tuple(bad)} is {array[tuple(bad)]}, expected {expected[tuple(bad)]}")
print(f"OK {path}: {frames}x{height}x{width} {dtype}")
