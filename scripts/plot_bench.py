#!/usr/bin/python3
"""Draws the papers' figures from bench JSON.

usage: scripts/plot_bench.py bench.json [-o OUTDIR]
From `bench fit2d --json` (the spot-fitting paper, Figs. 2-5, 7, 8): fig2_time_per_call.png,
fig3_fits_per_s.png, fig4_pixels_per_s.png, fig5_speedup_vs_gpufit.png, fig7_errors.png,
fig8_iterations.png. From `bench smre --json` (the SMRE paper, Fig. 8): smre_fig8_runtime.png,
smre_fig8_speedup.png, and with --images DIR given to bench, smre_quality.png.
Needs Debian's python3-matplotlib (and python3-tifffile for the quality images).
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Gpufit 1.2 on one H100, host to host, fits/s (notes/reference.md section 1).
GPUFIT_H100 = {
    5: {10: 7.6e3, 100: 6.6e4, 1000: 6.7e5, 10000: 4.5e6, 100000: 1.17e7, 1000000: 1.38e7},
    7: {10: 6.5e3, 100: 6.0e4, 1000: 4.4e5, 10000: 4.1e6, 100000: 9.0e6, 1000000: 9.9e6},
    9: {10: 1.1e4, 100: 1.4e5, 1000: 1.1e6, 10000: 4.9e6, 100000: 8.0e6, 1000000: 8.0e6},
    13: {10: 1.3e4, 100: 1.1e5, 1000: 9.1e5, 10000: 3.3e6, 100000: 4.4e6, 1000000: 4.4e6},
    16: {10: 1.5e4, 100: 1.5e5, 1000: 9.2e5, 10000: 2.4e6, 100000: 3.4e6, 1000000: 3.4e6},
    32: {10: 1.3e4, 100: 8.5e4, 1000: 5.0e5, 10000: 8.4e5, 100000: 9.2e5, 1000000: 9.2e5},
}


def series(cells, device, timing, key):
    """{size: ([batch...], [value...])} for one device and timing."""
    out = {}
    for c in cells:
        if c["device"] == device and c["timing"] == timing:
            out.setdefault(c["size"], []).append((c["batch"], key(c)))
    return {s: tuple(zip(*sorted(v))) for s, v in sorted(out.items())}


def loglog(ax, data, ylabel, title):
    for size, (x, y) in data.items():
        ax.loglog(x, y, marker="o", ms=3, label=f"{size}x{size}")
    ax.set_xlabel("fits per call")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)


def throughput_figures(doc, outdir):
    cells = doc.get("throughput", [])
    if not cells:
        return []
    devices = sorted({c["device"] for c in cells})
    timings = sorted({c["timing"] for c in cells})
    written = []
    specs = [
        ("fig2_time_per_call.png", "time per call [s]", lambda c: c["latency_us"] * 1e-6),
        ("fig3_fits_per_s.png", "fits per second", lambda c: c["fits_per_s"]),
        ("fig4_pixels_per_s.png", "fitted pixels per second", lambda c: c["fits_per_s"] * c["size"] ** 2),
    ]
    for name, ylabel, key in specs:
        pairs = [(d, t) for d in devices for t in timings if series(cells, d, t, key)]
        fig, axes = plt.subplots(1, len(pairs), figsize=(5 * len(pairs), 4), squeeze=False)
        for ax, (d, t) in zip(axes[0], pairs):
            loglog(ax, series(cells, d, t, key), ylabel, f"{d}, {t} timing")
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, name), dpi=120)
        plt.close(fig)
        written.append(name)
    # Fig. 5: speed-up over Gpufit (host to host) for every GPU.
    gpus = [d for d in devices if d.startswith("cuda")]
    if gpus:
        fig, axes = plt.subplots(1, len(gpus), figsize=(5 * len(gpus), 4), squeeze=False)
        for ax, d in zip(axes[0], gpus):
            data = series(cells, d, "host", lambda c: c["fits_per_s"])
            for size, (x, y) in data.items():
                ref = GPUFIT_H100.get(size)
                if not ref:
                    continue
                pts = [(b, v / ref[b]) for b, v in zip(x, y) if b in ref]
                if pts:
                    bx, by = zip(*pts)
                    ax.semilogx(bx, by, marker="o", ms=3, label=f"{size}x{size}")
            ax.axhline(1, color="k", lw=0.8)
            ax.axhline(5, color="r", lw=0.8, ls="--", label="target 5x")
            ax.set_xlabel("fits per call")
            ax.set_ylabel("fits/s relative to Gpufit 1.2 (H100)")
            ax.set_title(f"{d}, host to host", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "fig5_speedup_vs_gpufit.png"), dpi=120)
        plt.close(fig)
        written.append("fig5_speedup_vs_gpufit.png")
    return written


def accuracy_figures(doc, outdir):
    cells = [c for c in doc.get("accuracy", []) if "x_error_hist" in c]
    written = []
    if cells:
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
        for ax, key, label in zip(axes, ["x", "y", "sigma"], ["|x̂−x|/σ", "|ŷ−y|/σ", "|σ̂−σ|/σ"]):
            for c in cells:
                h = c[f"{key}_error_hist"]
                edges, counts = h["edges"], h["counts"]
                centres = [(a + b) / 2 for a, b in zip(edges[:-1], edges[1:])]
                ax.plot(centres, counts, label=f'{c["device"]} {c["signal"]:g}:{c["background"]:g}')
            ax.set_xlabel(label + " (units of σ_true)")
            ax.set_ylabel("fits")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
        fig.suptitle("Fig. 7: absolute errors, 9x9 ROIs", fontsize=10)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "fig7_errors.png"), dpi=120)
        plt.close(fig)
        written.append("fig7_errors.png")
    cells = [c for c in doc.get("accuracy", []) if "iterations_hist" in c]
    if cells:
        fig, ax = plt.subplots(figsize=(6, 4))
        width = 0.8 / len(cells)
        for k, c in enumerate(cells):
            hist = c["iterations_hist"]
            ax.bar([i + k * width for i in range(len(hist))], hist, width=width,
                   label=f'{c["device"]} {c["signal"]:g}:{c["background"]:g}')
        ax.set_xlabel("Levenberg-Marquardt iterations")
        ax.set_ylabel("fits")
        ax.set_title("Fig. 8: iterations per fit", fontsize=10)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "fig8_iterations.png"), dpi=120)
        plt.close(fig)
        written.append("fig8_iterations.png")
    return written


def smre_figures(doc, outdir):
    """The SMRE paper's Fig. 8: runtime against image edge and speed-up over the CPU exact method."""
    rows = [r for r in doc.get("runtime", []) if "seconds" in r]
    if not rows:
        return []
    variants = sorted({r["variant"] for r in rows})
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for v in variants:
        pts = sorted((r["edge"], r["seconds"], r.get("extrapolated", False)) for r in rows if r["variant"] == v)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=v)
        for e, t, extrapolated in pts:
            if extrapolated:
                ax.plot([e], [t], "o", mfc="white", color="gray")
    iterations = rows[0]["iterations"]
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("image edge (px)")
    ax.set_ylabel(f"seconds for {iterations} ADMM iterations")
    ax.set_title("SMRE runtime (open marks: scaled from fewer iterations)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "smre_fig8_runtime.png"), dpi=120)
    plt.close(fig)
    written = ["smre_fig8_runtime.png"]
    base = {r["edge"]: r["seconds"] for r in rows if r["variant"] == "CPU exact"}
    if base:
        fig, ax = plt.subplots(figsize=(6, 4.5))
        for v in variants:
            pts = sorted((r["edge"], base[r["edge"]] / r["seconds"]) for r in rows if r["variant"] == v and r["edge"] in base)
            if pts and v != "CPU exact":
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=v)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("image edge (px)")
        ax.set_ylabel("speed-up over CPU exact")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "smre_fig8_speedup.png"), dpi=120)
        plt.close(fig)
        written.append("smre_fig8_speedup.png")
    return written


def smre_quality_figure(images_dir, outdir):
    """Truth, measurement and restorations side by side (bench smre --images DIR)."""
    import tifffile

    names = [("truth", "truth.tif")]
    for noise in ("1", "3", "10"):
        for kind in ("measured", "icd", "exact"):
            names.append((f"{kind}, noise {noise}", f"{kind}_noise{noise}.tif"))
    present = [(t, os.path.join(images_dir, f)) for t, f in names if os.path.exists(os.path.join(images_dir, f))]
    if len(present) < 2:
        return []
    cols = 4
    rows = (len(present) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3 * cols, 3 * rows))
    for ax in axes.flat:
        ax.axis("off")
    for ax, (title, path) in zip(axes.flat, present):
        ax.imshow(tifffile.imread(path), cmap="gray", vmin=0, vmax=255)
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "smre_quality.png"), dpi=100)
    plt.close(fig)
    return ["smre_quality.png"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json")
    parser.add_argument("-o", "--outdir", default=".")
    parser.add_argument("--images", help="bench smre --images DIR: also draw the quality images")
    args = parser.parse_args()
    with open(args.json) as f:
        doc = json.load(f)
    os.makedirs(args.outdir, exist_ok=True)
    if doc.get("benchmark") == "smre":
        written = smre_figures(doc, args.outdir)
        if args.images:
            written += smre_quality_figure(args.images, args.outdir)
    else:
        written = throughput_figures(doc, args.outdir) + accuracy_figures(doc, args.outdir)
    if not written:
        print(f"plot_bench: {args.json}: nothing to plot", file=sys.stderr)
        return 3
    for w in written:
        print(os.path.join(args.outdir, w))
    return 0


if __name__ == "__main__":
    sys.exit(main())
