#include "nanoscopy/io/hdf5_util.hpp"

#include <cstring>
#include <vector>

#include "nanoscopy/core/run_files.hpp"

namespace nanoscopy::detail::h5 {
namespace {

herr_t keep_innermost(unsigned /*n*/, const H5E_error2_t* err, void* client_data) {
  // Walking downward goes from the API call to where the error arose: keep the last one seen.
  auto* out = static_cast<std::string*>(client_data);
  if (err && err->desc && err->desc[0] != '\0') *out = err->desc;
  return 0;
}

}  // namespace

void silence_errors() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

std::string last_error() {
  std::string message;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_innermost, &message);
  // I/O failures span lines ("file write failed: time = ...\n, filename = ..., errno = 28, error message =
  // 'No space left on device', buf = ..."): keep what failed and the system's words. Errors are one line.
  const std::string key = "error message = '";
  if (const auto at = message.find(key); at != std::string::npos) {
    const auto begin = at + key.size(), end = message.find('\'', begin);
    message = message.substr(0, message.find(':')) + ": " + message.substr(begin, end == std::string::npos ? end : end - begin);
  }
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  return message;
}

std::string describe_type(hid_t type) {
  const H5T_class_t cls = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  switch (cls) {
    case H5T_INTEGER: {
      const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
      return std::string(is_signed ? "int" : "uint") + std::to_string(size * 8);
    }
    case H5T_FLOAT:
      return "float" + std::to_string(size * 8);
    case H5T_STRING:
      return "string";
    case H5T_COMPOUND:
      return "compound";
    case H5T_ENUM:
      return "enum";
    case H5T_BITFIELD:
      return "bitfield";
    case H5T_OPAQUE:
      return "opaque";
    case H5T_REFERENCE:
      return "reference";
    case H5T_VLEN:
      return "variable-length";
    case H5T_ARRAY:
      return "array";
    case H5T_TIME:
      return "time";
    default:
      return "unknown type";
  }
}

std::string describe_dataset(hid_t dataset) {
  Id type_id = type(H5Dget_type(dataset));
  Id space_id = space(H5Dget_space(dataset));
  if (!type_id.valid() || !space_id.valid()) return "unreadable dataset";
  const int rank = H5Sget_simple_extent_ndims(space_id.get());
  if (rank < 0) return describe_type(type_id.get());
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(space_id.get(), dims.data(), nullptr);
  if (rank == 0) return "scalar " + describe_type(type_id.get());
  std::string shape;
  for (std::size_t i = 0; i < dims.size(); ++i) shape += (i ? "x" : "") + std::to_string(dims[i]);
  return std::to_string(rank) + "-D " + describe_type(type_id.get()) + " " + shape;
}

bool write_attribute(hid_t object, const char* name, double value) {
  Id space_id = space(H5Screate(H5S_SCALAR));
  if (!space_id.valid()) return false;
  Id attr = attribute(H5Acreate2(object, name, H5T_IEEE_F64LE, space_id.get(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attr.valid()) return false;
  return H5Awrite(attr.get(), H5T_NATIVE_DOUBLE, &value) >= 0 && attr.close();
}

bool write_attribute(hid_t object, const char* name, const std::string& value) {
  Id type_id = type(H5Tcopy(H5T_C_S1));
  if (!type_id.valid() || H5Tset_size(type_id.get(), H5T_VARIABLE) < 0 || H5Tset_cset(type_id.get(), H5T_CSET_UTF8) < 0)
    return false;
  Id space_id = space(H5Screate(H5S_SCALAR));
  if (!space_id.valid()) return false;
  Id attr = attribute(H5Acreate2(object, name, type_id.get(), space_id.get(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attr.valid()) return false;
  const char* text = value.c_str();
  return H5Awrite(attr.get(), type_id.get(), &text) >= 0 && attr.close();
}

bool write_attributes(hid_t object, const std::vector<std::pair<std::string, std::string>>& attributes) {
  for (const auto& [name, value] : attributes)
    if (!write_attribute(object, name.c_str(), value)) return false;
  return true;
}

bool write_run_attributes(hid_t file) {
  const RunFiles* run = recorded_run();
  return !run || (write_attribute(file, "nanoscopy_run_generation", run->generation()) &&
                  write_attribute(file, "nanoscopy_run_manifest", run->manifest_name()));
}

bool stores_its_data(hid_t dataset) {
  Id space_id = space(H5Dget_space(dataset));
  Id type_id = type(H5Dget_type(dataset));
  Id dcpl = plist(H5Dget_create_plist(dataset));
  if (!space_id.valid() || !type_id.valid() || !dcpl.valid()) return false;
  const hssize_t n = H5Sget_simple_extent_npoints(space_id.get());
  if (n <= 0) return n == 0;
  const double declared = static_cast<double>(n) * static_cast<double>(H5Tget_size(type_id.get()));
  const double stored = static_cast<double>(H5Dget_storage_size(dataset));
  return declared <= stored * (H5Pget_nfilters(dcpl.get()) > 0 ? 1100.0 : 1.0);
}

Id read_access_plist() {
  Id fapl = plist(H5Pcreate(H5P_FILE_ACCESS));
#if (H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10 && H5_VERS_RELEASE >= 7) || \
    (H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 12 && H5_VERS_RELEASE >= 1) || (H5_VERS_MAJOR == 1 && H5_VERS_MINOR > 12)
  if (fapl.valid()) H5Pset_file_locking(fapl.get(), 1, 1);
#endif
  return fapl;
}

Id intermediate_group_lcpl() {
  Id lcpl = plist(H5Pcreate(H5P_LINK_CREATE));
  if (lcpl.valid()) H5Pset_create_intermediate_group(lcpl.get(), 1);
  return lcpl;
}

}  // namespace nanoscopy::detail::h5
