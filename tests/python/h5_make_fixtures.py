"""Writes the HDF5 fixtures that tests/test_hdf5.cpp reads, with h5py.

Every image dataset holds a deterministic pattern that the C++ test recomputes:
p(t, y, x) = (131 t + 17 y + 7 x) mod 251, stored as p for unsigned types,
(p mod 200) - 100 for signed types and 0.25 p - 7.5 for floats.
Usage: h5_make_fixtures.py <directory>
"""
import os
import sys

import h5py
import numpy as np

T, Y, X = 5, 6, 7


def pattern(shape, dtype, t_offset=0):
    t, y, x = np.meshgrid(np.arange(shape[0]) + t_offset, np.arange(shape[1]), np.arange(shape[2]), indexing="ij")
    p = (131 * t + 17 * y + 7 * x) % 251
    dtype = np.dtype(dtype)
    if dtype.kind == "u":
        v = p
    elif dtype.kind == "i":
        v = p % 200 - 100
    else:
        v = 0.25 * p - 7.5
    return v.astype(dtype)


def stack(dtype, shape=(T, Y, X), t_offset=0):
    return pattern(shape, dtype, t_offset)


def main(out):
    def path(name):
        return os.path.join(out, name)

    # One file per pixel type, one chunk per frame.
    for dt in ["uint8", "uint16", "int16", "uint32", "int32", "float32", "float64", "int8", "int64", "uint64", "float16"]:
        with h5py.File(path(f"type_{dt}.h5"), "w") as f:
            f.create_dataset("data", data=stack(dt), chunks=(1, Y, X))

    # Storage layouts, all uint16.
    with h5py.File(path("layout_contiguous.h5"), "w") as f:
        f.create_dataset("data", data=stack("uint16"))
        assert f["data"].chunks is None
    with h5py.File(path("layout_chunks_odd.h5"), "w") as f:
        f.create_dataset("data", data=stack("uint16"), chunks=(2, 4, 3))  # chunks straddle frames and edges
    with h5py.File(path("layout_gzip.h5"), "w") as f:
        f.create_dataset("data", data=stack("uint16"), chunks=(3, 6, 7), compression="gzip", compression_opts=6, shuffle=True)
    with h5py.File(path("layout_bigendian.h5"), "w") as f:
        f.create_dataset("data", data=stack(">u2"), chunks=(1, Y, X))
    with h5py.File(path("layout_fletcher.h5"), "w") as f:
        f.create_dataset("data", data=stack("float32"), chunks=(1, Y, X), fletcher32=True)
    with h5py.File(path("layout_lzf.h5"), "w") as f:
        f.create_dataset("data", data=stack("uint16"), chunks=(1, Y, X), compression="lzf")

    # A single 2-D image.
    with h5py.File(path("image2d.h5"), "w") as f:
        f.create_dataset("data", data=stack("float32", (1, Y, X))[0])

    # The common names, each beside a 2-D thumbnail and a 1-D table that must not win.
    for label, name in [("data", "data"), ("ImageData", "ImageData"), ("exported_data", "exported_data"), ("nexus", "entry/data/data")]:
        with h5py.File(path(f"name_{label}.h5"), "w") as f:
            f.create_dataset(name, data=stack("uint16"), chunks=(1, Y, X))
            f.create_dataset("thumbnail", data=np.zeros((4, 4), np.uint8))
            f.create_dataset("timestamps", data=np.arange(T, dtype=np.float64))

    # The only image-like dataset, deep in groups, beside metadata.
    with h5py.File(path("nested_only.h5"), "w") as f:
        f.create_dataset("acquisition/camera/raw/movie", data=stack("int16"), chunks=(1, Y, X))
        f.create_dataset("acquisition/meta/exposure_ms", data=np.array([10.0]))
        f.create_dataset("acquisition/meta/labels", data=np.array([b"a", b"b"]))

    # Two candidates with common names: /data (T frames) and /ImageData (3 frames, shifted pattern).
    with h5py.File(path("two_common.h5"), "w") as f:
        f.create_dataset("data", data=stack("uint16"))
        f.create_dataset("ImageData", data=stack("uint16", (3, Y, X), t_offset=100))
    # Two candidates without common names.
    with h5py.File(path("two_other.h5"), "w") as f:
        f.create_dataset("movie_a", data=stack("uint16"))
        f.create_dataset("group/movie_b", data=stack("float32"))

    # Datasets that are not image stacks.
    with h5py.File(path("rank4.h5"), "w") as f:
        f.create_dataset("data", data=np.zeros((2, 3, 4, 5), np.uint16))
    with h5py.File(path("rank1.h5"), "w") as f:
        f.create_dataset("data", data=np.arange(10, dtype=np.uint16))
    with h5py.File(path("strings.h5"), "w") as f:
        f.create_dataset("data", data=np.array([[b"ab"] * X] * Y))
    with h5py.File(path("compound.h5"), "w") as f:
        f.create_dataset("data", data=np.zeros((Y, X), dtype=[("a", "<f4"), ("b", "<i4")]))
    with h5py.File(path("no_images.h5"), "w") as f:
        f.create_dataset("x", data=np.arange(3.0))
        f.create_dataset("meta/y", data=np.arange(4.0))
    with h5py.File(path("only_groups.h5"), "w") as f:
        f.create_group("empty/group")
    with h5py.File(path("zero_frames.h5"), "w") as f:
        f.create_dataset("data", shape=(0, Y, X), maxshape=(None, Y, X), dtype=np.uint16, chunks=(1, Y, X))

    # Pixel sizes in attributes: on the dataset (nm, Fiji's z,y,x in um) or on the file.
    with h5py.File(path("attr_nm.h5"), "w") as f:
        d = f.create_dataset("data", data=stack("uint16"))
        d.attrs["pixel_size_nm"] = 107.5
    with h5py.File(path("attr_element_size.h5"), "w") as f:
        d = f.create_dataset("data", data=stack("uint16"))
        d.attrs["element_size_um"] = np.array([1.0, 0.16, 0.16], np.float32)
    with h5py.File(path("attr_file_um.h5"), "w") as f:
        f.create_dataset("data", data=stack("uint16"))
        f.attrs["pixel_size_um"] = 0.1
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1])
