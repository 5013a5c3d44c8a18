#include "nanoscopy/io/spline_calibration_formats.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "nanoscopy/config.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/spline_psf_io.hpp"
#include "nanoscopy/io/hdf5_util.hpp"

#if NANOSCOPY_HAVE_MATIO
#include <matio.h>
#endif

namespace nanoscopy {
namespace {

namespace h5 = detail::h5;

bool starts_with_matlab_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[6] = {};
  return in.read(head, 6) && std::memcmp(head, "MATLAB", 6) == 0;
}

std::string lower_extension(const std::string& path) {
  std::string e = std::filesystem::path(path).extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return e;
}

void check_psf(const SplinePsf& psf, const std::string& path) {
  for (std::size_t i = 0; i < psf.coefficients.size(); ++i)
    if (!std::isfinite(psf.coefficients[i]))
      throw InputError(path, "the spline coefficients hold a NaN or infinite value (coefficient " + std::to_string(i) + ")");
  if (!std::isfinite(psf.centre_x) || !std::isfinite(psf.centre_y) || !std::isfinite(psf.focus_index) ||
      !(psf.z_step_nm > 0) || !std::isfinite(psf.z_step_nm) || !(psf.pixel_size_nm > 0))
    throw InputError(path, "the spline's centre, focus, z step or pixel size is not a finite (positive) number");
}

#if NANOSCOPY_HAVE_MATIO
struct MatClose {
  void operator()(mat_t* m) const { Mat_Close(m); }
};
struct VarFree {
  void operator()(matvar_t* v) const { Mat_VarFree(v); }
};
using MatFile = std::unique_ptr<mat_t, MatClose>;
using MatVar = std::unique_ptr<matvar_t, VarFree>;

std::size_t element_count(const matvar_t* v) {
  std::size_t n = 1;
  for (int i = 0; i < v->rank; ++i) n *= v->dims[i];
  return n;
}

// One real number from a numeric field of `s` (element `index` of a struct array).
double scalar_field(matvar_t* s, const char* name, const std::string& path, const std::string& where) {
  matvar_t* v = Mat_VarGetStructFieldByName(s, name, 0);
  if (!v || !v->data || element_count(v) < 1 || v->isComplex)
    throw InputError(path, where + "." + name + " is missing or not a number");
  double x = NAN;
  switch (v->data_type) {
    case MAT_T_DOUBLE: x = static_cast<const double*>(v->data)[0]; break;
    case MAT_T_SINGLE: x = static_cast<const float*>(v->data)[0]; break;
    case MAT_T_INT32: x = static_cast<const std::int32_t*>(v->data)[0]; break;
    case MAT_T_UINT8: x = static_cast<const std::uint8_t*>(v->data)[0]; break;
    case MAT_T_INT16: x = static_cast<const std::int16_t*>(v->data)[0]; break;
    case MAT_T_UINT16: x = static_cast<const std::uint16_t*>(v->data)[0]; break;
    default: throw InputError(path, where + "." + name + " is not a real number");
  }
  if (!std::isfinite(x)) throw InputError(path, where + "." + name + " is not finite");
  return x;
}

MatVar double_var(const char* name, std::vector<double> values) {
  size_t dims[2] = {1, values.size()};
  return MatVar(Mat_VarCreate(name, MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dims, values.data(), 0));
}
#endif

}  // namespace

bool smap_format_available() { return NANOSCOPY_HAVE_MATIO != 0; }

SplinePsf read_smap_calibration(const std::string& path) {
#if NANOSCOPY_HAVE_MATIO
  if (!std::filesystem::exists(path)) throw InputError(path, "no such file");
  MatFile mat(Mat_Open(path.c_str(), MAT_ACC_RDONLY));
  if (!mat) throw InputError(path, "not a MATLAB file (SMAP's *_3dcal.mat was expected)");
  MatVar sxy(Mat_VarRead(mat.get(), "SXY"));
  if (!sxy) throw InputError(path, "no variable SXY: not an SMAP 3D calibration (*_3dcal.mat)");
  if (sxy->class_type != MAT_C_STRUCT || element_count(sxy.get()) < 1)
    throw InputError(path, "SXY is not a struct");
  matvar_t* cs = Mat_VarGetStructFieldByName(sxy.get(), "cspline", 0);
  if (!cs || cs->class_type != MAT_C_STRUCT)
    throw InputError(path, "SXY(1) has no cspline struct: a calibration without the cubic spline (Gaussian only?)");
  matvar_t* coeff = Mat_VarGetStructFieldByName(cs, "coeff", 0);
  if (!coeff) throw InputError(path, "SXY(1).cspline has no coeff");
  matvar_t* c = coeff;
  if (coeff->class_type == MAT_C_CELL) {
    if (element_count(coeff) < 1) throw InputError(path, "SXY(1).cspline.coeff is an empty cell");
    c = Mat_VarGetCell(coeff, 0);
    if (!c) throw InputError(path, "SXY(1).cspline.coeff{1} cannot be read");
  }
  if (c->rank != 4 || c->dims[3] != 64 || c->dims[0] < 1 || c->dims[1] < 1 || c->dims[2] < 1 || c->isComplex ||
      !c->data || (c->data_type != MAT_T_SINGLE && c->data_type != MAT_T_DOUBLE))
    throw InputError(path, "SXY(1).cspline.coeff{1} is not a real single/double array of size [Ny, Nx, Nz, 64]");
  const std::size_t ny = c->dims[0], nx = c->dims[1], nz = c->dims[2];
  SplinePsf psf;
  psf.source = path;
  psf.size_x = static_cast<int>(nx);
  psf.size_y = static_cast<int>(ny);
  psf.size_z = static_cast<int>(nz);
  psf.coefficients.resize(nx * ny * nz * 64);
  const auto value = [&](std::size_t linear) {
    return c->data_type == MAT_T_SINGLE ? static_cast<const float*>(c->data)[linear]
                                        : static_cast<float>(static_cast<const double*>(c->data)[linear]);
  };
  for (std::size_t i = 0; i < nx; ++i)
    for (std::size_t j = 0; j < ny; ++j)
      for (std::size_t k = 0; k < nz; ++k)
        for (int a = 0; a < 4; ++a)       // x power
          for (int b = 0; b < 4; ++b)     // y power
            for (int e = 0; e < 4; ++e) {  // z power
              const std::size_t q = static_cast<std::size_t>(e * 16 + a * 4 + b);
              psf.coefficients[psf.interval_offset(static_cast<int>(i), static_cast<int>(j), static_cast<int>(k)) +
                               static_cast<std::size_t>(a * 16 + b * 4 + e)] = value(j + ny * (i + nx * (k + nz * q)));
            }
  const double x0 = scalar_field(cs, "x0", path, "SXY(1).cspline");
  psf.centre_x = psf.centre_y = x0 - 1;
  psf.focus_index = scalar_field(cs, "z0", path, "SXY(1).cspline");
  psf.z_step_nm = scalar_field(cs, "dz", path, "SXY(1).cspline");
  psf.voxel_xy_px = 1;
  psf.pixel_size_nm = 100;
  if (MatVar params{Mat_VarRead(mat.get(), "parameters")}; params && params->class_type == MAT_C_STRUCT) {
    if (Mat_VarGetStructFieldByName(params.get(), "pixelsize_nm", 0))
      psf.pixel_size_nm = scalar_field(params.get(), "pixelsize_nm", path, "parameters");
    else if (Mat_VarGetStructFieldByName(params.get(), "cam_pixelsize_um", 0))
      psf.pixel_size_nm = 1000 * scalar_field(params.get(), "cam_pixelsize_um", path, "parameters");
  }
  check_psf(psf, path);
  return psf;
#else
  throw InputError(path, "this build cannot read MATLAB files (SMAP's *_3dcal.mat): it was configured without "
                         "libmatio (Debian: libmatio-dev; then reconfigure)");
#endif
}

void write_smap_calibration(const std::string& path, const SplinePsf& psf) {
#if NANOSCOPY_HAVE_MATIO
  if (psf.voxel_xy_px != 1)
    throw UsageError(path, "SMAP's calibration has one camera pixel per voxel; this spline has " +
                               std::to_string(psf.voxel_xy_px) + " (write it as psf.h5)");
  if (psf.centre_x != psf.centre_y)
    throw UsageError(path, "SMAP's calibration has one centre x0 for x and y; this spline's are " +
                               std::to_string(psf.centre_x) + " and " + std::to_string(psf.centre_y) +
                               " (write it as psf.h5)");
  const auto nx = static_cast<std::size_t>(psf.size_x), ny = static_cast<std::size_t>(psf.size_y),
             nz = static_cast<std::size_t>(psf.size_z);
  if (psf.coefficients.size() != nx * ny * nz * 64) throw UsageError(path, "the spline's coefficients do not match its size");
  std::vector<float> m(psf.coefficients.size());
  for (std::size_t i = 0; i < nx; ++i)
    for (std::size_t j = 0; j < ny; ++j)
      for (std::size_t k = 0; k < nz; ++k)
        for (int a = 0; a < 4; ++a)
          for (int b = 0; b < 4; ++b)
            for (int e = 0; e < 4; ++e)
              m[j + ny * (i + nx * (k + nz * static_cast<std::size_t>(e * 16 + a * 4 + b)))] =
                  psf.coefficients[psf.interval_offset(static_cast<int>(i), static_cast<int>(j), static_cast<int>(k)) +
                                   static_cast<std::size_t>(a * 16 + b * 4 + e)];
  AtomicOutput out(path);
  {
    MatFile mat(Mat_CreateVer(out.temp_path().c_str(), "MATLAB 5.0 MAT-file, written by nanoscopy fit2d calibrate",
                              MAT_FT_MAT5));
    if (!mat) throw OutputError(path, "cannot create the MATLAB file");
    size_t cdims[4] = {ny, nx, nz, 64};
    matvar_t* array = Mat_VarCreate(nullptr, MAT_C_SINGLE, MAT_T_SINGLE, 4, cdims, m.data(), 0);
    size_t one[2] = {1, 1};
    matvar_t* cell = Mat_VarCreate("coeff", MAT_C_CELL, MAT_T_CELL, 2, one, nullptr, 0);
    Mat_VarSetCell(cell, 0, array);
    const char* cs_fields[] = {"coeff", "x0", "z0", "dz", "mirror", "normf"};
    matvar_t* cs = Mat_VarCreateStruct("cspline", 2, one, cs_fields, 6);
    Mat_VarSetStructFieldByName(cs, "coeff", 0, cell);
    Mat_VarSetStructFieldByName(cs, "x0", 0, double_var("x0", {psf.centre_x + 1}).release());
    Mat_VarSetStructFieldByName(cs, "z0", 0, double_var("z0", {psf.focus_index}).release());
    Mat_VarSetStructFieldByName(cs, "dz", 0, double_var("dz", {psf.z_step_nm}).release());
    Mat_VarSetStructFieldByName(cs, "mirror", 0, double_var("mirror", {0}).release());
    Mat_VarSetStructFieldByName(cs, "normf", 0, double_var("normf", {1}).release());
    const char* sxy_fields[] = {"cspline"};
    MatVar sxy(Mat_VarCreateStruct("SXY", 2, one, sxy_fields, 1));
    Mat_VarSetStructFieldByName(sxy.get(), "cspline", 0, cs);
    const char* p_fields[] = {"pixelsize_nm", "cam_pixelsize_um", "dz"};
    MatVar params(Mat_VarCreateStruct("parameters", 2, one, p_fields, 3));
    Mat_VarSetStructFieldByName(params.get(), "pixelsize_nm", 0, double_var("pixelsize_nm", {psf.pixel_size_nm}).release());
    Mat_VarSetStructFieldByName(params.get(), "cam_pixelsize_um", 0,
                                double_var("cam_pixelsize_um", {psf.pixel_size_nm / 1000, psf.pixel_size_nm / 1000}).release());
    Mat_VarSetStructFieldByName(params.get(), "dz", 0, double_var("dz", {psf.z_step_nm}).release());
    if (Mat_VarWrite(mat.get(), sxy.get(), MAT_COMPRESSION_ZLIB) != 0 ||
        Mat_VarWrite(mat.get(), params.get(), MAT_COMPRESSION_ZLIB) != 0)
      throw OutputError(path, "cannot write the MATLAB variables (disk full?)");
  }
  out.commit();
#else
  throw OutputError(path, "this build cannot write MATLAB files (SMAP's *_3dcal.mat): it was configured without "
                          "libmatio (Debian: libmatio-dev; then reconfigure), write psf.h5 instead");
#endif
}

SplinePsf read_picasso_spline_calibration(const std::string& path, double* magnification_factor) {
  h5::silence_errors();
  if (!looks_like_hdf5(path)) throw InputError(path, "not an HDF5 file (Picasso's spline calibration was expected)");
  h5::Id access = h5::read_access_plist();
  h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get()));
  if (!file.valid()) throw InputError(path, "cannot open the HDF5 file: " + h5::last_error());
  if (H5Lexists(file.get(), "coefficients", H5P_DEFAULT) <= 0 || H5Aexists(file.get(), "metadata") <= 0)
    throw InputError(path, "no /coefficients dataset and metadata attribute: not a Picasso spline calibration");
  std::string text;
  {
    h5::Id attr = h5::attribute(H5Aopen(file.get(), "metadata", H5P_DEFAULT));
    h5::Id type = h5::type(attr.valid() ? H5Aget_type(attr.get()) : H5I_INVALID_HID);
    if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING)
      throw InputError(path, "the metadata attribute is not a string");
    if (H5Tis_variable_str(type.get()) > 0) {
      h5::Id mem = h5::type(H5Tcopy(H5T_C_S1));
      H5Tset_size(mem.get(), H5T_VARIABLE);
      H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
      char* s = nullptr;
      if (H5Aread(attr.get(), mem.get(), &s) < 0 || !s) throw InputError(path, "cannot read the metadata attribute");
      text = s;
      H5free_memory(s);
    } else {
      text.assign(H5Tget_size(type.get()), '\0');
      if (H5Aread(attr.get(), type.get(), text.data()) < 0) throw InputError(path, "cannot read the metadata attribute");
      text.resize(std::strlen(text.c_str()));
    }
  }
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw InputError(path, std::string("the metadata attribute is not JSON: ") + e.what());
  }
  const auto number = [&](const char* key) {
    if (!meta.contains(key) || !meta[key].is_number()) throw InputError(path, std::string("metadata has no number ") + key);
    const double v = meta[key].get<double>();
    if (!std::isfinite(v)) throw InputError(path, std::string("metadata ") + key + " is not finite");
    return v;
  };
  const std::string model = meta.value("model", std::string());
  if (model != "spline-3d")
    throw InputError(path, "a Picasso \"" + model + "\" calibration: only \"spline-3d\" has z (spline-2d is one plane)");
  if (meta.contains("oversampling") && number("oversampling") != 1)
    throw InputError(path, "oversampling " + std::to_string(number("oversampling")) + ": only 1 (camera pixels) is known");
  if (!meta.contains("n_intervals") || !meta["n_intervals"].is_array() || meta["n_intervals"].size() != 3)
    throw InputError(path, "metadata n_intervals is not [nx, ny, nz]");
  std::array<std::int64_t, 3> n{};
  for (int a = 0; a < 3; ++a) {
    const auto& v = meta["n_intervals"][static_cast<std::size_t>(a)];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > 100000)
      throw InputError(path, "metadata n_intervals is not three positive integers");
    n[static_cast<std::size_t>(a)] = v.get<std::int64_t>();
  }
  const std::int64_t nix = n[0], niy = n[1], niz = n[2];
  h5::Id data = h5::dataset(H5Dopen2(file.get(), "coefficients", H5P_DEFAULT));
  h5::Id space = h5::space(data.valid() ? H5Dget_space(data.get()) : H5I_INVALID_HID);
  if (!space.valid() || H5Sget_simple_extent_npoints(space.get()) != nix * niy * niz * 64)
    throw InputError(path, "/coefficients holds " +
                               std::to_string(space.valid() ? H5Sget_simple_extent_npoints(space.get()) : 0) +
                               " values, not 64 × " + std::to_string(nix) + " × " + std::to_string(niy) + " × " +
                               std::to_string(niz) + " (n_intervals)");
  if (!h5::stores_its_data(data.get())) throw InputError(path, "/coefficients declares more data than the file holds");
  std::vector<float> flat(static_cast<std::size_t>(nix * niy * niz * 64));
  if (H5Dread(data.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, flat.data()) < 0)
    throw InputError(path, "cannot read /coefficients: " + h5::last_error());
  SplinePsf psf;
  psf.source = path;
  psf.size_x = static_cast<int>(nix);
  psf.size_y = static_cast<int>(niy);
  psf.size_z = static_cast<int>(niz);
  psf.coefficients.resize(flat.size());
  for (std::int64_t iz = 0; iz < niz; ++iz)
    for (std::int64_t iy = 0; iy < niy; ++iy)
      for (std::int64_t ix = 0; ix < nix; ++ix) {
        const float* src = flat.data() + ((iz * niy + iy) * nix + ix) * 64;
        float* dst = psf.coefficients.data() + psf.interval_offset(static_cast<int>(ix), static_cast<int>(iy),
                                                                   static_cast<int>(iz));
        for (int pz = 0; pz < 4; ++pz)
          for (int py = 0; py < 4; ++py)
            for (int pxp = 0; pxp < 4; ++pxp) dst[pxp * 16 + py * 4 + pz] = src[pz * 16 + py * 4 + pxp];
      }
  psf.voxel_xy_px = 1;
  psf.centre_x = 0.5 * static_cast<double>(nix);  // lateral_centered: the box centre, (n_data − 1)/2
  psf.centre_y = 0.5 * static_cast<double>(niy);
  psf.focus_index = number("z_center");
  psf.z_step_nm = number("z_step_nm");
  psf.pixel_size_nm = meta.contains("pixelsize") ? number("pixelsize") : 130;  // Picasso's own default
  if (magnification_factor) *magnification_factor = meta.contains("magnification_factor") ? number("magnification_factor") : 1;
  check_psf(psf, path);
  return psf;
}

SplinePsf read_spline_any(const std::string& path) {
  if (!std::filesystem::exists(path)) throw InputError(path, "no such file");
  if (starts_with_matlab_header(path)) return read_smap_calibration(path);
  if (looks_like_hdf5(path)) {
    bool ours = false;
    {
      h5::silence_errors();
      h5::Id access = h5::read_access_plist();
      h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get()));
      if (!file.valid()) throw InputError(path, "cannot open the HDF5 file: " + h5::last_error());
      ours = H5Lexists(file.get(), "spline", H5P_DEFAULT) > 0;
      if (!ours && H5Lexists(file.get(), "coefficients", H5P_DEFAULT) <= 0)
        throw InputError(path, "an HDF5 file that is no spline calibration: neither ours (/spline) nor Picasso's "
                               "(/coefficients)");
    }
    return ours ? read_spline_calibration(path) : read_picasso_spline_calibration(path);
  }
  if (lower_extension(path) == ".mat") return read_smap_calibration(path);
  throw InputError(path, "not a spline calibration: neither HDF5 (ours, Picasso's) nor a MATLAB file (SMAP's)");
}

void write_spline_any(const std::string& path, const SplinePsf& psf, const std::vector<float>* volume) {
  if (lower_extension(path) == ".mat") write_smap_calibration(path, psf);
  else write_spline_calibration(path, psf, volume);
}

}  // namespace nanoscopy
