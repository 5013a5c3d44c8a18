"""The catalogue: one row per case. Read a row as "run TOOL ARGS in a copy of the world (world.py), after SETUP;
it must exit CODE and its one error line must name WHERE". Exit codes as the README says: 2 usage, parameter
or output plan (an output that is an input, or two outputs that are one file), 3 bad input, 4 output cannot be
written, 0 success. Names: "<section>/<tool>: what".
"""
from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import time

import h5py
import numpy as np

import world
from harness import Case, Ctx, Result, finish

# ---- setups: small composable steps, run in the case's folder ----


def steps(*fs):
    def setup(ctx: Ctx):
        for f in fs:
            f(ctx)
    return setup


def symlink(target, name):
    return lambda ctx: os.symlink(target, ctx.path(name))


def hardlink(target, name):
    return lambda ctx: os.link(ctx.path(target), ctx.path(name))


def copy(src, dst):
    def f(ctx):
        with open(ctx.path(src), "rb") as a, open(ctx.path(dst), "wb") as b:
            b.write(a.read())
    return f


def mkdir(name):
    return lambda ctx: os.makedirs(ctx.path(name))


def write(name, data):
    def f(ctx):
        mode = "wb" if isinstance(data, bytes) else "w"
        with open(ctx.path(name), mode) as out:
            out.write(data)
    return f


def write_big(name, head: str, size: int, tail: str = "\n", fill: bytes = b"9"):
    def f(ctx):
        with open(ctx.path(name), "wb") as out:
            out.write(head.encode())
            chunk = fill * (1 << 20)
            left = size
            while left > 0:
                out.write(chunk[:min(left, len(chunk))])
                left -= len(chunk)
            out.write(tail.encode())
    return f


def mkfifo(name):
    return lambda ctx: os.mkfifo(ctx.path(name))


def tool_run(tool, args):
    """A setup step that runs a tool (the previous run of a case) and requires success."""
    def f(ctx):
        r = ctx.run(tool, shlex.split(args) if isinstance(args, str) else args, timeout=60)
        if r.code != 0:
            raise RuntimeError(f"setup {tool} {args}: exit {r.code}: {r.out.strip()}")
    return f


def locs_variant(src, dst, transform, yaml_text=None):
    """dst (Picasso HDF5) = transform(src's /locs), with src's .yaml beside it (or yaml_text)."""
    def f(ctx):
        locs = world.read_locs(ctx.path(src))
        world.write_locs(ctx.path(dst), transform(locs), yaml_from=ctx.path(os.path.splitext(src)[0] + ".yaml"),
                         yaml_text=yaml_text(ctx) if yaml_text else None)
    return f


def yaml_of(src, **changes):
    """src's .yaml with top-level keys of its first document replaced (text, so both documents stay)."""
    def make(ctx):
        text = open(ctx.path(src)).read()
        for k, v in changes.items():
            text, n = re.subn(rf"(?m)^{k}: .*$", f"{k}: {v}", text, count=1)
            if n != 1:
                raise RuntimeError(f"{src} has no '{k}:' line")
        return text
    return make


def calibration_variant(dst, **changes):
    def f(ctx):
        copy("a3_astig.json", dst)(ctx)
        world.calibration(ctx.path(dst), **changes)
    return f


def huge_maps(name):
    """sCMOS maps whose datasets claim 10^6 x 10^6 pixels (chunked, nothing stored: a tiny file)."""
    def f(ctx):
        with h5py.File(ctx.path(name), "w") as h:
            for d in ("offset", "gain", "variance"):
                h.create_dataset(d, shape=(1000000, 1000000), dtype="f4", chunks=(16, 16), fillvalue=1.0)
    return f


# ---- checks of a successful run ----


def yaml_has(name, *pairs):
    def check(ctx: Ctx, r: Result):
        text = open(ctx.path(name)).read()
        for p in pairs:
            if p not in text:
                return f"{name} lacks '{p}' (the input's camera)"
        return None
    return check


def same_dtype_as(out, src_dtype_of):
    def check(ctx: Ctx, r: Result):
        want = world.read_locs(ctx.path(src_dtype_of)).dtype
        got = world.read_locs(ctx.path(out)).dtype
        missing = [f"{n} {want[n].str}" for n in want.names if n not in got.names or got[n] != want[n]]
        return f"{out} lost or retyped columns: {', '.join(missing)}" if missing else None
    return check


def no_columns(out, src, *names):
    """None of `names` in `out` unless the input `src` had it (an mle file has iterations: carried, not invented)."""
    def check(ctx: Ctx, r: Result):
        had = world.read_locs(ctx.path(src)).dtype.names
        if out.endswith(".csv"):
            header = open(ctx.path(out)).readline()
            present = [n for n in names if f'"{n}"' in header and n not in had]
        else:
            present = [n for n in names if n in world.read_locs(ctx.path(out)).dtype.names and n not in had]
        return f"{out} has invented columns {present}" if present else None
    return check


def frames_sorted(out):
    def check(ctx: Ctx, r: Result):
        f = world.read_locs(ctx.path(out))["frame"]
        return None if np.all(np.diff(f.astype(np.int64)) >= 0) else f"{out}: frames not sorted"
    return check


# ---- runners: cases that are more than one plain run ----

LONG_SMRE = ["-q", "--psf", "1", "--iterations", "1000000", "--tolerance", "0", "--weights", "closed-form", "st.tif"]
QUICK_SMRE = ["-q", "--psf", "1", "--iterations", "2", "--weights", "closed-form", "st.tif"]


def concurrent(tool, first, second, delay=1.5):
    """`first` runs (long); `second` starts while it does and is the case's result; then `first` is stopped."""
    def runner(ctx: Ctx, case: Case) -> Result:
        a = ctx.start(tool, first)
        try:
            time.sleep(delay)
            if a.poll() is not None:
                raise RuntimeError(f"the first run ended early (exit {a.returncode}): no concurrency to test")
            return ctx.run(tool, second, case.timeout)
        finally:
            try:
                os.killpg(a.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            finish(a, time.monotonic(), 20)
    return runner


def killed_then(tool, first, second, delay=1.5):
    """`first` is killed (SIGKILL: no handler runs, its temporary and lock files stay); `second` then writes the
    same outputs and must clean up after it."""
    def runner(ctx: Ctx, case: Case) -> Result:
        a = ctx.start(tool, first)
        time.sleep(delay)
        if a.poll() is not None:
            raise RuntimeError(f"the first run ended early (exit {a.returncode}): nothing to kill")
        os.killpg(a.pid, signal.SIGKILL)
        a.wait()
        return ctx.run(tool, second, case.timeout)
    return runner


def interrupted(tool, args, sig, delay=1.5):
    def runner(ctx: Ctx, case: Case) -> Result:
        started = time.monotonic()
        a = ctx.start(tool, args)
        time.sleep(delay)
        if a.poll() is not None:
            raise RuntimeError(f"the run ended before the signal (exit {a.returncode})")
        os.kill(a.pid, sig)
        return finish(a, started, case.timeout)
    return runner


# ---- the catalogue ----

# Long enough that fit2d is still running after a second: 100,000 frames of 32x32. Under the sanitizers fit2d
# runs at about 2,100 frames/s, and the Clang build simulates several times slower (libstdc++'s
# generate_canonical calls logl twice per number there; GCC folds it): 20,000 frames keep fit2d busy ~10 s.
SANITIZER_RUN = bool(os.environ.get("NANOSCOPY_SANITIZER_RUN"))
BIG_FRAMES = 20000 if SANITIZER_RUN else 100000
LONG = "a" * 242  # + ".tif": a 246-byte name, legal (NAME_MAX 255), whose temporary name must still fit


def build_cases(source: str) -> list:
    C = []

    def case(section, name, tool, args, code, *where, **kw):
        argv = shlex.split(args) if isinstance(args, str) else list(args)
        C.append(Case(f"{section.split()[0]}/{tool}: {name}", section, tool, argv, code, tuple(where), **kw))

    def plan(name, tool, args, *where, **kw):  # §1: an output plan collision: exit 2 naming both files
        case("1 plan", name, tool, args, kw.pop("code", 2), *where, **kw)

    # ================= §0: the plain runs (each tool's outputs written, nothing left behind) =================
    ok = "0 baseline"
    case(ok, "localize to Picasso HDF5", "fit2d", "-q m.tif -o x.hdf5", 0, creates=["x.hdf5", "x.yaml"])
    case(ok, "localize to ThunderSTORM CSV with --track", "fit2d", "-q d.tif -o x.csv --track", 0,
         creates=["x.csv", "x.csv.yaml", "x_drift.csv", "x_drift.txt"])
    case(ok, "the pipeline --undrift --link --render", "fit2d",
         "-q d.tif -o g.hdf5 --undrift --undrift-segment 100 --link --render", 0,
         creates=["g.hdf5", "g_undrift.hdf5", "g_undrift_drift.csv", "g_undrift_link.hdf5", "g_undrift_link.tif",
                  "g_undrift_link.png"])
    case(ok, "filter", "fit2d", "-q filter locs.hdf5 -o f.hdf5 --where 'photons > 0'", 0, creates=["f.hdf5", "f.yaml"])
    case(ok, "link", "fit2d", "-q link locs.hdf5 -o l.hdf5", 0, creates=["l.hdf5", "l.yaml"])
    case(ok, "render", "fit2d", "-q render locs.hdf5 -o p.tif", 0, creates=["p.tif", "p.png"])
    case(ok, "undrift", "fit2d", "-q undrift dl.hdf5 -o u.hdf5 --segment 100", 0,
         creates=["u.hdf5", "u.yaml", "u_drift.txt", "u_drift.csv", "u_drift.png"])
    case(ok, "merge", "fit2d", "-q merge fp0.h5 fp1.h5 -o mg.csv", 0, creates=["mg.csv", "mg.csv.yaml"])
    case(ok, "calibrate", "fit2d", "-q calibrate z.tif --z-step 40 -o c.json", 0, creates=["c.json", "c.png"])
    case(ok, "sofi", "sofi", "-q bl.tif -o s.tif --block 50", 0, creates=["s.tif"])
    case(ok, "sofi --split odd-even", "sofi", "-q bl.tif -o s.tif --block 50 --orders 2 --split odd-even", 0,
         creates=["s.tif", "s_even.tif", "s_odd.tif"])
    case(ok, "sofi --balanced", "sofi", "-q bl.tif -o s.tif --block 100 --balanced --psf-sigma 1.5", 0,
         creates=["s.tif", "s_balanced.tif", "s_balanced.png", "s_balanced_panel.png"])
    case(ok, "sofi merge", "sofi", "-q merge sp0.h5 sp1.h5 -o sm.tif", 0, creates=["sm.tif"])
    case(ok, "smre", "smre", "-q --psf 1 --iterations 3 --weights closed-form img.tif", 0, creates=["img_smre.tif"])
    case(ok, "smre merge", "smre", "-q merge mp0.h5 mp1.h5 -o mm.tif", 0, creates=["mm.tif"])
    case(ok, "frc with curve, plot and JSON", "frc", "-q img.tif img2.tif --curve c.csv --plot c.png --json c.json", 0,
         creates=["c.csv", "c.png", "c.json"])
    case(ok, "frc of localizations", "frc", "-q locs.hdf5 --render-px 10 --time-blocks 4 --json r.json", 0, creates=["r.json"])
    case(ok, "simulate movie", "bench", "-q simulate movie -o sim.tif --frames 3 --width 16 --height 16", 0,
         creates=["sim.tif", "sim.yaml", "sim_truth.csv"])
    case(ok, "compare", "bench", "-q compare lc.csv m_truth.csv --json cmp.json", 0, creates=["cmp.json"])
    case(ok, "simulate blinking", "bench", "-q simulate blinking -o qd.tif --frames 20 --size 16", 0,
         creates=["qd.tif", "qd_emitters.csv"])

    # ================= §1: one output plan: an output that is an input, or two outputs that are one file ========
    # fit2d's localization run
    # mv.tif: m.tif without its .yaml, so that the movie itself is the only file the output collides with
    plan("-o the movie itself (--format csv)", "fit2d", "-q mv.tif -o mv.tif --format csv", "mv.tif",
         setup=copy("m.tif", "mv.tif"))
    plan("--render's picture onto the movie", "fit2d", "-q mv.tif -o mv.hdf5 --render --pixel-size 100", "mv.tif",
         setup=copy("m.tif", "mv.tif"))
    # A CSV's .yaml is m.csv.yaml (issue 25): beside the movie it leaves the movie's m.yaml alone.
    case(ok, "-o m.csv beside the movie keeps its .yaml", "fit2d", "-q m.tif -o m.csv", 0,
         creates=["m.csv", "m.csv.yaml"])
    plan("the .yaml of -o m.hdf5 is the movie's own", "fit2d", "-q m.tif -o m.hdf5", "m.yaml")
    plan("-o onto the sCMOS maps it reads", "fit2d", "-q sc.tif -o sc_maps.h5", "sc_maps.h5")
    plan("--partial onto the movie", "fit2d", "-q m.tif --frames 0:10 --partial m.tif", "m.tif")
    plan("--partial onto the parameter file", "fit2d", "-q m.tif --params f.prm --frames 0:10 --partial f.prm", "f.prm")
    plan("--partial onto the calibration", "fit2d", "-q a3.tif --calibration a3_astig.json --frames 0:2 --partial "
         "a3_astig.json", "a3_astig.json")
    plan("--partial onto the camera maps", "fit2d", "-q sc.tif --frames 0:2 --partial sc_maps.h5", "sc_maps.h5")
    plan("--track's drift table onto the --regions file", "fit2d", "-q d.tif -o x.hdf5 --track --regions x_drift.txt",
         "x_drift.txt", setup=copy("regions.txt", "x_drift.txt"))
    plan("--track's tracks onto the --regions file", "fit2d", "-q d.tif -o x.csv --track --regions x_tracks.csv",
         "x_tracks.csv", setup=copy("regions.txt", "x_tracks.csv"))
    plan("--roi's drift table onto the ROI file", "fit2d", "-q m.tif --roi m_roi_drift.csv", "m_roi_drift.csv",
         setup=copy("roi.txt", "m_roi_drift.csv"))
    plan("-o onto the ROI file", "fit2d", "-q m.tif --roi roi.csv -o roi.csv", "roi.csv",
         setup=copy("roi.txt", "roi.csv"))
    plan("a pipeline step's drift table onto --regions", "fit2d",
         "-q d.tif -o g.hdf5 --undrift --undrift-segment 100 --regions g_undrift_drift.csv", "g_undrift_drift.csv",
         setup=copy("regions.txt", "g_undrift_drift.csv"))
    plan("a pipeline step's .yaml onto --regions", "fit2d",
         "-q d.tif -o g.csv --undrift --undrift-segment 100 --regions g_undrift.csv.yaml", "g_undrift.csv.yaml",
         setup=copy("regions.txt", "g_undrift.csv.yaml"))
    plan("the pipeline's picture onto --regions", "fit2d",
         "-q d.tif -o g.hdf5 --link --render --regions g_link.tif", "g_link.tif", setup=copy("regions.txt", "g_link.tif"))
    plan("the pipeline's preview onto the parameter file", "fit2d",
         "-q d.tif -o g.hdf5 --render --params g.png", "g.png", setup=copy("f.prm", "g.png"))
    plan("the link step's output is the HDF5 movie", "fit2d", "-q x_link.hdf5 -o x.hdf5 --link", "x_link.hdf5",
         setup=lambda ctx: _h5_movie(ctx, "m.tif", "x_link.hdf5"))
    plan("-o is a symbolic link to the movie", "fit2d", "-q m.tif -o lm.h5", "lm.h5", "m.tif",
         setup=symlink("m.tif", "lm.h5"))
    plan("the .yaml of -o is a hard link to the movie's", "fit2d", "-q m.tif -o h.csv", "h.csv.yaml", "m.yaml",
         setup=hardlink("m.yaml", "h.csv.yaml"))
    plan("the .yaml of -o is a symbolic link to the movie's", "fit2d", "-q m.tif -o s.csv", "s.csv.yaml", "m.yaml",
         setup=symlink("m.yaml", "s.csv.yaml"))
    plan("-o through a symbolic link to this folder", "fit2d", "-q m.tif -o sub/m.h5", "m.yaml", setup=symlink(".", "sub"))
    plan("-o spelled ./m.h5", "fit2d", "-q m.tif -o ./m.h5", "m.yaml")
    plan("-o spelled through ../", "fit2d", ["-q", "m.tif", "-o", "../{case}/m.h5"], "m.yaml")
    # fit2d filter / link / render / undrift / merge / calibrate
    plan("filter -o its input", "fit2d", "-q filter locs.hdf5 -o locs.hdf5 --where 'photons > 0'", "locs.hdf5")
    plan("filter -o .h5 whose .yaml is the input's", "fit2d", "-q filter locs.hdf5 -o locs.h5 --where 'photons > 0'",
         "locs.yaml")
    plan("filter -o beside a movie replaces its .yaml", "fit2d", "-q filter locs.hdf5 -o m.h5 --where 'photons > 0'",
         "m.yaml")
    plan("filter CSV -o its own .yaml", "fit2d", "-q filter lc.csv -o lc.csv.yaml --format csv --where 'photons > 0'",
         "lc.csv.yaml")
    plan("filter -o onto the parameter file", "fit2d",
         "-q filter locs.hdf5 --params f.prm -o f.prm --format csv --where 'x > 0'", "f.prm")
    plan("filter -o is a symbolic link to the input", "fit2d", "-q filter locs.hdf5 -o lf.hdf5 --where 'x > 0'",
         "lf.hdf5", "locs.hdf5", setup=symlink("locs.hdf5", "lf.hdf5"))
    plan("link -o its input", "fit2d", "-q link locs.hdf5 -o locs.hdf5", "locs.hdf5")
    plan("link -o .h5 whose .yaml is the input's", "fit2d", "-q link locs.hdf5 -o locs.h5", "locs.yaml")
    plan("link CSV -o its input", "fit2d", "-q link lc.csv -o lc.csv", "lc.csv")
    plan("link -o a hard link to the input", "fit2d", "-q link locs.hdf5 -o hl.hdf5", "hl.hdf5", "locs.hdf5",
         setup=hardlink("locs.hdf5", "hl.hdf5"))
    plan("render -o its input", "fit2d", "-q render locs.hdf5 -o locs.hdf5", "locs.hdf5")
    plan("render -o out.tif --png out.tif", "fit2d", "-q render locs.hdf5 -o out.tif --png out.tif", "out.tif")
    plan("render --png onto the input", "fit2d", "-q render locs.hdf5 -o p.tif --png locs.hdf5", "locs.hdf5")
    plan("render --png onto the input's .yaml", "fit2d", "-q render locs.hdf5 -o p.tif --png locs.yaml", "locs.yaml")
    plan("render CSV --png onto its .yaml", "fit2d", "-q render lc.csv -o p.tif --png lc.csv.yaml", "lc.csv.yaml")
    plan("render -o a symbolic link to the input", "fit2d", "-q render locs.hdf5 -o ln.tif", "ln.tif", "locs.hdf5",
         setup=symlink("locs.hdf5", "ln.tif"))
    plan("render's default preview is a link to the input", "fit2d", "-q render locs.hdf5 -o p.tif", "p.png",
         "locs.hdf5", setup=symlink("locs.hdf5", "p.png"))
    plan("undrift's drift table onto its input", "fit2d", "-q undrift out_drift.csv -o out.csv --segment 100",
         "out_drift.csv", setup=steps(tool_run("fit2d", "-q d.tif -o out_drift.csv")))
    plan("undrift -o its input", "fit2d", "-q undrift dl.hdf5 -o dl.hdf5 --segment 100", "dl.hdf5")
    plan("undrift -o .h5 whose .yaml is the input's", "fit2d", "-q undrift dl.hdf5 -o dl.h5 --segment 100", "dl.yaml")
    plan("undrift's plot is a link to the input's .yaml", "fit2d", "-q undrift dl.hdf5 -o u.hdf5 --segment 100",
         "u_drift.png", "dl.yaml", setup=symlink("dl.yaml", "u_drift.png"))
    plan("merge -o a part", "fit2d", "-q merge fp0.h5 fp1.h5 -o fp0.h5", "fp0.h5")
    plan("merge --undrift's output is a part", "fit2d", "-q merge fp0.h5 x_undrift.h5 -o x.h5 --undrift --undrift-segment 5",
         "x_undrift.h5", setup=copy("fp1.h5", "x_undrift.h5"))
    plan("merge --render's picture is a part", "fit2d", "-q merge fp0.h5 x.tif -o x.h5 --render", "x.tif",
         setup=copy("fp1.h5", "x.tif"))
    plan("calibrate -o the z-stack", "fit2d", "-q calibrate z.tif --z-step 40 -o z.tif", "z.tif")
    plan("calibrate --plot the z-stack", "fit2d", "-q calibrate z.tif --z-step 40 -o c.json --plot z.tif", "z.tif")
    plan("calibrate --plot and -o are one file", "fit2d", "-q calibrate z.tif --z-step 40 -o c.json --plot c.json",
         "c.json")
    plan("calibrate -o .png is its default plot", "fit2d", "-q calibrate z.tif --z-step 40 -o c.png", "c.png")
    plan("calibrate -o the z-stack's .yaml", "fit2d", "-q calibrate z.tif --z-step 40 -o z.yaml", "z.yaml")
    # sofi
    plan("-o the stack", "sofi", "-q bl.tif -o bl.tif --block 50", "bl.tif")
    plan("the default output is a link to the stack", "sofi", "-q bl.tif --block 50", "bl_sofi.tif", "bl.tif",
         setup=symlink("bl.tif", "bl_sofi.tif"))
    plan("-o a hard link to the stack", "sofi", "-q bl.tif -o hs.tif --block 50", "hs.tif", "bl.tif",
         setup=hardlink("bl.tif", "hs.tif"))
    plan("-o spelled ./bl.tif", "sofi", "-q bl.tif -o ./bl.tif --block 50", "bl.tif")
    plan("-o through a symbolic link to this folder", "sofi", "-q bl.tif -o sub/bl.tif --block 50", "bl.tif",
         setup=symlink(".", "sub"))
    plan("--split's even image is the stack", "sofi", "-q s_even.tif -o s.tif --block 50 --orders 2 --split odd-even",
         "s_even.tif", setup=copy("bl.tif", "s_even.tif"))
    plan("--split halves' first image is the stack", "sofi", "-q s_first.tif -o s.tif --block 50 --orders 2 --split "
         "halves", "s_first.tif", setup=copy("bl.tif", "s_first.tif"))
    plan("--balanced's image is the stack", "sofi", "-q s_balanced.tif -o s.tif --block 100 --balanced --psf-sigma 1.5",
         "s_balanced.tif", setup=copy("bl.tif", "s_balanced.tif"))
    plan("--cross's per-grid image is the stack", "sofi", "-q x_mean.tif -o x.tif --block 50 --cross --orders 2",
         "x_mean.tif", setup=copy("bl.tif", "x_mean.tif"))
    plan("--undrift's drift table is the --pre-smre file", "sofi",
         "-q bl.tif -o s.tif --block 50 --orders 2 --undrift --drift-block 50 --pre-smre s_drift.csv", "s_drift.csv",
         setup=copy("smre.prm", "s_drift.csv"))
    plan("-o is the --post-smre file", "sofi", "-q bl.tif -o p.tif --block 50 --orders 2 --post-smre p.tif", "p.tif",
         setup=copy("smre.prm", "p.tif"))
    plan("--partial onto the stack", "sofi", "-q bl.tif --block 50 --frames 0:100 --partial bl.tif", "bl.tif")
    plan("merge -o a part", "sofi", "-q merge sp0.h5 sp1.h5 -o sp0.h5", "sp0.h5")
    plan("merge -o a link to a part", "sofi", "-q merge sp0.h5 sp1.h5 -o lp.h5", "lp.h5", "sp1.h5",
         setup=symlink("sp1.h5", "lp.h5"))
    # smre
    plan("-o the image", "smre", "-q --psf 1 --iterations 2 img.tif -o img.tif", "img.tif")
    plan("the default output is a link to the image", "smre", "-q --psf 1 --iterations 2 img.tif", "img_smre.tif",
         "img.tif", setup=symlink("img.tif", "img_smre.tif"))
    plan("-o a hard link to the image", "smre", "-q --psf 1 --iterations 2 img.tif -o h.tif", "h.tif", "img.tif",
         setup=hardlink("img.tif", "h.tif"))
    plan("--log onto the image", "smre", "-q --psf 1 --iterations 2 img.tif -o o.tif --log img.tif", "img.tif")
    plan("--log and -o are one file", "smre", "-q --psf 1 --iterations 2 img.tif -o o.tif --log o.tif", "o.tif")
    plan("--simulate's measurement is the input", "smre",
         "-q --simulate --noise 2 --psf 1 --iterations 2 o_simulated.tif -o o.tif", "o_simulated.tif",
         setup=copy("img.tif", "o_simulated.tif"))
    plan("--control's estimate is the input", "smre",
         "-q --psf 1 --iterations 2 --report-interval 1 --control o_iter000001.tif -o o.tif", "o_iter000001.tif",
         setup=copy("img.tif", "o_iter000001.tif"))
    plan("--log onto the parameter file", "smre", "-q --params smre.prm img.tif -o o.tif --log smre.prm", "smre.prm")
    plan("--partial onto the stack", "smre", "-q --psf 1 --iterations 2 st.tif --frames 0:1 --partial st.tif", "st.tif")
    plan("merge -o a part", "smre", "-q merge mp0.h5 mp1.h5 -o mp0.h5", "mp0.h5")
    # frc
    plan("--curve onto the first image", "frc", "-q img.tif img2.tif --curve img.tif", "img.tif")
    plan("--plot onto the second image", "frc", "-q img.tif img2.tif --plot img2.tif", "img2.tif")
    plan("--json onto an image", "frc", "-q img.tif img2.tif --json img.tif", "img.tif")
    plan("--plot and --json are one file", "frc", "-q img.tif img2.tif --plot f.png --json f.png", "f.png")
    plan("--curve and --json are one file", "frc", "-q img.tif img2.tif --curve c.csv --json c.csv", "c.csv")
    plan("--curve and --plot are one file", "frc", "-q img.tif img2.tif --curve c.csv --plot c.csv", "c.csv")
    plan("--json onto the localizations' .yaml", "frc", "-q locs.hdf5 --render-px 10 --time-blocks 4 --json locs.yaml", "locs.yaml")
    plan("--curve onto the localizations", "frc", "-q locs.hdf5 --render-px 10 --time-blocks 4 --curve locs.hdf5", "locs.hdf5")
    plan("--json onto the parameter file", "frc", "-q img.tif img2.tif --params fr.json --json fr.json", "fr.json",
         setup=write("fr.json", "{}\n"))
    plan("--curve is a link to an image", "frc", "-q img.tif img2.tif --curve ln.csv", "ln.csv", "img.tif",
         setup=symlink("img.tif", "ln.csv"))
    plan("--plot is a hard link to the stack (--split)", "frc", "-q st.tif --split odd-even --plot h.png", "h.png",
         "st.tif", setup=hardlink("st.tif", "h.png"))
    # bench simulate
    plan("simulate movie writes the calibration it reads", "bench",
         "-q simulate movie -o a3.tif --frames 2 --width 16 --height 16 --calibration a3_astig.json", "a3_astig.json")
    plan("simulate movie writes the camera maps it reads", "bench",
         "-q simulate movie -o sc.tif --frames 2 --width 32 --height 32 --camera scmos --camera-maps sc_maps.h5",
         "sc_maps.h5")
    plan("simulate movie -o onto its own truth name", "bench",
         "-q simulate movie -o t.tif --frames 2 --width 16 --height 16 --calibration t_truth.csv", "t_truth.csv",
         setup=copy("a3_astig.json", "t_truth.csv"))

    plan("compare --json onto the truth", "bench", "-q compare lc.csv m_truth.csv --json m_truth.csv", "m_truth.csv")
    plan("compare --json onto the localizations' .yaml", "bench", "-q compare lc.csv m_truth.csv --json lc.csv.yaml",
         "lc.csv.yaml")

    # ================= §2: a run's files are one generation =================
    gen = "2 generation"
    previous = tool_run("fit2d", "-q d.tif -o g.hdf5 --undrift --undrift-segment 100 --link --render")
    case(gen, "the pipeline's late render error keeps the previous set", "fit2d",
         "-q d.tif -o g.hdf5 --threshold 2 --undrift --undrift-segment 100 --link --render --render-pixel 1e-9", 2,
         "--render-pixel", setup=previous)
    case(gen, "the pipeline's undrift error keeps the previous set", "fit2d",
         "-q d.tif -o g.hdf5 --threshold 2 --undrift --undrift-segment 100000 --link --render", (2, 3),
         "segment", setup=previous)
    case(gen, "an unwritable last output keeps the previous set", "fit2d",
         "-q d.tif -o g.hdf5 --threshold 2 --undrift --undrift-segment 100 --link --render", 4, "g_undrift_link.png",
         setup=steps(previous, lambda ctx: (os.remove(ctx.path("g_undrift_link.png")),
                                            os.mkdir(ctx.path("g_undrift_link.png")))))
    case(gen, "merge's pipeline error keeps the previous set", "fit2d",
         "-q merge fp0.h5 fp1.h5 -o mg.hdf5 --link --render --render-pixel 1e-9", 2, "--render-pixel",
         setup=tool_run("fit2d", "-q merge fp0.h5 fp1.h5 -o mg.hdf5 --link --render"))
    case(gen, "sofi --balanced: an unwritable last preview keeps the previous set", "sofi",
         "-q bl.tif -o s.tif --block 100 --orders 2,3,4 --balanced --psf-sigma 1.6", 4, "s_balanced_panel.png",
         setup=steps(tool_run("sofi", "-q bl.tif -o s.tif --block 100 --balanced --psf-sigma 1.5"),
                     lambda ctx: (os.remove(ctx.path("s_balanced_panel.png")),
                                  os.mkdir(ctx.path("s_balanced_panel.png")))))
    case(gen, "a second run on the same outputs is refused while the first runs", "smre",
         [*QUICK_SMRE, "-o", "out.tif"], 4, "out.tif",
         runner=concurrent("smre", [*LONG_SMRE, "-o", "out.tif"], [*QUICK_SMRE, "-o", "out.tif"]))
    case(gen, "a second fit2d on the same outputs is refused while the first runs", "fit2d",
         "-q m.tif -o x.hdf5", 4, "x.hdf5",
         runner=concurrent("fit2d", ["-q", "{shared}/big.tif", "-o", "x.hdf5"], ["-q", "m.tif", "-o", "x.hdf5"], delay=1.0),
         setup=_long_movie)
    case(gen, "a killed run's lock and temporary files are taken over", "smre", [*QUICK_SMRE, "-o", "out.tif"], 0,
         creates=["out.tif"],
         runner=killed_then("smre", [*LONG_SMRE, "-o", "out.tif", "--log", "out.csv"], [*QUICK_SMRE, "-o", "out.tif"]))
    case(gen, "a killed fit2d's temporary file is removed by the next run", "fit2d", "-q m.tif -o x.hdf5", 0,
         creates=["x.hdf5"], setup=_long_movie,
         runner=killed_then("fit2d", ["-q", "{shared}/big.tif", "-o", "x.hdf5"], ["-q", "m.tif", "-o", "x.hdf5"], delay=1.0))
    case(gen, "a lock of a dead process on this host is taken over", "sofi", "-q bl.tif -o s.tif --block 50", 0,
         creates=["s.tif"], changes=[".s.tif.lock", "s.tif.lock"], setup=lambda ctx: _dead_lock(ctx, "s.tif"))
    case(gen, "a 246-byte output name (sofi)", "sofi", f"-q bl.tif -o {LONG}.tif --block 50", 0, creates=[f"{LONG}.tif"])
    case(gen, "a 246-byte output name (smre)", "smre", f"-q --psf 1 --iterations 2 img.tif -o {LONG}.tif", 0,
         creates=[f"{LONG}.tif"])
    case(gen, "a 246-byte output name (fit2d)", "fit2d", f"-q m.tif -o {LONG[:241]}.hdf5", 0,
         creates=[f"{LONG[:241]}.hdf5", f"{LONG[:241]}.yaml"])
    case(gen, "a 246-byte output name (frc --json)", "frc", f"-q img.tif img2.tif --json {LONG[:241]}.json", 0,
         creates=[f"{LONG[:241]}.json"])
    case(gen, "a 256-byte output name is an output error", "sofi", f"-q bl.tif -o {'b' * 252}.tif --block 50", 4,
         "bbbbbbbb")
    for sig, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)):
        case(gen, f"{sig.name} keeps the previous outputs", "smre", [*LONG_SMRE, "-o", "o.tif", "--log", "o.csv"], code,
             line="smre: interrupted", setup=tool_run("smre", [*QUICK_SMRE, "-o", "o.tif", "--log", "o.csv"]),
             runner=interrupted("smre", [*LONG_SMRE, "-o", "o.tif", "--log", "o.csv"], sig))
    case(gen, "SIGHUP during fit2d leaves nothing", "fit2d", "-q {shared}/big.tif -o x.hdf5", 129, line="fit2d: interrupted",
         setup=_long_movie,
         runner=interrupted("fit2d", ["-q", "{shared}/big.tif", "-o", "x.hdf5"], signal.SIGHUP, delay=1.0))

    # ================= §3: metadata carried, never invented =================
    meta = "3 metadata"
    for sub, extra in (("filter", "--where 'photons > 0'"), ("link", ""), ("undrift", "--segment 100")):
        src = "dl.hdf5" if sub == "undrift" else "locs.hdf5"
        case(meta, f"{sub} keeps the camera (Sensitivity 0.5)", "fit2d", f"-q {sub} {src} -o k.hdf5 {extra}", 0,
             creates=["k.hdf5", "k.yaml"], check=yaml_has("k.yaml", "Sensitivity: 0.5"))
        case(meta, f"{sub} invents no chi2/iterations/status", "fit2d", f"-q {sub} {src} -o k.hdf5 {extra}", 0,
             creates=["k.hdf5"], check=no_columns("k.hdf5", src, "chi2", "iterations", "status"))
        case(meta, f"{sub} to CSV invents no chi2", "fit2d", f"-q {sub} {src} -o k.csv {extra}", 0,
             creates=["k.csv"], check=no_columns("k.csv", src, "chi2", "iterations", "status"))
    for sub, extra, src in (("filter", "--where 'photons > 0'", "locs.hdf5"), ("undrift", "--segment 100", "dl.hdf5")):
        case(meta, f"{sub} keeps a user's columns and their dtypes", "fit2d", f"-q {sub} ex.hdf5 -o k.hdf5 {extra}", 0,
             creates=["k.hdf5"], setup=locs_variant(src, "ex.hdf5", world.with_extra_columns),
             check=same_dtype_as("k.hdf5", "ex.hdf5"))
    case(meta, "filter keeps float64 x and y", "fit2d", "-q filter ex.hdf5 -o k.hdf5 --where 'x > 0'", 0,
         creates=["k.hdf5"], check=same_dtype_as("k.hdf5", "ex.hdf5"),
         setup=locs_variant("locs.hdf5", "ex.hdf5", lambda l: _retype(l, x="<f8", y="<f8")))
    case(meta, "filter of Picasso's own file keeps its camera", "fit2d",
         "-q filter pk.hdf5 -o k.hdf5 --where 'photons > 0'", 0, creates=["k.hdf5"],
         setup=_picasso("pk"), check=_camera_kept("pk.yaml", "k.yaml"))
    case(meta, "a calibration of version 99 is refused", "fit2d", "-q a3.tif --calibration v99.json -o k.hdf5", 3,
         "v99.json", setup=calibration_variant("v99.json", version=99))
    case(meta, "bench refuses a calibration of version 99", "bench",
         "-q simulate movie -o k.tif --frames 2 --width 16 --height 16 --calibration v99.json", 3, "v99.json",
         setup=calibration_variant("v99.json", version=99))
    # A calibration in nm may serve another camera: fit2d goes on, and says so on one line naming the file.
    case(meta, "a calibration for another pixel size is warned about", "fit2d",
         "-q a3.tif --calibration px.json -o k.hdf5", 0, creates=["k.hdf5", "k.yaml"],
         setup=calibration_variant("px.json", pixel_size_nm=50), check=_warned("px.json", "pixel size"))
    case(meta, "a calibration without its format name is refused", "fit2d",
         "-q a3.tif --calibration nf.json -o k.hdf5", 3, "nf.json", setup=calibration_variant("nf.json", format="other"))
    case(meta, "the calibration's pixel size is recorded", "fit2d", "-q a3.tif --calibration a3_astig.json -o k.hdf5",
         0, creates=["k.hdf5", "k.yaml"], check=_calibration_recorded("k.yaml"))
    for v in ("1e300", "0", "-20", "nan", "inf"):
        case(meta, f"calibrate --z-step {v} is refused", "fit2d", f"-q calibrate z.tif --z-step {v} -o c.json", 2,
             "--z-step")
    case(meta, "calibrate --z0 1e300 is refused", "fit2d", "-q calibrate z.tif --z-step 40 --z0 1e300 -o c.json", 2,
         "--z0")
    case(meta, "merge refuses parts of two different movies", "fit2d", "-q merge fp0.h5 op1.h5 -o k.csv", 3, "op1.h5")
    case(meta, "smre merge refuses parts of two different stacks", "smre", "-q merge mp0.h5 xp1.h5 -o k.tif", 3,
         "xp1.h5", setup=steps(lambda ctx: _other_stack(ctx, "st2.tif"),
                               tool_run("smre", ["-q", "--psf", "1", "--iterations", "3", "--weights", "closed-form",
                                                 "st2.tif", "--frames", "1:", "--partial", "xp1.h5"])))
    case(meta, "sofi merge refuses parts of two different stacks", "sofi", "-q merge sp0.h5 xp1.h5 -o k.tif", 3,
         "different stack", setup=steps(tool_run("bench", "-q simulate blinking -o bl2.tif --frames 200 --size 16 "
                                                          "--emitters 6 --seed 9"),
                                        tool_run("sofi", "-q bl2.tif --block 50 --orders 2 --frames 100: --partial "
                                                         "xp1.h5")))
    case(meta, "merge refuses the same part twice", "fit2d", "-q merge fp0.h5 fp0.h5 fp1.h5 -o k.csv", 3, "fp0.h5")
    case(meta, "smre merge refuses the same part twice", "smre", "-q merge mp0.h5 mp0.h5 mp1.h5 -o k.tif", 3, "mp0.h5")
    case(meta, "sofi merge refuses the same part twice", "sofi", "-q merge sp0.h5 sp0.h5 sp1.h5 -o k.tif", 3, "overlap")

    # ================= §4: no crash, no hang, bounded lines =================
    crash = "4 crash"
    deep_parens = "(" * 10000 + "x > 0" + ")" * 10000
    deep_sqrt = "sqrt(" * 7000 + "x" + ")" * 7000 + " > 0"
    case(crash, "--where nested 10,000 parentheses", "fit2d", ["-q", "filter", "locs.hdf5", "-o", "k.hdf5", "--where",
                                                                deep_parens], 2, "--where")
    case(crash, "--where sqrt( 7,000 deep", "fit2d", ["-q", "filter", "locs.hdf5", "-o", "k.hdf5", "--where",
                                                       deep_sqrt], 2, "--where")
    case(crash, "--where 'not' 30,000 times", "fit2d", ["-q", "filter", "locs.hdf5", "-o", "k.hdf5", "--where",
                                                          "not " * 30000 + "x > 0"], (0, 2), "--where")
    case(crash, "--where with an unknown function", "fit2d",
         "-q filter locs.hdf5 -o k.hdf5 --where 'foo(x) > 1'", 2, "--where", "foo", "function")
    case(crash, "--where of an unknown column", "fit2d", "-q filter locs.hdf5 -o k.hdf5 --where 'nosuch > 1'", 2,
         "--where", "nosuch")
    case(crash, "--where that is not an expression", "fit2d", "-q filter locs.hdf5 -o k.hdf5 --where 'x >'", 2,
         "--where")
    case(crash, "undrift --pixel 1e-9", "fit2d", "-q undrift dl.hdf5 -o k.hdf5 --segment 100 --pixel 1e-9", 2, "--pixel",
         timeout=10)
    case(crash, "undrift --max-drift 1e12", "fit2d", "-q undrift dl.hdf5 -o k.hdf5 --segment 100 --max-drift 1e12", 2,
         "--max-drift", timeout=10)
    case(crash, "undrift --segment 1", "fit2d", "-q undrift dl.hdf5 -o k.hdf5 --segment 1", (2, 3), "--segment",
         timeout=10)
    case(crash, "the pipeline's --undrift-pixel 1e-9", "fit2d",
         "-q d.tif -o k.hdf5 --undrift --undrift-segment 100 --undrift-pixel 1e-9", 2, "--undrift-pixel")
    case(crash, "render --pixel 1e-9", "fit2d", "-q render locs.hdf5 -o k.tif --pixel 1e-9", 2, "--pixel")
    case(crash, "frc --render-px 1e-9", "frc", "-q locs.hdf5 --render-px 1e-9 --time-blocks 4", 2, "--render-px")
    deep_json = "[" * 100000 + "]" * 100000
    for tool, inp in (("fit2d", "m.tif -o k.hdf5"), ("sofi", "bl.tif -o k.tif --block 50"),
                      ("smre", "img.tif -o k.tif"), ("frc", "img.tif img2.tif")):
        case(crash, "a JSON parameter file nested 100,000 deep", tool, f"-q --params deep.json {inp}", 2, "deep.json",
             setup=write("deep.json", '{"a": ' + deep_json + "}\n"), timeout=10)
    case(crash, "a .prm nested 100,000 subsections deep", "fit2d", "-q --params deep.prm m.tif -o k.hdf5", 2,
         "deep.prm", setup=write("deep.prm", "subsection a\n" * 100000 + "end\n" * 100000), timeout=10)
    case(crash, "a 30 MB .prm value", "fit2d", "-q --params big.prm m.tif -o k.hdf5", 2, "big.prm",
         setup=write_big("big.prm", "subsection Detection\n  set threshold = ", 30 << 20, "\nend\n"))
    case(crash, "a 30 MB .prm value (smre)", "smre", "-q --params big.prm img.tif -o k.tif", 2, "big.prm",
         setup=write_big("big.prm", "subsection input data\n  set sigma = ", 30 << 20, "\nend\n"))
    case(crash, "a 30 MB JSON string", "sofi", "-q --params big.json bl.tif -o k.tif --block 50", 2, "big.json",
         setup=write_big("big.json", '{"SOFI": {"orders": "', 30 << 20, '"}}\n', fill=b"2"))
    csv_head = ('"id","frame","x [nm]","y [nm]","sigma [nm]","intensity [photon]","offset [photon]",'
                '"bkgstd [photon]","uncertainty_xy [nm]"\n1,1,')
    case(crash, "a 50 MB CSV field", "fit2d", "-q filter big.csv -o k.hdf5 --where 'x > 0' --pixel-size 100", 3,
         "big.csv", setup=write_big("big.csv", csv_head, 50 << 20, ",100,100,150,1000,10,3,10\n"))
    case(crash, "a 50 MB CSV header name", "fit2d", "-q render bh.csv -o k.tif --pixel-size 100", 3, "bh.csv",
         setup=write_big("bh.csv", '"', 50 << 20, '"\n1\n', fill=b"h"))
    case(crash, "camera maps of 10^6 x 10^6 pixels", "fit2d", "-q sc.tif --camera-maps huge.h5 -o k.hdf5", 3,
         "huge.h5", setup=huge_maps("huge.h5"))
    case(crash, "bench: camera maps of 10^6 x 10^6 pixels", "bench",
         "-q simulate movie -o k.tif --frames 2 --width 32 --height 32 --camera scmos --camera-maps huge.h5", 3,
         "huge.h5", setup=huge_maps("huge.h5"))
    case(crash, "link on frames out of order", "fit2d", "-q link un.hdf5 -o k.hdf5", (0, 3), "un.hdf5",
         setup=locs_variant("locs.hdf5", "un.hdf5", lambda l: l[::-1].copy()), check=frames_sorted("k.hdf5"))
    beyond = locs_variant("locs.hdf5", "be.hdf5", lambda l: _frame(l, -1, 1000000))
    for sub, extra in (("filter", "--where 'x > 0'"), ("link", ""), ("render", ""), ("undrift", "--segment 5")):
        out = "k.tif" if sub == "render" else "k.hdf5"
        case(crash, f"{sub}: a frame beyond the .yaml's Frames", "fit2d", f"-q {sub} be.hdf5 -o {out} {extra}", 3,
             "be.hdf5", setup=beyond)
    case(crash, "frc: a frame beyond the .yaml's Frames", "frc", "-q be.hdf5 --render-px 10 --time-blocks 4", 3, "be.hdf5",
         setup=beyond)
    case(crash, "render --color z of 2D localizations", "fit2d", "-q render locs.hdf5 -o k.tif --color z", 2, "--color")
    huge_yaml = locs_variant("locs.hdf5", "wh.hdf5", lambda l: l, yaml_text=yaml_of("locs.yaml", Width="100000000",
                                                                                    Height="100000000"))
    case(crash, "render: .yaml Width/Height 1e8", "fit2d", "-q render wh.hdf5 -o k.tif", 3, "wh.yaml", setup=huge_yaml)
    case(crash, "frc: .yaml Width/Height 1e8", "frc", "-q wh.hdf5 --render-px 10 --time-blocks 4", 3, "wh.yaml", setup=huge_yaml)
    case(crash, "undrift: .yaml Width/Height 1e8", "fit2d", "-q undrift wh.hdf5 -o k.hdf5 --segment 5", 3, "wh.yaml",
         setup=huge_yaml)
    case(crash, "frc --field 1e9x1e9", "frc", "-q locs.hdf5 --render-px 10 --time-blocks 4 --field 1000000000x1000000000", 2, "--field")
    case(crash, "frc --field 0x0", "frc", "-q locs.hdf5 --render-px 10 --time-blocks 4 --field 0x0", 2, "--field")
    case(crash, "a .yaml nested 100,000 deep", "fit2d", "-q filter dy.hdf5 -o k.hdf5 --where 'x > 0'", 3, "dy.yaml",
         setup=locs_variant("locs.hdf5", "dy.hdf5", lambda l: l, yaml_text=lambda ctx: "a: " + "[" * 100000 + "\n"),
         timeout=10)
    case(crash, "a movie .yaml nested 100,000 deep", "fit2d", "-q m.tif -o k.hdf5", 3, "m.yaml",
         setup=write("m.yaml", "Frames: " + "[" * 100000 + "\n"), timeout=10)
    case(crash, "NaN coordinates in the localizations", "fit2d", "-q render nan.hdf5 -o k.tif", (0, 3), "nan.hdf5",
         setup=locs_variant("locs.hdf5", "nan.hdf5", lambda l: _set(l, "x", np.nan)))
    case(crash, "a million-column CSV header", "fit2d", "-q filter wide.csv -o k.hdf5 --where 'x > 0' --pixel-size 100", 3, "wide.csv",
         setup=write("wide.csv", ",".join(f'"c{i}"' for i in range(1000000)) + "\n"))
    case(crash, "sofi --block 1e18", "sofi", "-q bl.tif -o k.tif --block 1000000000000000000", (2, 3), "--block")
    case(crash, "smre --iterations -1", "smre", "-q img.tif -o k.tif --iterations -1", 2, "--iterations")
    case(crash, "sofi --frames with a huge end", "sofi", "-q bl.tif -o k.tif --block 50 --frames 0:99999999999999999999",
         2, "--frames")
    case(crash, "bench simulate --frames 0", "bench", "-q simulate movie -o k.tif --frames 0", 2, "--frames")

    # ================= §5: other adversarial input =================
    adv = "5 adversarial"
    case(adv, "names with spaces", "fit2d", ["-q", "my movie.tif", "-o", "my locs.csv"], 0,
         creates=["my locs.csv", "my locs.csv.yaml"], setup=steps(copy("m.tif", "my movie.tif"), copy("m.yaml", "my movie.yaml")))
    case(adv, "unicode names", "sofi", ["-q", "überfilm ✓.tif", "-o", "résultat ✓.tif", "--block", "50"], 0,
         creates=["résultat ✓.tif"], setup=copy("bl.tif", "überfilm ✓.tif"))
    case(adv, "names starting with a dash", "smre", ["-q", "--psf", "1", "--iterations", "2", "./-in.tif", "-o",
                                                     "./-out.tif"], 0, creates=["-out.tif"], setup=copy("img.tif", "-in.tif"))
    case(adv, "a name with a newline stays one line", "sofi", ["-q", "a\nb.tif", "-o", "k.tif", "--block", "50"], 3,
         "b.tif")
    case(adv, "a name with a newline as -o stays one line", "frc", ["-q", "img.tif", "img2.tif", "--json", "no\ndir/k.json"],
         4, "dir/k.json")
    case(adv, "a name with a terminal escape", "fit2d", ["-q", "\x1b[31mred.tif", "-o", "k.hdf5"], 3, "red.tif",
         check=None)
    for tool, args in (("fit2d", "-q e.tif -o k.hdf5"), ("sofi", "-q e.tif -o k.tif --block 50"),
                       ("smre", "-q e.tif -o k.tif"), ("frc", "-q e.tif img.tif")):
        case(adv, "an empty movie file", tool, args, 3, "e.tif", setup=write("e.tif", b""))
    for sub in ("filter", "link", "render", "undrift"):
        out = "k.tif" if sub == "render" else "k.hdf5"
        extra = "--where 'x > 0'" if sub == "filter" else ""
        case(adv, f"{sub}: an empty HDF5 file", "fit2d", f"-q {sub} e.hdf5 -o {out} {extra}", 3, "e.hdf5",
             setup=write("e.hdf5", b""))
        case(adv, f"{sub}: an empty CSV file", "fit2d", f"-q {sub} e.csv -o {out} --pixel-size 100 {extra}", 3, "e.csv",
             setup=write("e.csv", b""))
    case(adv, "an empty JSON parameter file", "fit2d", "-q --params e.json m.tif -o k.hdf5", 2, "e.json",
         setup=write("e.json", b""))
    case(adv, "an empty calibration", "fit2d", "-q a3.tif --calibration e.json -o k.hdf5", 3, "e.json",
         setup=write("e.json", b""))
    case(adv, "an empty part", "fit2d", "-q merge fp0.h5 e.h5 -o k.csv", 3, "e.h5", setup=write("e.h5", b""))
    case(adv, "an empty sofi part", "sofi", "-q merge sp0.h5 e.h5 -o k.tif", 3, "e.h5", setup=write("e.h5", b""))
    case(adv, "an empty ROI file", "fit2d", "-q m.tif --roi e.txt", 3, "e.txt", setup=write("e.txt", b""))
    for tool, args in (("fit2d", "-q dir.tif -o k.hdf5"), ("sofi", "-q dir.tif -o k.tif --block 50"),
                       ("smre", "-q dir.tif -o k.tif"), ("frc", "-q dir.tif img.tif")):
        case(adv, "a directory as the movie", tool, args, 3, "dir.tif", setup=mkdir("dir.tif"))
    case(adv, "a directory as the localizations", "fit2d", "-q filter dir.hdf5 -o k.hdf5 --where 'x > 0'", 3,
         "dir.hdf5", setup=mkdir("dir.hdf5"))
    case(adv, "a directory as the parameter file", "sofi", "-q --params dir.prm bl.tif -o k.tif --block 50", 2,
         "dir.prm", setup=mkdir("dir.prm"))
    case(adv, "a directory as the calibration", "fit2d", "-q a3.tif --calibration dir.json -o k.hdf5", 3, "dir.json",
         setup=mkdir("dir.json"))
    case(adv, "a directory as the camera maps", "fit2d", "-q sc.tif --camera-maps dir.h5 -o k.hdf5", 3, "dir.h5",
         setup=mkdir("dir.h5"))
    for tool, args in (("fit2d", "-q m.tif -o nodir/k.hdf5"), ("sofi", "-q bl.tif -o nodir/k.tif --block 50"),
                       ("smre", "-q --psf 1 --iterations 2 img.tif -o nodir/k.tif"),
                       ("frc", "-q img.tif img2.tif --plot nodir/k.png"),
                       ("bench", "-q simulate movie -o nodir/k.tif --frames 2 --width 16 --height 16")):
        case(adv, "-o into a missing folder", tool, args, 4, "nodir/k")
    case(adv, "render -o into a missing folder", "fit2d", "-q render locs.hdf5 -o nodir/k.tif", 4, "nodir/k.tif")
    case(adv, "render --png into a missing folder", "fit2d", "-q render locs.hdf5 -o k.tif --png nodir/k.png", 4,
         "nodir/k.png")
    case(adv, "filter -o into a missing folder", "fit2d", "-q filter locs.hdf5 -o nodir/k.csv --where 'x > 0'", 4,
         "nodir/k.csv")
    case(adv, "calibrate --plot into a missing folder", "fit2d",
         "-q calibrate z.tif --z-step 40 -o c.json --plot nodir/c.png", 4, "nodir/c.png")
    case(adv, "the pipeline into a missing folder", "fit2d", "-q d.tif -o nodir/g.hdf5 --undrift --undrift-segment 100 --link --render", 4,
         "nodir/g")
    case(adv, "-o is a directory", "fit2d", "-q m.tif -o out.csv", 4, "out.csv", setup=mkdir("out.csv"))
    case(adv, "-o is a directory (sofi)", "sofi", "-q bl.tif -o out.tif --block 50", 4, "out.tif", setup=mkdir("out.tif"))
    case(adv, "-o under a regular file", "smre", "-q --psf 1 --iterations 2 img.tif -o img2.tif/k.tif", 4, "img2.tif")
    case(adv, "a FIFO as the movie does not hang", "sofi", "-q f.tif -o k.tif --block 50", 3, "f.tif",
         setup=mkfifo("f.tif"), timeout=10)
    case(adv, "a FIFO as the localizations does not hang", "fit2d", "-q filter f.csv -o k.hdf5 --where 'x > 0' --pixel-size 100", 3,
         "f.csv", setup=mkfifo("f.csv"), timeout=10)
    case(adv, "a FIFO as the parameter file does not hang", "smre", "-q --params fifo.prm img.tif -o k.tif", 2, "fifo.prm",
         setup=mkfifo("fifo.prm"), timeout=10)
    case(adv, "a symbolic link loop as the movie", "sofi", "-q loop.tif -o k.tif --block 50", 3, "loop.tif",
         setup=symlink("loop.tif", "loop.tif"))
    case(adv, "a dangling symbolic link as the movie", "fit2d", "-q gone.tif -o k.hdf5", 3, "gone.tif",
         setup=symlink("nowhere.tif", "gone.tif"))
    case(adv, "the same image twice", "frc", "-q img.tif img.tif", (0, 2), "img.tif")
    case(adv, "a truncated HDF5 localization file", "fit2d", "-q link tr.hdf5 -o k.hdf5", 3, "tr.hdf5",
         setup=lambda ctx: _truncate(ctx, "locs.hdf5", "tr.hdf5", "locs.yaml"))
    case(adv, "a truncated part", "fit2d", "-q merge fp0.h5 tr.h5 -o k.csv", 3, "tr.h5",
         setup=lambda ctx: _truncate(ctx, "fp1.h5", "tr.h5"))
    case(adv, "a truncated sofi part", "sofi", "-q merge sp0.h5 tr.h5 -o k.tif", 3, "tr.h5",
         setup=lambda ctx: _truncate(ctx, "sp1.h5", "tr.h5"))
    case(adv, "a truncated movie", "frc", "-q tr.tif --split odd-even", 3, "tr.tif",
         setup=lambda ctx: _truncate(ctx, "st.tif", "tr.tif"))
    case(adv, "a parameter of the wrong type in JSON", "fit2d", "-q --params t.json m.tif -o k.hdf5", 2, "t.json",
         setup=write("t.json", '{"Detection": {"box": "seven"}}\n'))
    case(adv, "an unknown parameter in a .prm", "smre", "-q --params u.prm img.tif -o k.tif", 2, "u.prm",
         setup=write("u.prm", "subsection input data\n  set nosuch = 1\nend\n"))
    case(adv, "a .prm with an unterminated subsection", "sofi", "-q --params u.prm bl.tif -o k.tif --block 50", 2,
         "u.prm", setup=write("u.prm", "subsection SOFI\n  set block = 50\n"))
    case(adv, "a binary file as the parameter file", "frc", "-q --params img.tif img.tif img2.tif", 2, "img.tif")
    case(adv, "a movie that is a text file", "fit2d", "-q txt.tif -o k.hdf5", 3, "txt.tif",
         setup=write("txt.tif", "not a tiff\n"))
    case(adv, "a CSV that is a TIFF", "fit2d", "-q filter img.csv -o k.hdf5 --where 'x > 0' --pixel-size 100", 3, "img.csv",
         setup=copy("img.tif", "img.csv"))
    case(adv, "an HDF5 movie as localizations", "fit2d", "-q render mv.h5 -o k.tif", 3, "mv.h5",
         setup=lambda ctx: _h5_movie(ctx, "m.tif", "mv.h5"))
    case(adv, "localizations as the movie", "sofi", "-q locs.hdf5 -o k.tif --block 50", 3, "locs.hdf5")
    case(adv, "a sofi part given to fit2d merge", "fit2d", "-q merge sp0.h5 sp1.h5 -o k.csv", 3, "sp0.h5")
    case(adv, "a fit2d part given to smre merge", "smre", "-q merge fp0.h5 fp1.h5 -o k.tif", 3, "fp0.h5")
    case(adv, "a part given as a movie", "frc", "-q fp0.h5 --split odd-even", 3, "fp0.h5")
    case(adv, "--frames past the end", "sofi", "-q bl.tif -o k.tif --block 50 --frames 500:600", (2, 3), "bl.tif", "500:600")
    case(adv, "--frames backwards", "fit2d", "-q m.tif -o k.hdf5 --frames 10:5", (2, 3), "m.tif", "10:5")
    case(adv, "--device of nonsense", "smre", "-q --device tpu img.tif -o k.tif", 2, "--device")
    case(adv, "an unknown option", "frc", "-q img.tif img2.tif --no-such-option", 2, "--no-such-option")
    case(adv, "a ThunderSTORM CSV with its columns shuffled", "fit2d",
         "-q filter sh.csv -o k.csv --where 'x > 0'", (0, 3), "sh.csv", setup=lambda ctx: _shuffle_csv(ctx, "lc.csv",
                                                                                                     "sh.csv"))
    case(adv, "a CSV row with a missing field", "fit2d", "-q filter mf.csv -o k.hdf5 --where 'x > 0'", 3, "mf.csv",
         setup=lambda ctx: _drop_field(ctx, "lc.csv", "mf.csv"))
    case(adv, "a CSV with a non-numeric value", "fit2d", "-q link nn.csv -o k.hdf5", 3, "nn.csv",
         setup=lambda ctx: _bad_value(ctx, "lc.csv", "nn.csv"))
    case(adv, "compare: a missing truth", "bench", "-q compare lc.csv nosuch.csv", 3, "nosuch.csv")
    case(adv, "compare: a movie as the truth", "bench", "-q compare lc.csv m.tif", (2, 3), "m.tif")
    case(adv, "stdin as a dash is no file", "sofi", "-q - -o k.tif --block 50", (2, 3), "-", stdin=b"")
    return C


# ---- helpers of the setups above ----


def _h5_movie(ctx, tif, out):
    import tifffile
    data = tifffile.imread(ctx.path(tif))
    with h5py.File(ctx.path(out), "w") as f:
        f.create_dataset("data", data=data)


def _long_movie(ctx):
    """{shared}/big.tif: a movie long enough for fit2d to be still running after a second, made once for all
    cases outside their folders (too large to copy into each)."""
    path = os.path.join(ctx.shared, "big.tif")
    if os.path.exists(path):
        return
    r = subprocess.run([ctx.tool("bench"), "-q", "simulate", "movie", "-o", path, "--frames", str(BIG_FRAMES),
                              "--width", "32", "--height", "32", "--emitters", "10", "--seed", "11"],
                             cwd=ctx.shared, env=ctx.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             timeout=480 if SANITIZER_RUN else 120)
    if r.returncode != 0:
        raise RuntimeError(f"bench simulate big.tif: {r.stdout.decode(errors='replace').strip()}")


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid  # gone; reused only after the PID space wraps


def _dead_lock(ctx, output):
    """The lock files a run killed on this host would have left, in the plausible spellings (issue 24 §2 leaves
    the name to the implementation): each holds 'host pid' of a process that is gone."""
    text = f"{socket.gethostname()} {_dead_pid()}\n"
    for name in (f".{output}.lock", f"{output}.lock"):
        with open(ctx.path(name), "w") as f:
            f.write(text)


def _retype(locs, **types):
    dt = np.dtype([(n, types.get(n, locs.dtype[n].str)) for n in locs.dtype.names])
    out = np.zeros(locs.shape, dt)
    for n in locs.dtype.names:
        out[n] = locs[n]
    return out


def _frame(locs, index, value):
    out = locs.copy()
    out["frame"][index] = value
    return out


def _set(locs, name, value):
    out = locs.copy()
    out[name][::3] = value
    return out


def _picasso(stem):
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "picasso")

    def f(ctx):
        for ext in (".hdf5", ".yaml"):
            with open(os.path.join(src, "picasso_testdata_locs" + ext), "rb") as a, open(ctx.path(stem + ext), "wb") as b:
                b.write(a.read())
    return f


def _camera_kept(src_yaml, out_yaml):
    import yaml

    def check(ctx, r):
        def camera(path):
            docs = [d for d in yaml.load_all(open(ctx.path(path)), Loader=yaml.SafeLoader) if isinstance(d, dict)]
            merged = {}
            for d in docs:
                for k in ("Baseline", "Sensitivity", "Gain", "Qe", "Pixelsize"):
                    if k in d and k not in merged:
                        merged[k] = d[k]
            return merged
        want, got = camera(src_yaml), camera(out_yaml)
        diff = {k: (v, got.get(k)) for k, v in want.items() if got.get(k) != v}
        return f"camera changed (input, output): {diff}" if diff else None
    return check


def _warned(*fragments):
    def check(ctx, r):
        lines = [l for l in r.out.splitlines() if ": warning: " in l]
        if len(lines) == 1 and all(f in lines[0] for f in fragments):
            return None
        return f"expected one warning line naming {fragments}, got {lines}"
    return check


def _calibration_recorded(out_yaml):
    def check(ctx, r):
        text = open(ctx.path(out_yaml)).read().lower()
        return None if "calibration" in text and "pixel" in text else f"{out_yaml} does not record the calibration"
    return check


def _other_stack(ctx, name):
    import tifffile
    tifffile.imwrite(ctx.path(name), np.stack([world.float_image(13), world.float_image(14), world.float_image(15)]), photometric="minisblack")


def _truncate(ctx, src, dst, yaml_src=None):
    data = open(ctx.path(src), "rb").read()
    with open(ctx.path(dst), "wb") as f:
        f.write(data[: len(data) // 2])
    if yaml_src:
        copy(yaml_src, os.path.splitext(dst)[0] + ".yaml")(ctx)


def _shuffle_csv(ctx, src, dst):
    lines = open(ctx.path(src)).read().splitlines()
    rows = [line.split(",") for line in lines]
    order = list(reversed(range(len(rows[0]))))
    with open(ctx.path(dst), "w") as f:
        for row in rows:
            f.write(",".join(row[i] for i in order) + "\n")
    copy(src + ".yaml", dst + ".yaml")(ctx)  # a CSV's own .yaml: lc.csv.yaml


def _drop_field(ctx, src, dst):
    lines = open(ctx.path(src)).read().splitlines()
    lines[1] = ",".join(lines[1].split(",")[:-1])
    with open(ctx.path(dst), "w") as f:
        f.write("\n".join(lines) + "\n")
    copy(src + ".yaml", dst + ".yaml")(ctx)  # a CSV's own .yaml: lc.csv.yaml


def _bad_value(ctx, src, dst):
    lines = open(ctx.path(src)).read().splitlines()
    cells = lines[1].split(",")
    cells[2] = "twelve"
    lines[1] = ",".join(cells)
    with open(ctx.path(dst), "w") as f:
        f.write("\n".join(lines) + "\n")
    copy(src + ".yaml", dst + ".yaml")(ctx)  # a CSV's own .yaml: lc.csv.yaml
