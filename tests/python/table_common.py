"""The deterministic table that tests/test_tables.cpp writes (keep the two in step)."""
import numpy as np

LABELS = ["id", "frame", "x [nm]", "y [nm]", 'note "q", c']
DTYPES = ["<u4", "<i4", "<f4", "<f8", "<f4"]


def row(i):
    if i % 10 == 0:
        y = 1.5e-12 * (i + 1)
    elif i % 10 == 1:
        y = 6.02e23 * (i + 1)
    else:
        y = (i * 0.001 - 0.5) * 1e5 / 7.0
    return [i + 1, i // 3 - 5, i * 0.1 + 1.0 / 3.0, y, -float(i) * 2.5e-7]


def columns(rows):
    """The expected values per column, already in the column's type."""
    values = [row(i) for i in range(rows)]
    return [np.array([v[c] for v in values]).astype(DTYPES[c]) for c in range(len(LABELS))]
