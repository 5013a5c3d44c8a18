#include "nanoscopy/core/spline_psf_io.hpp"

#include <hdf5.h>

#include <array>
#include <cmath>
#include <cstring>
#include <fstream>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/io/hdf5_util.hpp"

namespace nanoscopy {
namespace h5 = detail::h5;
namespace {

constexpr const char* kAttributes[] = {"voxel_xy_px", "z_step_nm", "centre_x", "centre_y", "focus_index",
                                       "pixel_size_nm"};

double* attribute_slot(SplinePsf& psf, int i) {
  double* slots[] = {&psf.voxel_xy_px, &psf.z_step_nm, &psf.centre_x, &psf.centre_y, &psf.focus_index,
                     &psf.pixel_size_nm};
  return slots[i];
}

// A scalar numeric attribute of `object`; InputError when missing or not one number.
double read_number(hid_t object, const char* name, const std::string& path) {
  if (H5Aexists(object, name) <= 0)
    throw InputError(path, std::string("the spline calibration has no attribute ") + name);
  h5::Id attr = h5::attribute(H5Aopen(object, name, H5P_DEFAULT));
  h5::Id space = h5::space(attr.valid() ? H5Aget_space(attr.get()) : H5I_INVALID_HID);
  h5::Id type = h5::type(attr.valid() ? H5Aget_type(attr.get()) : H5I_INVALID_HID);
  double value = 0;
  if (!space.valid() || !type.valid() || H5Tget_class(type.get()) == H5T_STRING ||
      H5Sget_simple_extent_npoints(space.get()) != 1 || H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value) < 0)
    throw InputError(path, std::string("the attribute ") + name + " of the spline calibration is not one number");
  return value;
}

// A string attribute (variable or fixed length); "" when missing or not a string.
std::string read_text(hid_t object, const char* name) {
  if (H5Aexists(object, name) <= 0) return "";
  h5::Id attr = h5::attribute(H5Aopen(object, name, H5P_DEFAULT));
  h5::Id type = h5::type(attr.valid() ? H5Aget_type(attr.get()) : H5I_INVALID_HID);
  if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING) return "";
  if (H5Tis_variable_str(type.get()) > 0) {
    h5::Id mem = h5::type(H5Tcopy(H5T_C_S1));
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));  // HDF5 converts no character set into another
    char* text = nullptr;
    if (H5Aread(attr.get(), mem.get(), &text) < 0 || !text) return "";
    std::string out(text);
    H5free_memory(text);
    return out;
  }
  const std::size_t size = H5Tget_size(type.get());
  std::string out(size, '\0');
  if (H5Aread(attr.get(), type.get(), out.data()) < 0) return "";
  out.resize(std::strlen(out.c_str()));
  return out;
}

}  // namespace

bool looks_like_hdf5(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char sig[8] = {};
  return in.read(sig, 8) && std::memcmp(sig, "\x89HDF\r\n\x1a\n", 8) == 0;
}

SplinePsf read_spline_calibration(const std::string& path) {
  plan_input(path, "the calibration");  // never an output of the same run
  h5::silence_errors();
  if (!looks_like_hdf5(path)) throw InputError(path, "not an HDF5 file (a spline calibration psf.h5 was expected)");
  h5::Id access = h5::read_access_plist();
  h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get()));
  if (!file.valid()) throw InputError(path, "cannot open the HDF5 file: " + h5::last_error());
  if (H5Lexists(file.get(), "spline", H5P_DEFAULT) <= 0)
    throw InputError(path, "no /spline group: not a nanoscopy spline calibration");
  h5::Id group = h5::group(H5Gopen2(file.get(), "spline", H5P_DEFAULT));
  if (!group.valid()) throw InputError(path, "/spline is not a group");
  const std::string format = read_text(group.get(), "format");
  if (format != kSplineCalibrationFormat)
    throw InputError(path, "the /spline group's format attribute is \"" + format + "\", not \"" +
                               kSplineCalibrationFormat + "\"");
  const double version = read_number(group.get(), "version", path);
  if (version != kSplinePsfVersion)
    throw InputError(path, "spline calibration version " + std::to_string(version) +
                               " is not known to this program (it reads version " +
                               std::to_string(kSplinePsfVersion) + ")");
  SplinePsf psf;
  psf.source = path;
  for (int i = 0; i < 6; ++i) {
    const double v = read_number(group.get(), kAttributes[i], path);
    if (!std::isfinite(v)) throw InputError(path, std::string("the attribute ") + kAttributes[i] + " is not finite");
    *attribute_slot(psf, i) = v;
  }
  if (!(psf.voxel_xy_px > 0) || !(psf.z_step_nm > 0) || !(psf.pixel_size_nm > 0))
    throw InputError(path, "voxel_xy_px, z_step_nm and pixel_size_nm must be positive");
  if (H5Lexists(group.get(), "coefficients", H5P_DEFAULT) <= 0)
    throw InputError(path, "no dataset /spline/coefficients");
  h5::Id data = h5::dataset(H5Dopen2(group.get(), "coefficients", H5P_DEFAULT));
  if (!data.valid()) throw InputError(path, "/spline/coefficients is not a dataset");
  h5::Id space = h5::space(H5Dget_space(data.get()));
  h5::Id type = h5::type(H5Dget_type(data.get()));
  std::array<hsize_t, 4> dims{};
  if (!space.valid() || !type.valid() || H5Tget_class(type.get()) != H5T_FLOAT ||
      H5Sget_simple_extent_ndims(space.get()) != 4 || H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) != 4 ||
      dims[3] != 64 || dims[0] == 0 || dims[1] == 0 || dims[2] == 0 || dims[0] > 100000 || dims[1] > 100000 ||
      dims[2] > 100000)
    throw InputError(path, "/spline/coefficients must be floating point of shape [size_x, size_y, size_z, 64], is " +
                               h5::describe_dataset(data.get()));
  const double count = static_cast<double>(dims[0]) * static_cast<double>(dims[1]) * static_cast<double>(dims[2]) * 64;
  if (count > 2e9) throw InputError(path, "/spline/coefficients is implausibly large: " + h5::describe_dataset(data.get()));
  if (!h5::stores_its_data(data.get()))
    throw InputError(path, "/spline/coefficients declares more data than the file holds (damaged file?)");
  psf.size_x = static_cast<int>(dims[0]);
  psf.size_y = static_cast<int>(dims[1]);
  psf.size_z = static_cast<int>(dims[2]);
  psf.coefficients.resize(static_cast<std::size_t>(count));
  if (H5Dread(data.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, psf.coefficients.data()) < 0)
    throw InputError(path, "cannot read /spline/coefficients: " + h5::last_error());
  for (std::size_t i = 0; i < psf.coefficients.size(); ++i)
    if (!std::isfinite(psf.coefficients[i]))
      throw InputError(path, "/spline/coefficients holds a NaN or infinite value (coefficient " + std::to_string(i) +
                                 ")");
  return psf;
}

void write_spline_calibration(const std::string& path, const SplinePsf& psf, const std::vector<float>* volume) {
  const std::size_t count = static_cast<std::size_t>(psf.size_x) * psf.size_y * psf.size_z * 64;
  if (psf.size_x < 1 || psf.size_y < 1 || psf.size_z < 1 || psf.coefficients.size() != count)
    throw UsageError(path, "the spline's coefficients do not match its size");
  const std::size_t samples = static_cast<std::size_t>(psf.size_x + 1) * (psf.size_y + 1) * (psf.size_z + 1);
  if (volume && volume->size() != samples) throw UsageError(path, "the spline's volume does not match its size");
  h5::silence_errors();
  AtomicOutput output(path);
  const auto fail = [&](const std::string& what) { throw OutputError(path, what + ": " + h5::last_error()); };
  {
    h5::Id file = h5::file(H5Fcreate(output.temp_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    if (!file.valid()) fail("cannot create the HDF5 file");
    h5::Id group = h5::group(H5Gcreate2(file.get(), "spline", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (!group.valid()) fail("cannot create /spline");
    bool ok = h5::write_attribute(group.get(), "format", std::string(kSplineCalibrationFormat)) &&
              h5::write_attribute(group.get(), "version", static_cast<double>(kSplinePsfVersion));
    SplinePsf copy = psf;
    for (int i = 0; i < 6 && ok; ++i) ok = h5::write_attribute(group.get(), kAttributes[i], *attribute_slot(copy, i));
    if (!ok) fail("cannot write the calibration's attributes");
    const auto write = [&](const char* name, const float* values, const hsize_t* dims, int rank) {
      h5::Id space = h5::space(H5Screate_simple(rank, dims, nullptr));
      h5::Id set = h5::dataset(H5Dcreate2(group.get(), name, H5T_IEEE_F32LE, space.get(), H5P_DEFAULT, H5P_DEFAULT,
                                          H5P_DEFAULT));
      if (!set.valid() || H5Dwrite(set.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) < 0 ||
          !set.close())
        fail(std::string("cannot write /spline/") + name);
    };
    const hsize_t cdims[4] = {static_cast<hsize_t>(psf.size_x), static_cast<hsize_t>(psf.size_y),
                              static_cast<hsize_t>(psf.size_z), 64};
    write("coefficients", psf.coefficients.data(), cdims, 4);
    if (volume) {
      const hsize_t vdims[3] = {static_cast<hsize_t>(psf.size_z + 1), static_cast<hsize_t>(psf.size_y + 1),
                                static_cast<hsize_t>(psf.size_x + 1)};
      write("volume", volume->data(), vdims, 3);
    }
    if (!h5::write_run_attributes(file.get())) fail("cannot write the run attributes");
    group.close();
    if (!file.close()) fail("cannot finish the HDF5 file");
  }
  output.commit();
}

}  // namespace nanoscopy
