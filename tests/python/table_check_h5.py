"""Checks an HDF5 table written by nanoscopy with h5py (as Picasso reads its
locs: h5py.File(p)[name][...]) and, when PyTables is installed, pandas.read_hdf.
Usage: table_check_h5.py <file> <dataset> <rows>
Prints "ok" (or "ok (pandas skipped: ...)") or exits non-zero."""
import sys

import h5py
import numpy as np

from table_common import DTYPES, LABELS, columns


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    path, name, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
    expected = columns(rows)
    with h5py.File(path, "r") as f:
        d = f[name]
        if d.ndim != 1 or d.shape != (rows,):
            fail(f"shape {d.shape}, expected ({rows},)")
        if d.maxshape != (None,):
            fail(f"maxshape {d.maxshape}, expected (None,): the table must be extensible")
        if d.chunks is None:
            fail("not chunked")
        if d.compression is not None:
            fail(f"compressed with {d.compression}")
        names = list(d.dtype.names)
        if names != LABELS:
            fail(f"fields {names}, expected {LABELS}")
        for c, dt in enumerate(DTYPES):
            if d.dtype[c] != np.dtype(dt) or d.dtype[c].str != dt:
                fail(f"field {LABELS[c]!r} is {d.dtype[c].str}, expected {dt}")
        locs = f[name][...]  # Picasso's way
        if not isinstance(locs, np.ndarray) or locs.dtype.names is None:
            fail("not a structured array")
        for c in range(len(LABELS)):
            if not np.array_equal(locs[LABELS[c]], expected[c]):
                i = int(np.argmax(locs[LABELS[c]] != expected[c]))
                fail(f"field {LABELS[c]!r} row {i}: {locs[LABELS[c]][i]!r}, expected {expected[c][i]!r}")
    try:
        import tables  # noqa: F401  (pandas.read_hdf needs PyTables)
    except ImportError as e:
        print(f"ok (pandas skipped: {e})")
        return
    import warnings

    import pandas as pd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTables' NaturalNameWarning for labels such as "x [nm]"
        df = pd.read_hdf(path, key=name)
    if list(df.columns) != LABELS or len(df) != rows:
        fail(f"pandas reads columns {list(df.columns)} and {len(df)} rows")
    for c in range(len(LABELS)):
        if not np.array_equal(df[LABELS[c]].to_numpy(), expected[c]):
            fail(f"pandas: column {LABELS[c]!r} differs")
    print("ok")


if __name__ == "__main__":
    main()
