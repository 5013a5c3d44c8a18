#!/usr/bin/env python3
"""Regenerate Picasso 0.10.3 reference localization files by running
Picasso's OWN command-line entry point (picasso.__main__.main) on
Picasso's test movie picasso_testdata.raw (+ .yaml).

Produces, in the working directory (WORKDIR, default: this file's folder):
  picasso_testdata_mle_locs.hdf5 / .yaml       (picasso localize -a mle)
  picasso_testdata_lq_locs.hdf5  / .yaml       (picasso localize -a lq)
  picasso_testdata_mle_locs_link.hdf5 / .yaml  (picasso link, defaults)

Requirements: Python 3.10+ with numpy, scipy, pandas, h5py, pyyaml,
matplotlib, tifffile; the Picasso source tree of tag v0.10.3 (commit
96e0da51efccfbb5362a0881db5ac4c7d19e8976), e.g.
    git --git-dir=<picasso.git> archive v0.10.3 | tar -x -C src
given by PICASSO_SRC (default: ./src). If numba / tqdm / PyQt6 / ... are
missing, the stand-ins below are used (each explains why it cannot change a result); if they are all
installed, nothing is stubbed and Picasso runs exactly as installed.

Usage:
    PICASSO_SRC=/path/to/picasso-v0.10.3 python3 make_picasso_refs.py [WORKDIR]
"""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import threading
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
WORKDIR = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else HERE)
PICASSO_SRC = os.path.abspath(os.environ.get("PICASSO_SRC", os.path.join(HERE, "src")))

# Camera parameters. The movie's yaml (written by "Picasso simulate") has no
# Baseline / Sensitivity / Gain / Qe entries -> Picasso CLI defaults
# (-bl 0 -s 1 -ga 1 -qe 1). It does have "Camera.Pixelsize: 160" -> -px 160.
CAMERA_ARGS = ["-bl", "0", "-s", "1", "-ga", "1", "-qe", "1", "-px", "160"]
# -d 0: the CLI default (-d 1000) would additionally try an RCC undrift
# (written to a separate *_undrift file, after *_locs.hdf5 is saved);
# not wanted here, so it is switched off. It does not affect *_locs.hdf5.
LOCALIZE_MLE = ["localize", "picasso_testdata.raw", "-a", "mle", "-b", "7",
                "-g", "5000", *CAMERA_ARGS, "-d", "0", "-sf", "_mle"]
LOCALIZE_LQ = ["localize", "picasso_testdata.raw", "-a", "lq", "-b", "7",
               "-g", "5000", *CAMERA_ARGS, "-d", "0", "-sf", "_lq"]
LINK = ["link", "picasso_testdata_mle_locs.hdf5"]  # defaults: -d 1.0 -t 1


# ---------------------------------------------------------------- stand-ins
def _have(mod):
    try:
        return importlib.util.find_spec(mod) is not None
    except (ImportError, ValueError):
        return False


def _passthrough_decorator(*args, **kwargs):
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]  # bare @numba.njit

    def deco(func):  # @numba.jit(nopython=True, ...) etc.
        return func

    return deco


def _make_numba_stub():
    m = types.ModuleType("numba")
    m.__doc__ = "pass-through stand-in: decorators return the Python function"
    for name in ("jit", "njit", "vectorize", "guvectorize", "generated_jit",
                 "cfunc", "stencil"):
        setattr(m, name, _passthrough_decorator)
    m.prange = range
    m.get_num_threads = lambda: 1
    m.set_num_threads = lambda n: None
    m.cuda = types.SimpleNamespace(jit=_passthrough_decorator,
                                   is_available=lambda: False)
    return m


class _Tqdm:
    """progress display only"""

    def __init__(self, iterable=None, total=None, **kw):
        self.iterable, self.total, self.n = iterable, total, 0

    def __iter__(self):
        for item in self.iterable:
            yield item
            self.n += 1

    def __len__(self):
        return len(self.iterable) if self.iterable is not None else (self.total or 0)

    def update(self, k=1):
        self.n += k

    def close(self):
        pass

    def set_description(self, *a, **k):
        pass

    def set_postfix(self, *a, **k):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _make_tqdm_stub():
    m = types.ModuleType("tqdm")
    m.tqdm = _Tqdm
    m.trange = lambda *a, **k: _Tqdm(range(*a), **k)
    return m


class _DummyMeta(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Dummy

    def __or__(cls, other):
        return cls

    __ror__ = __or__


class Dummy(metaclass=_DummyMeta):
    """Inert placeholder for any attribute of a stubbed (unused) package."""

    def __init__(self, *a, **k):
        pass

    def __call__(self, *a, **k):
        return Dummy()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Dummy()


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Dummy


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, tops):
        self.tops = set(tops)

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] in self.tops:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        m = _StubModule(spec.name)
        m.__path__ = []
        return m

    def exec_module(self, module):
        pass


STUBBED = []


def install_standins():
    if "numba" not in sys.modules and not _have("numba"):
        sys.modules["numba"] = _make_numba_stub()
        STUBBED.append("numba (pass-through decorators)")
    if not _have("tqdm"):
        sys.modules["tqdm"] = _make_tqdm_stub()
        STUBBED.append("tqdm (no-op progress bar)")
    if not _have("requests"):
        # picasso.updater's update check (network; none here): any request
        # fails, which updater.get_latest_version catches -> "no update".
        m = types.ModuleType("requests")

        def _no_network(*a, **k):
            raise OSError("no network (stand-in for requests)")

        m.get = _no_network
        sys.modules["requests"] = m
        STUBBED.append("requests (every request fails -> no update notice)")
    # imported at module level by picasso.io/lib/render/localize/clusterer/
    # masking, never called on the localize(.raw)/link path:
    probes = {"PyQt6": "PyQt6", "playsound3": "playsound3", "dask": "dask",
              "sqlalchemy": "sqlalchemy", "nd2": "nd2",
              "imageio": "imageio.v2", "sklearn": "sklearn",
              "statsmodels": "statsmodels"}
    unused = [t for t, probe in probes.items() if not _have(probe)]
    if unused:
        sys.meta_path.insert(0, _Finder(unused))
        STUBBED.append("inert import stubs: " + ", ".join(unused))


def install_read_hdf_shim():
    """picasso.io.load_locs reads with pandas.read_hdf(path, key="locs"),
    which needs PyTables. Without PyTables, read the same compound HDF5
    dataset with h5py into the same DataFrame (one column per field, same
    dtypes, index 0..n-1, as pandas' GenericTable reader does)."""
    if _have("tables"):
        return
    import h5py
    import pandas as pd

    def read_hdf(path, key=None, **kw):
        with h5py.File(path, "r") as f:
            return pd.DataFrame(f[key][...])

    pd.read_hdf = read_hdf
    STUBBED.append("pandas.read_hdf -> h5py reader (PyTables missing)")


def install_gaussmle_completion_wait():
    """localize._fit2d_gaussmle polls `current[0] < N` (the index of the next
    spot to be *claimed*) and then reads the result arrays, so the last
    spot(s) could still be in flight. With numba that window is
    microseconds; in pure Python it is ~a fit's duration. Wait for the
    ThreadPoolExecutor workers (Picasso's own, running Picasso's fit) to
    finish before handing back; the computation itself is untouched."""
    from picasso import gaussmle

    original = gaussmle.gaussmle_async

    def gaussmle_async(*args, **kwargs):
        before = set(threading.enumerate())
        result = original(*args, **kwargs)
        for t in set(threading.enumerate()) - before:
            t.join()
        return result

    gaussmle.gaussmle_async = gaussmle_async
    STUBBED.append("gaussmle_async waits for its worker threads")


def run_cli(argv):
    from picasso.__main__ import main

    print("\n$ picasso " + " ".join(argv), flush=True)
    t0 = time.time()
    sys.argv = ["picasso"] + list(argv)
    main()
    print(f"[{time.time() - t0:.1f} s]", flush=True)


def main():
    # Picasso's identify_async reads/writes ~/.picasso/settings.yaml:
    # keep that out of the real home directory.
    os.environ["HOME"] = os.path.join(WORKDIR, ".picasso-home")
    os.makedirs(os.environ["HOME"], exist_ok=True)
    sys.path.insert(0, PICASSO_SRC)
    # Optional extra site dir with real numba/llvmlite/tqdm, e.g. Debian 12's
    # python3-numba 0.56.4, python3-llvmlite 0.39.1, python3-tqdm 4.64.1
    # unpacked with `apt-get download` + `dpkg -x` (nothing installed):
    extra = os.environ.get(
        "PICASSO_EXTRA_SITE",
        os.path.join(HERE, "debroot", "usr", "lib", "python3", "dist-packages"))
    if os.environ.get("PICASSO_PURE_PYTHON") == "1":
        extra = ""  # force the numba pass-through stand-in (comparison run)
        sys.modules["numba"] = _make_numba_stub()
        STUBBED.append("numba (pass-through decorators)")
    if extra and os.path.isdir(extra):
        sys.path.insert(1, extra)
    install_standins()
    install_read_hdf_shim()
    import picasso

    assert picasso.__version__ == "0.10.3", picasso.__version__
    print("picasso", picasso.__version__, "from", os.path.dirname(picasso.__file__))
    install_gaussmle_completion_wait()
    import numba, tqdm
    print("numba:", getattr(numba, "__version__", "stand-in"),
          "| tqdm:", getattr(tqdm, "__version__", "stand-in"))
    print("stand-ins:", STUBBED or "none")
    os.chdir(WORKDIR)
    for argv in (LOCALIZE_MLE, LOCALIZE_LQ, LINK):
        if argv is LINK and not hasattr(numba, "__version__"):
            # postprocess._get_next_loc_index_in_link_group reads its loop
            # variable `min_index` after an empty `for` loop (last loc);
            # compiled by Numba that is 0, in plain CPython it raises
            # UnboundLocalError. So link needs the real numba.
            print("\nSKIPPED picasso link: needs real numba (see comment)")
            continue
        run_cli(argv)


if __name__ == "__main__":
    main()
