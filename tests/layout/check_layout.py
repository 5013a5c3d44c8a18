#!/usr/bin/env python3
"""Imports run down the house (docs/architecture.md).

Every source file belongs to one layer; a file may include headers of its own
layer or of a layer below it, never above:

  0 base     lib/nanoscopy: core, io, params, sim, cluster, and every domain's
             engines, runners, formats (fit, loc, smre, sofi, frc)
  1 cuda     kernels/ (its headers are included as "fit/…", "common/…")
  2 backend  lib/nanoscopy/backend: the registry
  3 tools    each tool's run logic: cli/, fit2d/, <module>/cli*, and the files
             lib/CMakeLists.txt lists in nanoscopy_tools
  4 bench    lib/nanoscopy/bench
  5 apps     apps/

A .cpp takes its layer from the target lib/CMakeLists.txt (or
kernels/CMakeLists.txt) lists it in; a header takes the layer of the .cpp of
the same name, else its folder's. Also checked: `#if NANOSCOPY_HAVE_CUDA`
appears in the product only in backend/registry.cpp, and no CMakeLists.txt of
lib/ or kernels/ collects sources with file(GLOB).
Usage: check_layout.py SOURCE_DIR
"""
import pathlib
import re
import sys

LAYERS = {"base": 0, "cuda": 1, "backend": 2, "tools": 3, "bench": 4, "apps": 5}
TARGET_LAYER = {"nanoscopy_base": "base", "nanoscopy_backend": "backend", "nanoscopy_tools": "tools",
                "nanoscopy_bench": "bench", "nanoscopy_cuda": "cuda"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def listed_sources(cmake: pathlib.Path, prefix: str) -> dict:
    """file path (relative to the source dir) -> layer, from add_library(<target> STATIC …) lists."""
    out = {}
    text = cmake.read_text()
    for m in re.finditer(r"add_library\((\w+)\s+STATIC\s+([^)]*)\)", text):
        layer = TARGET_LAYER.get(m.group(1))
        if not layer:
            continue
        for src in m.group(2).split():
            out[prefix + src] = layer
    return out


def main() -> int:
    root = pathlib.Path(sys.argv[1]).resolve()
    problems = []
    layer_of = {}
    layer_of.update(listed_sources(root / "lib/CMakeLists.txt", "lib/"))
    layer_of.update(listed_sources(root / "kernels/CMakeLists.txt", "kernels/"))

    files = [p for d in ("lib", "kernels", "apps") for p in (root / d).rglob("*")
             if p.suffix in (".cpp", ".hpp", ".cu", ".cuh", ".in")]
    rel = {p: p.relative_to(root).as_posix() for p in files}

    for p, r in rel.items():
        if p.suffix in (".cpp", ".cu") and r.startswith(("lib/", "kernels/")) and r not in layer_of:
            problems.append(f"{r}: not listed in any library of lib/ or kernels/CMakeLists.txt")

    def layer(r: str) -> str:
        if r in layer_of:
            return layer_of[r]
        for ext in (".cpp", ".cu"):
            twin = re.sub(r"\.(hpp|cuh)$", ext, r)
            if twin in layer_of:
                return layer_of[twin]
        if r.startswith("apps/"):
            return "apps"
        if r.startswith("kernels/"):
            return "cuda"
        part = r.split("/")[2] if r.startswith("lib/nanoscopy/") else ""
        return {"backend": "backend", "cli": "tools", "fit2d": "tools", "bench": "bench"}.get(part, "base")

    for p, r in rel.items():
        mine = layer(r)
        text = p.read_text(errors="replace")
        for inc in INCLUDE.findall(text):
            if inc.startswith("nanoscopy/"):
                target = "lib/" + inc
                if inc in ("nanoscopy/config.hpp", "nanoscopy/commit.hpp"):
                    continue  # generated, base
            else:
                target = "kernels/" + inc
                if not (root / target).exists():
                    continue  # a header of the same folder or a third-party one
            if not (root / target).exists():
                problems.append(f"{r}: includes {inc}, which does not exist")
                continue
            theirs = layer(target)
            if LAYERS[theirs] > LAYERS[mine]:
                problems.append(f"{r} ({mine}) includes {inc} ({theirs}): imports must run down the house")
        if "NANOSCOPY_HAVE_CUDA" in text and re.search(r"#\s*if\s+NANOSCOPY_HAVE_CUDA", text) \
                and r != "lib/nanoscopy/backend/registry.cpp":
            problems.append(f"{r}: `#if NANOSCOPY_HAVE_CUDA` outside the backend registry")

    for cmake in list((root / "lib").rglob("CMakeLists.txt")) + list((root / "kernels").rglob("CMakeLists.txt")):
        if re.search(r"file\s*\(\s*GLOB", cmake.read_text()):
            problems.append(f"{cmake.relative_to(root)}: collects sources with file(GLOB); list them")

    for line in problems:
        print(line)
    print(f"layout: {len(rel)} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
