#include "nanoscopy/io/hdf5_images.hpp"

#include <array>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/hdf5_util.hpp"

namespace nanoscopy {

void write_hdf5_images(const std::string& path, const std::vector<NamedImage>& images, const std::string& software) {
  namespace h5 = detail::h5;
  h5::silence_errors();
  AtomicOutput output(path);
  {
    h5::Id file = h5::file(H5Fcreate(output.temp_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    if (!file.valid()) throw OutputError(path, "cannot create the HDF5 file: " + h5::last_error());
    if (!h5::write_run_attributes(file.get()))
      throw OutputError(path, "cannot write the file's attributes: " + h5::last_error());
    for (const auto& image : images) {
      const std::array<hsize_t, 2> dims = {static_cast<hsize_t>(image.height), static_cast<hsize_t>(image.width)};
      h5::Id space = h5::space(H5Screate_simple(2, dims.data(), nullptr));
      h5::Id lcpl = h5::intermediate_group_lcpl();
      h5::Id d = h5::dataset(
          H5Dcreate2(file.get(), image.name.c_str(), H5T_IEEE_F32LE, space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT));
      const bool ok = d.valid() && H5Dwrite(d.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, image.pixels) >= 0 &&
                      (image.description.empty() || h5::write_attribute(d.get(), "description", image.description)) &&
                      (image.pixel_size_nm <= 0 || h5::write_attribute(d.get(), "pixel_size_nm", image.pixel_size_nm)) &&
                      (software.empty() || h5::write_attribute(d.get(), "software", software));
      if (!ok) throw OutputError(path, "cannot write dataset '" + image.name + "': " + h5::last_error());
    }
    if (!file.close()) throw OutputError(path, "cannot finish the HDF5 file: " + h5::last_error());
  }
  output.commit();
}

}  // namespace nanoscopy
