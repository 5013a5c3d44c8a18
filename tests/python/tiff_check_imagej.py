"""Reads a TIFF with tifffile as ImageJ users' tools do and checks its ImageJ metadata.

Usage: tiff_check_imagej.py FILE AXES PIXEL_SIZE_NM [LABEL ...]

AXES is tifffile's series axes ("TYX" a movie, "ZYX" a focus series, "IYX" plain
pages, "YX" one image); PIXEL_SIZE_NM 0 means none recorded. With labels, the
ImageJ slice labels (IJMetadata 'labl') must be exactly these. Prints "ok ..."
or exits 1 with a message.
"""
import sys

import tifffile

path, axes, pixel_size_nm, labels = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]


def fail(message):
    print(f"FAIL {path}: {message}")
    sys.exit(1)


with tifffile.TiffFile(path) as tif:
    if not tif.is_imagej:
        fail("tifffile does not see an ImageJ file")
    meta = tif.imagej_metadata
    if tif.series[0].axes != axes:
        fail(f"axes {tif.series[0].axes}, expected {axes} (ImageJ metadata {meta})")
    page0 = tif.pages[0]
    if pixel_size_nm > 0:
        num, den = page0.tags["XResolution"].value
        if meta.get("unit") not in ("micron", "um", "\\u00B5m", "µm"):
            fail(f"unit={meta.get('unit')}")
        if abs(1000.0 * den / num - pixel_size_nm) > 1e-6 * pixel_size_nm:
            fail(f"pixel size {1000.0 * den / num} nm, expected {pixel_size_nm}")
    got = meta.get("Labels")
    if isinstance(got, str):
        got = [got]
    if labels and got != labels:
        fail(f"labels {got}, expected {labels}")
    if not labels and got:
        fail(f"unexpected labels {got}")
print(f"ok {path}: axes {axes}, labels {labels}")
