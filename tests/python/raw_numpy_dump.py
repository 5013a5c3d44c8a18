"""Reads a Picasso .raw movie the way Picasso does (numpy, dtype and byte order
from the first YAML document holding Width) and prints it for test_raw.cpp:
a line "frames height width", then one line per frame of space-separated values.
Usage: raw_numpy_dump.py <movie.raw>"""
import os
import sys

import numpy as np
import yaml


def main(path):
    with open(os.path.splitext(path)[0] + ".yaml") as f:
        info = next(d for d in yaml.safe_load_all(f) if isinstance(d, dict) and "Width" in d)
    dtype = np.dtype(info["Data Type"])
    if info.get("Byte Order", "<") == ">":
        dtype = dtype.newbyteorder(">")
    frames, height, width = int(info["Frames"]), int(info["Height"]), int(info["Width"])
    movie = np.fromfile(path, dtype=dtype).reshape(frames, height, width)
    out = [f"{frames} {height} {width}"]
    for frame in movie:
        out.append(" ".join(repr(v) for v in frame.ravel().tolist()))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
