"""Checks a ThunderSTORM CSV written by nanoscopy with Python's csv module and pandas.
Usage: locs_check_csv.py <file.csv> <expected.json>   (expected: see locs_common.py)
Prints "ok ..." or exits non-zero."""
import csv
import math
import sys

import numpy as np
import pandas as pd

from locs_common import fail, load_expected

# ThunderSTORM's own header for a symmetric 2D Gaussian (ImportExport/DLMImportExport.java
# quotes each label; MoleculeDescriptor labels are "name [unit]").
THUNDERSTORM_LABELS = ["id", "frame", "x [nm]", "y [nm]", "sigma [nm]", "intensity [photon]", "offset [photon]",
                       "bkgstd [photon]", "uncertainty_xy [nm]"]
DIAGNOSTIC_LABELS = ["chi2", "iterations", "status"]  # fit2d --fit-diagnostics


def main():
    path, expected_path = sys.argv[1], sys.argv[2]
    e = load_expected(expected_path)
    ps = e["pixel_size"]
    diagnostics = bool(e.get("fit_diagnostics"))
    LABELS = THUNDERSTORM_LABELS + (DIAGNOSTIC_LABELS if diagnostics else [])
    HEADER = ",".join(f'"{label}"' for label in LABELS)
    with open(path, newline="") as f:
        first = f.readline().rstrip("\n")
    if first != HEADER:
        fail(f"header {first!r}, expected {HEADER!r}")

    # Rows we expect: every input row whose values are finite (as float32, as written).
    keep = []
    for loc in e["locs"]:
        vals = [(loc["x"] + 0.5) * ps, (loc["y"] + 0.5) * ps, loc["sigma"] * ps, loc["photons"],
                loc["background"], loc["lpx"] * ps] + ([loc["chi2"]] if diagnostics else [])
        with np.errstate(over="ignore"):
            if all(np.isfinite(np.float32(v)) for v in vals):
                keep.append(loc)

    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if rows[0] != LABELS:
        fail(f"csv module reads labels {rows[0]}")
    if len(rows) - 1 != len(keep):
        fail(f"{len(rows) - 1} rows, expected {len(keep)}")

    df = pd.read_csv(path)
    if list(df.columns) != LABELS:
        fail(f"pandas reads columns {list(df.columns)}")
    n = len(keep)
    if not np.array_equal(df["id"].to_numpy(), np.arange(1, n + 1)):
        fail("ids are not 1..n")
    if not np.array_equal(df["frame"].to_numpy(), np.array([l["frame"] + 1 for l in keep])):
        fail("frames are not the 0-based frames + 1")
    want = {
        "x [nm]": [(l["x"] + 0.5) * ps for l in keep],
        "y [nm]": [(l["y"] + 0.5) * ps for l in keep],
        "sigma [nm]": [l["sigma"] * ps for l in keep],
        "intensity [photon]": [l["photons"] for l in keep],
        "offset [photon]": [l["background"] for l in keep],
        "bkgstd [photon]": [math.sqrt(max(l["background"], 0.0)) for l in keep],
        "uncertainty_xy [nm]": [l["lpx"] * ps for l in keep],
    }
    if diagnostics:
        want["chi2"] = [l["chi2"] for l in keep]
    for label, values in want.items():
        got = df[label].to_numpy(dtype=np.float64)
        if not np.allclose(got, values, rtol=1e-6, atol=0):
            i = int(np.argmax(~np.isclose(got, values, rtol=1e-6, atol=0)))
            fail(f"{label} row {i}: {got[i]!r}, expected {values[i]!r}")
    for label in ("iterations", "status") if diagnostics else ():
        if not np.array_equal(df[label].to_numpy(), [l[label] for l in keep]):
            fail(f"{label} differs")

    # The known row (tests/test_loc_formats.cpp, row 0): x = 10 px, y = 20 px, sigma 1.25 px,
    # 1000 photons, background 4, lpx 0.05 px, pixel size 160.5 nm.
    r = df.iloc[0]
    known = {"id": 1, "frame": 1, "x [nm]": 10.5 * 160.5, "y [nm]": 20.5 * 160.5, "sigma [nm]": 1.25 * 160.5,
             "intensity [photon]": 1000, "offset [photon]": 4, "bkgstd [photon]": 2, "uncertainty_xy [nm]": 8.025}
    if ps != 160.5:
        fail("the known row needs the pixel size 160.5 nm")
    for label, value in known.items():
        if not math.isclose(float(r[label]), value, rel_tol=1e-7):
            fail(f"known row: {label} = {r[label]!r}, expected {value!r}")
    with open(path, newline="") as f:
        f.readline()
        line = f.readline().rstrip("\n")
    if not line.startswith("1,1,1685.25,3290.25,200.625,1000,4,2,8.025" + ("," if diagnostics else "")):
        fail(f"known row text {line!r}")
    print(f"ok ({n} rows)")


if __name__ == "__main__":
    main()
