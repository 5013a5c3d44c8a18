"""Shared by the localization-file checks: the expectation JSON that
tests/test_loc_formats.cpp writes (the input rows in px, the writer's context),
and Picasso's own sanity rules, re-implemented here from Picasso's sources."""
import json
import math
import sys

import numpy as np

# Picasso Localize's least-squares fields, in its order (picasso/gausslq.py, locs_from_fits).
PICASSO_FIELDS = [
    ("frame", "<u4"), ("x", "<f4"), ("y", "<f4"), ("photons", "<f4"), ("sx", "<f4"), ("sy", "<f4"),
    ("bg", "<f4"), ("lpx", "<f4"), ("lpy", "<f4"), ("ellipticity", "<f4"), ("net_gradient", "<f4"),
]
# fit2d --fit-diagnostics adds these after Picasso's own.
DIAGNOSTIC_FIELDS = [("chi2", "<f4"), ("iterations", "<u4"), ("status", "<i4")]


def picasso_fields(e):
    return PICASSO_FIELDS + (DIAGNOSTIC_FIELDS if e.get("fit_diagnostics") else [])


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def load_expected(path):
    with open(path) as f:
        e = json.load(f)
    for loc in e["locs"]:
        for k, v in loc.items():
            if v is None:  # NaN and infinities arrive as null
                loc[k] = math.nan
    return e


def as_picasso_rows(e):
    """The input rows as Picasso's structured array (float32 fields), before any filtering."""
    locs = e["locs"]
    a = np.zeros(len(locs), dtype=picasso_fields(e))
    with np.errstate(over="ignore", invalid="ignore"):
        a["frame"] = [l["frame"] for l in locs]
        a["x"] = [l["x"] for l in locs]
        a["y"] = [l["y"] for l in locs]
        a["photons"] = [l["photons"] for l in locs]
        a["sx"] = [l["sigma"] for l in locs]
        a["sy"] = [l["sigma"] for l in locs]
        a["bg"] = [l["background"] for l in locs]
        a["lpx"] = [l["lpx"] for l in locs]
        a["lpy"] = [l["lpy"] for l in locs]
        a["ellipticity"] = 0
        a["net_gradient"] = [l["net_gradient"] for l in locs]
        if e.get("fit_diagnostics"):
            a["chi2"] = [l["chi2"] for l in locs]
            a["iterations"] = [l["iterations"] for l in locs]
            a["status"] = [l["status"] for l in locs]
    return a


def picasso_ensure_sanity(locs, width, height):
    """picasso.lib.ensure_sanity (applied by picasso.io.save_locs): every field finite,
    0 < x < Width, 0 < y < Height, lpx > 0, lpy > 0."""
    keep = np.all(np.array([np.isfinite(locs[n]) for n in locs.dtype.names]), axis=0)
    keep &= (locs["x"] > 0) & (locs["y"] > 0) & (locs["x"] < width) & (locs["y"] < height)
    keep &= (locs["lpx"] > 0) & (locs["lpy"] > 0)
    return locs[keep]


def picasso_expected(e):
    """What our writer must keep: Picasso's sanity rules plus photons >= 0 and sx >= 0."""
    a = picasso_ensure_sanity(as_picasso_rows(e), e["width"], e["height"])
    return a[(a["photons"] >= 0) & (a["sx"] >= 0)]
