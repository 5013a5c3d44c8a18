"""Checks a CSV table written by nanoscopy with Python's csv module and pandas.
Usage: table_check_csv.py <file> <rows> <quoted|plain> <separator>
Prints "ok" or exits non-zero with the first difference."""
import csv
import sys

import numpy as np
import pandas as pd

from table_common import DTYPES, LABELS, columns


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def quote(label):
    return '"' + label.replace('"', '""') + '"'


def main():
    path, rows, mode, sep = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    with open(path, newline="") as f:
        text = f.read()
    lines = text.split("\n")
    if lines[-1] != "" or len(lines) != rows + 2:
        fail(f"{len(lines) - 1} lines, expected a header and {rows} rows each ending in a newline")
    if mode == "quoted":
        header = sep.join(quote(l) for l in LABELS)
    else:
        header = sep.join(quote(l) if (sep in l or '"' in l) else l for l in LABELS)
    if lines[0] != header:
        fail(f"header {lines[0]!r}, expected {header!r}")

    # The exact text of every value: plain integers, %.7g for float32, %.15g for float64.
    expected = columns(rows)
    parsed = list(csv.reader(lines[:-1], delimiter=sep))
    if parsed[0] != LABELS:
        fail(f"csv module reads the labels as {parsed[0]}")
    for i in range(rows):
        for c, dt in enumerate(DTYPES):
            v = expected[c][i]
            want = str(int(v)) if dt[1] in "ui" else ("%.7g" % float(v) if dt == "<f4" else "%.15g" % float(v))
            if parsed[i + 1][c] != want:
                fail(f"row {i} column {LABELS[c]!r}: {parsed[i + 1][c]!r}, expected {want!r}")

    df = pd.read_csv(path, sep=sep)
    if list(df.columns) != LABELS:
        fail(f"pandas reads the columns as {list(df.columns)}")
    for c, dt in enumerate(DTYPES):
        got = df[LABELS[c]].to_numpy()
        if dt[1] in "ui":
            if not np.array_equal(got, expected[c].astype(np.int64)):
                fail(f"pandas: column {LABELS[c]!r} differs")
        else:
            rtol = 1e-6 if dt == "<f4" else 1e-14
            if not np.allclose(got, expected[c].astype(np.float64), rtol=rtol, atol=0):
                fail(f"pandas: column {LABELS[c]!r} differs")
    print("ok")


if __name__ == "__main__":
    main()
