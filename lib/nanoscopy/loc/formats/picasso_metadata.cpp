#include "nanoscopy/loc/formats/picasso_metadata.hpp"

#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/hdf5_util.hpp"

namespace nanoscopy::detail {

std::optional<std::string> read_picasso_metadata_dataset(hid_t file, const std::string& path) {
  if (H5Lexists(file, "metadata", H5P_DEFAULT) <= 0) return std::nullopt;
  const auto bad = [&](const std::string& what) { return InputError(path, "/metadata " + what); };
  h5::Id dataset = h5::dataset(H5Dopen2(file, "metadata", H5P_DEFAULT));
  if (!dataset.valid()) throw bad("cannot be opened: " + h5::last_error());
  h5::Id stored = h5::type(H5Dget_type(dataset.get()));
  h5::Id space = h5::space(H5Dget_space(dataset.get()));
  // One string, as h5py writes a str: a scalar (or a one-element array) of variable or fixed length.
  if (!stored.valid() || !space.valid() || H5Tget_class(stored.get()) != H5T_STRING ||
      H5Sget_simple_extent_npoints(space.get()) != 1)
    throw bad("is " + h5::describe_dataset(dataset.get()) + ", not one JSON string (Picasso 0.11's metadata)");
  h5::Id type = h5::type(H5Tcopy(H5T_C_S1));
  H5Tset_cset(type.get(), H5Tget_cset(stored.get()) == H5T_CSET_UTF8 ? H5T_CSET_UTF8 : H5T_CSET_ASCII);
  if (H5Tis_variable_str(stored.get()) > 0) {
    H5Tset_size(type.get(), H5T_VARIABLE);
    char* value = nullptr;
    if (H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) < 0 || !value)
      throw bad("cannot be read: " + h5::last_error());
    std::string text(value);
    H5free_memory(value);
    return text;
  }
  const std::size_t size = H5Tget_size(stored.get());
  if (size == 0 || size > (std::size_t{1} << 30)) throw bad("has an impossible string size");
  H5Tset_size(type.get(), size + 1);  // room for the terminating NUL whatever the stored padding
  H5Tset_strpad(type.get(), H5T_STR_NULLTERM);
  std::vector<char> buffer(size + 1, '\0');
  if (H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()) < 0)
    throw bad("cannot be read: " + h5::last_error());
  return std::string(buffer.data());
}

}  // namespace nanoscopy::detail
