"""The fixture world every adversarial case starts from: small movies, localizations, parts, calibrations,
camera maps and parameter files, made once by the built tools (and numpy/h5py/tifffile for what a user's
other tools would write). Every case gets its own copy, so a tool that damages an input damages only its case.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import h5py
import numpy as np
import tifffile

# name -> what it is (the catalogue refers to these names)
FILES = {
    "m.tif": "movie, 32x32, 20 frames (bench simulate movie), with m.yaml (camera: Sensitivity 0.5) and m_truth.csv",
    "o.tif": "another movie of the same shape (o.yaml), for merges of parts of different movies",
    "d.tif": "movie, 32x32, 400 frames, 30 emitters (d.yaml): enough for undrift and the pipeline",
    "locs.hdf5": "fit2d m.tif -o locs.hdf5 (+ locs.yaml)",
    "dl.hdf5": "fit2d d.tif -o dl.hdf5 (+ dl.yaml)",
    "lc.csv": "fit2d m.tif -o lc.csv (+ lc.csv.yaml)",
    "fp0.h5": "fit2d m.tif --frames 0:10 --partial (fp1.h5: 10:)",
    "op1.h5": "fit2d o.tif --frames 10: --partial (a part of another movie)",
    "bl.tif": "blinking stack, 16x16, 200 frames (bench simulate blinking)",
    "sp0.h5": "sofi bl.tif --block 50 --orders 2 --frames 0:100 --partial (sp1.h5: 100:)",
    "img.tif": "float32 image 32x32 (img2.tif: the same sample, other noise)",
    "st.tif": "float32 stack 32x32x3",
    "mp0.h5": "smre st.tif --frames 0:1 --partial (mp1.h5: 1:)",
    "z.tif": "bead z-stack 32x32, 21 frames of 40 nm (z.yaml)",
    "a3.tif": "3D movie (bench simulate movie --astigmatic): a3.yaml, a3_astig.json",
    "sc.tif": "sCMOS movie: sc.yaml, sc_maps.h5",
    "f.prm": "fit2d --print-params (f.json: the same as JSON)",
    "smre.prm": "a small smre parameter file (the SMRE paper's listing format)",
    "roi.txt": "one marker ROI centre",
    "regions.txt": "one region",
}


def run(tool_path: str, args: list, cwd: str, stdout=None) -> None:
    r = subprocess.run([tool_path, *args], cwd=cwd, stdout=stdout or subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=300)
    if r.returncode != 0:
        text = r.stdout.decode("utf-8", "replace") if isinstance(r.stdout, bytes) else ""
        raise RuntimeError(f"fixture: {os.path.basename(tool_path)} {' '.join(args)}: exit {r.returncode}: {text}")


def float_image(seed: int, shape=(32, 32)) -> np.ndarray:
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:shape[-2], 0:shape[-1]]
    truth = 20 + 100 * np.exp(-((xx - 12) ** 2 + (yy - 18) ** 2) / 8.0) + 60 * ((xx > 20) & (xx < 24))
    return (truth + rng.normal(0, 2, truth.shape)).astype(np.float32)


def build(world: str, tool) -> None:
    """tool(name) -> the path of a built tool."""
    os.makedirs(world, exist_ok=True)
    w = world
    bench, fit2d, sofi, smre = tool("bench"), tool("fit2d"), tool("sofi"), tool("smre")
    common = ["-q", "simulate", "movie", "--width", "32", "--height", "32"]
    run(bench, [*common, "-o", "m.tif", "--frames", "20", "--emitters", "8", "--seed", "1"], w)
    run(bench, [*common, "-o", "o.tif", "--frames", "20", "--emitters", "8", "--seed", "2"], w)
    run(bench, [*common, "-o", "d.tif", "--frames", "400", "--emitters", "30", "--seed", "3", "--markers", "2"], w)
    run(bench, [*common, "-o", "a3.tif", "--frames", "5", "--emitters", "5", "--seed", "4", "--astigmatic"], w)
    run(bench, [*common, "-o", "sc.tif", "--frames", "5", "--emitters", "5", "--seed", "5", "--camera", "scmos"], w)
    run(bench, [*common, "-o", "z.tif", "--z-stack", "--z-min", "-400", "--z-max", "400", "--z-step", "40",
                "--beads", "2", "--photons", "20000", "--seed", "6"], w)
    run(bench, ["-q", "simulate", "blinking", "-o", "bl.tif", "--frames", "200", "--size", "16", "--emitters", "6",
                "--seed", "7"], w)
    run(fit2d, ["-q", "m.tif", "-o", "locs.hdf5"], w)
    run(fit2d, ["-q", "d.tif", "-o", "dl.hdf5"], w)
    run(fit2d, ["-q", "m.tif", "-o", "lc.csv"], w)
    run(fit2d, ["-q", "m.tif", "--frames", "0:10", "--partial", "fp0.h5"], w)
    run(fit2d, ["-q", "m.tif", "--frames", "10:", "--partial", "fp1.h5"], w)
    run(fit2d, ["-q", "o.tif", "--frames", "10:", "--partial", "op1.h5"], w)
    run(sofi, ["-q", "bl.tif", "--block", "50", "--orders", "2", "--frames", "0:100", "--partial", "sp0.h5"], w)
    run(sofi, ["-q", "bl.tif", "--block", "50", "--orders", "2", "--frames", "100:", "--partial", "sp1.h5"], w)
    tifffile.imwrite(os.path.join(w, "img.tif"), float_image(1), photometric="minisblack")
    tifffile.imwrite(os.path.join(w, "img2.tif"), float_image(2), photometric="minisblack")
    tifffile.imwrite(os.path.join(w, "st.tif"), np.stack([float_image(3), float_image(4), float_image(5)]), photometric="minisblack")
    smre_args = ["-q", "--psf", "1", "--iterations", "3", "--weights", "closed-form", "st.tif"]
    run(smre, [*smre_args, "--frames", "0:1", "--partial", "mp0.h5"], w)
    run(smre, [*smre_args, "--frames", "1:", "--partial", "mp1.h5"], w)
    with open(os.path.join(w, "f.prm"), "wb") as f:
        run(fit2d, ["--print-params"], w, stdout=f)
    with open(os.path.join(w, "f.json"), "wb") as f:
        run(fit2d, ["--print-params", "json"], w, stdout=f)
    with open(os.path.join(w, "smre.prm"), "w") as f:
        f.write("subsection program flow control\n  set maximum iterations = 3\nend\n"
                "subsection input data\n  set sigma = 1\nend\n")
    with open(os.path.join(w, "roi.txt"), "w") as f:
        f.write("16 16\n")
    with open(os.path.join(w, "regions.txt"), "w") as f:
        f.write("0 0 32 32\n")


# ---- derived inputs a case makes in its own folder (setups) ----

def read_locs(path: str) -> np.ndarray:
    with h5py.File(path, "r") as f:
        return f["locs"][...]


def write_locs(path: str, locs: np.ndarray, yaml_from: str | None = None, yaml_text: str | None = None) -> None:
    with h5py.File(path, "w") as f:
        f.create_dataset("locs", data=locs)
    stem = os.path.splitext(path)[0]
    if yaml_text is not None:
        with open(stem + ".yaml", "w") as f:
            f.write(yaml_text)
    elif yaml_from is not None:
        shutil.copyfile(yaml_from, stem + ".yaml")


def with_extra_columns(locs: np.ndarray) -> np.ndarray:
    """Picasso's fields plus a user's own: group (i4) and score (f8)."""
    dt = np.dtype(locs.dtype.descr + [("group", "<i4"), ("score", "<f8")])
    out = np.zeros(locs.shape, dt)
    for name in locs.dtype.names:
        out[name] = locs[name]
    out["group"] = np.arange(len(locs)) % 3
    out["score"] = np.linspace(0.25, 0.75, len(locs))
    return out


def calibration(path: str, **changes) -> None:
    with open(path) as f:
        cal = json.load(f)
    cal.update(changes)
    with open(path, "w") as f:
        json.dump(cal, f)
