"""Reads an SMAP calibration (*_3dcal.mat) written by nanoscopy the way DECODE does
(decode/utils/calibration_io.py: scipy.io.loadmat(..., struct_as_record=False,
squeeze_me=True)['SXY'], then cspline.coeff as a numeric array, cspline.x0, z0, dz) and
checks it against our HDF5 calibration of the same spline (h5py): MATLAB's [Ny, Nx, Nz, 64]
with coefficient pz*16 + px*4 + py against ours [Nx, Ny, Nz, 64] with px*16 + py*4 + pz,
x0 = centre + 1, z0 = focus_index, dz = z_step_nm.
Usage: smap_check_3dcal.py <psf.mat> <psf.h5>
Prints "ok"; exits 77 when python3-scipy is missing, non-zero with the first mismatch."""
import sys

try:
    import scipy.io as sio
except ImportError:
    print("SKIP: python3-scipy is missing (scripts/install-deps installs it)")
    sys.exit(77)
import h5py
import numpy as np


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    mat, h5 = sys.argv[1:3]
    sxy = sio.loadmat(mat, struct_as_record=False, squeeze_me=True)["SXY"]
    cs = sxy.cspline
    coeff = cs.coeff  # DECODE: torch.from_numpy(self.calib_mat.cspline.coeff)
    if not isinstance(coeff, np.ndarray) or coeff.dtype != np.float32:
        fail(f"cspline.coeff is {type(coeff)} {getattr(coeff, 'dtype', None)}, not a float32 array")
    if coeff.ndim != 4 or coeff.shape[3] != 64:
        fail(f"cspline.coeff has shape {coeff.shape}, not (Ny, Nx, Nz, 64)")
    with h5py.File(h5, "r") as f:
        g = f["spline"]
        ours = g["coefficients"][...]
        centre_x, centre_y = float(g.attrs["centre_x"]), float(g.attrs["centre_y"])
        focus, dz = float(g.attrs["focus_index"]), float(g.attrs["z_step_nm"])
    nx, ny, nz, _ = ours.shape
    if coeff.shape[:3] != (ny, nx, nz):
        fail(f"spline_roi_shape {coeff.shape[:3]}, expected {(ny, nx, nz)}")
    # ours[i, j, k, a, b, e] (x power a, y power b, z power e) -> mat[j, i, k, e, a, b]
    want = ours.reshape(nx, ny, nz, 4, 4, 4).transpose(1, 0, 2, 5, 3, 4).reshape(ny, nx, nz, 64)
    if not np.array_equal(coeff, want):
        idx = np.argwhere(coeff != want)[0]
        fail(f"coefficient {tuple(idx)} is {coeff[tuple(idx)]}, expected {want[tuple(idx)]}")
    ref0 = (cs.x0 - 1, cs.x0 - 1, cs.z0)  # DECODE's reference point
    if ref0[0] != centre_x or ref0[1] != centre_y or ref0[2] != focus:
        fail(f"DECODE's ref0 {ref0}, expected {(centre_x, centre_y, focus)}")
    if cs.dz != dz:
        fail(f"dz {cs.dz}, expected {dz}")
    print("ok")


if __name__ == "__main__":
    main()
