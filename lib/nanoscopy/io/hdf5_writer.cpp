// HDF5 image output: one dataset, (T, Y, X) for a stack or (Y, X) for a single
// image, one frame per chunk, little-endian uint16 or float32, written at the
// AtomicOutput's temporary name and renamed into place by close().
#include <array>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/hdf5_util.hpp"
#include "nanoscopy/io/image_writer.hpp"

namespace nanoscopy::detail {
namespace {

class Hdf5ImageWriter final : public ImageWriter {
 public:
  Hdf5ImageWriter(const std::string& path, const ImageMeta& meta) : meta_(meta), output_(path), where_(path) {
    h5::silence_errors();
    if (meta.type != PixelType::u16 && meta.type != PixelType::f32)
      throw UsageError(path, "HDF5 images are written as uint16 or float32, not " + to_string(meta.type));
    if (meta.width <= 0 || meta.height <= 0 || meta.frames <= 0)
      throw UsageError(path, "nothing to write (empty image)");
    const std::string name = meta.dataset.empty() ? std::string("data") : meta.dataset;

    file_ = h5::file(H5Fcreate(output_.temp_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    if (!file_.valid()) throw OutputError(where_, "cannot create the HDF5 file: " + h5::last_error());
    if (!h5::write_attributes(file_.get(), meta.root_attributes) || !h5::write_attributes(file_.get(), meta.notes) ||
        !h5::write_run_attributes(file_.get()))
      throw OutputError(where_, "cannot write the file's attributes: " + h5::last_error());

    rank_ = meta.frames > 1 ? 3 : 2;
    const std::array<hsize_t, 3> dims3 = {static_cast<hsize_t>(meta.frames), static_cast<hsize_t>(meta.height),
                                          static_cast<hsize_t>(meta.width)};
    const hsize_t* dims = rank_ == 3 ? dims3.data() : dims3.data() + 1;
    std::array<hsize_t, 3> chunk = dims3;
    chunk[0] = 1;
    h5::Id space = h5::space(H5Screate_simple(rank_, dims, nullptr));
    h5::Id dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE));
    if (!space.valid() || !dcpl.valid() ||
        H5Pset_chunk(dcpl.get(), rank_, rank_ == 3 ? chunk.data() : chunk.data() + 1) < 0)
      throw OutputError(where_, "cannot lay out the HDF5 dataset: " + h5::last_error());
    h5::Id lcpl = h5::intermediate_group_lcpl();
    const hid_t file_type = meta.type == PixelType::u16 ? H5T_STD_U16LE : H5T_IEEE_F32LE;
    memory_type_ = meta.type == PixelType::u16 ? H5T_NATIVE_UINT16 : H5T_NATIVE_FLOAT;
    dataset_ =
        h5::dataset(H5Dcreate2(file_.get(), name.c_str(), file_type, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT));
    if (!dataset_.valid()) throw OutputError(where_, "cannot create dataset '" + name + "': " + h5::last_error());
    if (meta.pixel_size_nm > 0 && !h5::write_attribute(dataset_.get(), "pixel_size_nm", meta.pixel_size_nm))
      throw OutputError(where_, "cannot write the pixel_size_nm attribute: " + h5::last_error());
    if (!meta.software.empty() && !h5::write_attribute(dataset_.get(), "software", meta.software))
      throw OutputError(where_, "cannot write the software attribute: " + h5::last_error());
    // The axes as text (numpy/xarray order) and the page labels, one per line.
    const char* axes = rank_ == 2 ? "YX" : meta.axis == StackAxis::z ? "ZYX" : meta.axis == StackAxis::time ? "TYX" : "IYX";
    std::string labels;
    for (const auto& label : meta.labels) labels += (labels.empty() ? "" : "\n") + label;
    if (!h5::write_attribute(dataset_.get(), "axes", std::string(axes)) ||
        (!labels.empty() && !h5::write_attribute(dataset_.get(), "labels", labels)))
      throw OutputError(where_, "cannot write the axes and labels attributes: " + h5::last_error());
  }

  void write(const void* frames, std::int64_t count) override {
    if (count < 0 || written_ + count > meta_.frames)
      throw OutputError(where_, "more frames written (" + std::to_string(written_ + count) + ") than announced (" +
                                    std::to_string(meta_.frames) + ")");
    if (count == 0) return;
    if (!dataset_.valid()) throw OutputError(where_, "the image was already closed");
    h5::Id file_space = h5::space(H5Dget_space(dataset_.get()));
    if (!file_space.valid()) throw OutputError(where_, "cannot write frames: " + h5::last_error());
    // The memory space has the selection's own shape: for differently shaped
    // selections HDF5 maps chunks element by element, some 50x slower.
    const std::array<hsize_t, 3> extent = {static_cast<hsize_t>(count), static_cast<hsize_t>(meta_.height),
                                           static_cast<hsize_t>(meta_.width)};
    if (rank_ == 3) {
      const std::array<hsize_t, 3> start = {static_cast<hsize_t>(written_), 0, 0};
      if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, extent.data(), nullptr) < 0)
        throw OutputError(where_, "cannot select frames to write: " + h5::last_error());
    }
    h5::Id memory_space = h5::space(H5Screate_simple(rank_, rank_ == 3 ? extent.data() : extent.data() + 1, nullptr));
    if (!memory_space.valid() ||
        H5Dwrite(dataset_.get(), memory_type_, memory_space.get(), file_space.get(), H5P_DEFAULT, frames) < 0)
      throw OutputError(where_ + ", frame " + std::to_string(written_), "cannot write frames: " + h5::last_error());
    written_ += count;
  }

  void close() override {
    if (written_ != meta_.frames)
      throw OutputError(where_, "only " + std::to_string(written_) + " of " + std::to_string(meta_.frames) +
                                    " announced frames were written");
    if (!dataset_.close()) throw OutputError(where_, "cannot finish the dataset: " + h5::last_error());
    if (!file_.close()) throw OutputError(where_, "cannot finish the HDF5 file: " + h5::last_error());
    output_.commit();
  }

 private:
  ImageMeta meta_;
  AtomicOutput output_;  // declared first: destroyed last, after the HDF5 handles are closed
  std::string where_;
  h5::Id file_;
  h5::Id dataset_;
  hid_t memory_type_ = H5I_INVALID_HID;
  int rank_ = 3;
  std::int64_t written_ = 0;
};

}  // namespace

std::unique_ptr<ImageWriter> create_hdf5_writer(const std::string& path, const ImageMeta& meta) {
  return std::make_unique<Hdf5ImageWriter>(path, meta);
}

}  // namespace nanoscopy::detail
