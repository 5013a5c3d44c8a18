// HDF5 image stacks: a 3-D (T, Y, X) or 2-D (Y, X) numeric dataset, named by
// the user or found among the names other tools use. Frames are read as
// hyperslabs straight into the caller's buffer; the whole stack is never read.
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string_view>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/formats.hpp"
#include "nanoscopy/io/hdf5_util.hpp"

namespace nanoscopy::detail {
namespace {

namespace fs = std::filesystem;

// Where other tools put their stacks (reference.md §3): generic, PYME, ilastik, NeXus.
constexpr std::array<std::string_view, 4> kCommonNames = {"/data", "/ImageData", "/exported_data", "/entry/data/data"};
constexpr std::size_t kMaxListed = 20;

struct DatasetEntry {
  std::string path;         // absolute, "/group/name"
  std::string description;  // "3-D uint16 100x32x32"
  bool image_like = false;  // 2-D or 3-D, integer or float, not empty
};

bool numeric_class(H5T_class_t cls) {
  return cls == H5T_INTEGER || cls == H5T_FLOAT;
}

DatasetEntry describe_entry(hid_t dataset, std::string path) {
  DatasetEntry entry;
  entry.path = std::move(path);
  entry.description = h5::describe_dataset(dataset);
  h5::Id type = h5::type(H5Dget_type(dataset));
  h5::Id space = h5::space(H5Dget_space(dataset));
  if (!type.valid() || !space.valid()) return entry;
  const int rank = H5Sget_simple_extent_ndims(space.get());
  entry.image_like = (rank == 2 || rank == 3) && numeric_class(H5Tget_class(type.get())) &&
                     H5Sget_simple_extent_npoints(space.get()) > 0;
  return entry;
}

// The third parameter of H5L_iterate_t is H5L_info_t (1.10) or H5L_info2_t (1.12+).
template <typename F>
struct link_info;
template <typename R, typename A, typename B, typename C, typename D>
struct link_info<R (*)(A, B, C, D)> {
  using type = C;
};
using LinkInfoPtr = link_info<H5L_iterate_t>::type;

herr_t collect_dataset(hid_t group, const char* name, LinkInfoPtr info, void* op_data) {
  if (info->type != H5L_TYPE_HARD) return 0;  // soft links would list a dataset twice; external links may dangle
  h5::Id object = h5::object(H5Oopen(group, name, H5P_DEFAULT));
  if (!object.valid() || H5Iget_type(object.get()) != H5I_DATASET) return 0;
  auto* entries = static_cast<std::vector<DatasetEntry>*>(op_data);
  entries->push_back(describe_entry(object.get(), "/" + std::string(name)));
  return 0;
}

std::vector<DatasetEntry> list_datasets(hid_t file) {
  std::vector<DatasetEntry> entries;
  H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, collect_dataset, &entries);
  return entries;
}

std::string join_listing(const std::vector<DatasetEntry>& entries, bool with_description) {
  std::string out;
  for (std::size_t i = 0; i < entries.size() && i < kMaxListed; ++i) {
    if (i) out += ", ";
    out += entries[i].path;
    if (with_description) out += " (" + entries[i].description + ")";
  }
  if (entries.size() > kMaxListed) out += ", and " + std::to_string(entries.size() - kMaxListed) + " more";
  return out;
}

std::string file_contents(const std::vector<DatasetEntry>& entries) {
  if (entries.empty()) return "the file holds no datasets";
  return "the file holds " + join_listing(entries, true);
}

// True if every component of the absolute `path` exists as a link, so that
// H5Oopen can be called without tripping over a missing intermediate group.
bool path_exists(hid_t file, const std::string& path) {
  std::size_t pos = 1;
  while (pos <= path.size()) {
    std::size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    if (next > pos) {
      const std::string prefix = path.substr(0, next);
      if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    }
    pos = next + 1;
  }
  return true;
}

std::string normalize_name(std::string name) {
  if (name.empty() || name.front() != '/') name.insert(name.begin(), '/');
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  return name;
}

struct TypeChoice {
  PixelType type;
  hid_t memory_type;  // what H5Dread converts to
};

// Native memory type for a dataset's element type. Types without a PixelType
// of their own are widened losslessly where HDF5 converts them on read:
// int8 -> int16, float16 -> float32; int64/uint64 -> float64 (exact below
// 2^53, far above any camera count).
bool choose_type(hid_t file_type, TypeChoice& choice) {
  const H5T_class_t cls = H5Tget_class(file_type);
  const std::size_t size = H5Tget_size(file_type);
  if (cls == H5T_INTEGER) {
    const bool is_signed = H5Tget_sign(file_type) == H5T_SGN_2;
    switch (size) {
      case 1:
        choice = is_signed ? TypeChoice{PixelType::i16, H5T_NATIVE_INT16} : TypeChoice{PixelType::u8, H5T_NATIVE_UINT8};
        return true;
      case 2:
        choice =
            is_signed ? TypeChoice{PixelType::i16, H5T_NATIVE_INT16} : TypeChoice{PixelType::u16, H5T_NATIVE_UINT16};
        return true;
      case 4:
        choice =
            is_signed ? TypeChoice{PixelType::i32, H5T_NATIVE_INT32} : TypeChoice{PixelType::u32, H5T_NATIVE_UINT32};
        return true;
      case 8:
        choice = TypeChoice{PixelType::f64, H5T_NATIVE_DOUBLE};
        return true;
      default:
        return false;
    }
  }
  if (cls == H5T_FLOAT) {
    if (size == 2 || size == 4) {
      choice = TypeChoice{PixelType::f32, H5T_NATIVE_FLOAT};
      return true;
    }
    if (size == 8) {
      choice = TypeChoice{PixelType::f64, H5T_NATIVE_DOUBLE};
      return true;
    }
  }
  return false;
}

// Reads a numeric attribute (scalar or small array; the last element, i.e. x for
// Fiji's z,y,x `element_size_um`). 0 when absent or not a positive number.
double numeric_attribute(hid_t object, const char* name) {
  if (H5Aexists(object, name) <= 0) return 0.0;
  h5::Id attr = h5::attribute(H5Aopen(object, name, H5P_DEFAULT));
  if (!attr.valid()) return 0.0;
  h5::Id type = h5::type(H5Aget_type(attr.get()));
  h5::Id space = h5::space(H5Aget_space(attr.get()));
  if (!type.valid() || !space.valid() || !numeric_class(H5Tget_class(type.get()))) return 0.0;
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 1 || n > 16) return 0.0;
  std::vector<double> values(static_cast<std::size_t>(n));
  if (H5Aread(attr.get(), H5T_NATIVE_DOUBLE, values.data()) < 0) return 0.0;
  const double v = values.back();
  return std::isfinite(v) && v > 0.0 ? v : 0.0;
}

double pixel_size_nm_of(hid_t object) {
  if (const double nm = numeric_attribute(object, "pixel_size_nm"); nm > 0) return nm;
  if (const double um = numeric_attribute(object, "pixel_size_um"); um > 0) return um * 1000.0;
  if (const double um = numeric_attribute(object, "element_size_um"); um > 0) return um * 1000.0;
  return 0.0;
}

// Why a file cannot be opened as HDF5, worded for the user.
[[noreturn]] void throw_open_failure(const std::string& path, const std::string& hdf5_message) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(path, "no such file");
  if (fs::is_directory(path, ec)) throw InputError(path, "is a directory, expected an HDF5 file");
  const auto size = fs::file_size(path, ec);
  if (!ec && size == 0) throw InputError(path, "the file is empty (0 bytes)");
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 == 0)
    throw InputError(path, "not an HDF5 file (no HDF5 signature found; is it a renamed text or other file?)");
  throw InputError(path, "cannot open the HDF5 file" + (hdf5_message.empty() ? std::string() : ": " + hdf5_message));
}

// A filter that this HDF5 library lacks (h5py's LZF, Blosc, bitshuffle ...) would
// only fail at the first read; say so at open time instead.
void check_filters(const std::string& path, const std::string& name, hid_t dataset) {
  h5::Id dcpl = h5::plist(H5Dget_create_plist(dataset));
  if (!dcpl.valid()) return;
  const int n = H5Pget_nfilters(dcpl.get());
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0;
    std::size_t nelements = 0;
    std::array<char, 256> filter_name{};
    unsigned filter_config = 0;
    const H5Z_filter_t id = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &nelements, nullptr,
                                           filter_name.size(), filter_name.data(), &filter_config);
    if (id < 0) continue;
    if (H5Zfilter_avail(id) <= 0) {
      const std::string label = filter_name[0] ? std::string("'") + filter_name.data() + "' " : std::string();
      throw InputError(path, "dataset " + name + " is compressed with filter " + label + "(id " + std::to_string(id) +
                                 ") which this HDF5 library cannot decode; re-save it uncompressed or with gzip");
    }
  }
}

// The chunk cache must hold every chunk that one frame touches, or frames read
// one at a time from chunks spanning several frames would decompress each chunk
// again and again.
h5::Id dataset_access_for(hid_t file, const std::string& name) {
  h5::Id dapl = h5::plist(H5Pcreate(H5P_DATASET_ACCESS));
  h5::Id probe = h5::dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT));
  if (!dapl.valid() || !probe.valid()) return dapl;
  h5::Id dcpl = h5::plist(H5Dget_create_plist(probe.get()));
  h5::Id space = h5::space(H5Dget_space(probe.get()));
  h5::Id type = h5::type(H5Dget_type(probe.get()));
  if (!dcpl.valid() || !space.valid() || !type.valid() || H5Pget_layout(dcpl.get()) != H5D_CHUNKED) return dapl;
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank != 2 && rank != 3) return dapl;
  std::array<hsize_t, 3> dims{}, chunk{};
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  if (H5Pget_chunk(dcpl.get(), rank, chunk.data()) != rank) return dapl;
  // Sizes in double: the dimensions come from the file and their products may not fit 64 bits.
  double chunk_bytes = static_cast<double>(H5Tget_size(type.get()));
  for (int i = 0; i < rank; ++i) chunk_bytes *= static_cast<double>(chunk[static_cast<std::size_t>(i)]);
  double chunks_per_plane = 1;
  for (int i = rank - 2; i < rank; ++i) {
    const auto d = static_cast<std::size_t>(i);
    chunks_per_plane *= std::ceil(static_cast<double>(dims[d]) / static_cast<double>(std::max<hsize_t>(chunk[d], 1)));
  }
  constexpr double min_bytes = 1 << 20, max_bytes = 512.0 * (1 << 20);
  const double bytes = std::clamp(chunks_per_plane * chunk_bytes + chunk_bytes, min_bytes, max_bytes);
  // About 20 hash slots per chunk the cache can hold (HDF5's advice), never per chunk
  // of the plane: a sparse 10^6 x 10^6 dataset has 4e9 chunks, and HDF5 allocates
  // its slot table when the dataset is opened.
  const double cached_chunks = std::min(chunks_per_plane, std::floor(bytes / std::max(chunk_bytes, 1.0))) + 1;
  const auto slots = static_cast<std::size_t>(std::max(521.0, cached_chunks * 20 + 1));
  H5Pset_chunk_cache(dapl.get(), slots, static_cast<std::size_t>(bytes), 1.0);
  return dapl;
}

// One reader per stack, whatever the read threads (no another_reader()): an
// HDF5 library built without thread safety must not be entered from two
// threads at all, and a thread-safe build (H5is_library_threadsafe; Debian's
// serial build says yes) holds one global lock over every call, H5Dread and
// its decompression filters included, so a second thread would only wait.
class Hdf5StackReader final : public StackReader {
 public:
  Hdf5StackReader(StackInfo info, std::string dataset_name, h5::Id file, h5::Id dataset, hid_t memory_type, int rank)
      : dataset_name_(std::move(dataset_name)),
        file_(std::move(file)),
        dataset_(std::move(dataset)),
        memory_type_(memory_type),
        rank_(rank) {
    info_ = std::move(info);
  }

  void read_raw(std::int64_t first, std::int64_t count, void* dst) override {
    const std::string where = info_.path + ":" + dataset_name_ + ", frame " + std::to_string(first);
    if (first < 0 || count < 0 || first + count > info_.frames)
      throw InputError(where, "frames " + std::to_string(first) + " to " + std::to_string(first + count - 1) +
                                  " lie outside the stack of " + std::to_string(info_.frames) + " frames");
    if (count == 0) return;
    h5::Id file_space = h5::space(H5Dget_space(dataset_.get()));
    if (!file_space.valid()) throw InputError(where, "cannot read the dataset's shape: " + h5::last_error());
    // The memory space has the selection's own shape: for differently shaped
    // selections HDF5 maps chunks element by element, some 50x slower.
    const std::array<hsize_t, 3> extent = {static_cast<hsize_t>(count), static_cast<hsize_t>(info_.height),
                                           static_cast<hsize_t>(info_.width)};
    if (rank_ == 3) {
      const std::array<hsize_t, 3> start = {static_cast<hsize_t>(first), 0, 0};
      if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, extent.data(), nullptr) < 0)
        throw InputError(where, "cannot select the frames: " + h5::last_error());
    }
    h5::Id memory_space = h5::space(H5Screate_simple(rank_, rank_ == 3 ? extent.data() : extent.data() + 1, nullptr));
    if (!memory_space.valid()) throw InputError(where, "cannot set up the read: " + h5::last_error());
    if (H5Dread(dataset_.get(), memory_type_, memory_space.get(), file_space.get(), H5P_DEFAULT, dst) < 0)
      throw InputError(where,
                       "cannot read " + std::to_string(count) + " frame(s) from the dataset: " + h5::last_error());
  }

 private:
  std::string dataset_name_;
  h5::Id file_;  // declared before dataset_: the dataset closes first
  h5::Id dataset_;
  hid_t memory_type_;
  int rank_;
};

// Picks the dataset to read when the user named none.
std::string auto_detect(const std::string& path, const std::vector<DatasetEntry>& entries) {
  std::vector<DatasetEntry> common;
  for (const auto& name : kCommonNames)
    for (const auto& e : entries)
      if (e.path == name && e.image_like) common.push_back(e);
  if (common.size() == 1) return common.front().path;
  const auto pick_hint = [&](const std::vector<DatasetEntry>& candidates) {
    return "; pick one by naming it, e.g. " + fs::path(path).filename().string() + ":" + candidates.front().path;
  };
  if (common.size() > 1)
    throw InputError(path,
                     "several datasets could be the image stack: " + join_listing(common, true) + pick_hint(common));

  std::vector<DatasetEntry> images;
  for (const auto& e : entries)
    if (e.image_like) images.push_back(e);
  if (images.size() == 1) return images.front().path;
  if (images.size() > 1)
    throw InputError(path,
                     "several datasets could be the image stack: " + join_listing(images, true) + pick_hint(images));
  // A lone dataset that is not an image: open it anyway, so that the error says what is wrong with it.
  if (entries.size() == 1) return entries.front().path;
  throw InputError(path, "no 2-D or 3-D numeric dataset to read as an image stack; " + file_contents(entries));
}

}  // namespace

std::unique_ptr<StackReader> open_hdf5(const std::string& path, const std::string& dataset) {
  h5::silence_errors();
  h5::Id fapl = h5::read_access_plist();
  h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.valid() ? fapl.get() : H5P_DEFAULT));
  if (!file.valid()) throw_open_failure(path, h5::last_error());

  std::string name;
  if (dataset.empty()) {
    name = auto_detect(path, list_datasets(file.get()));
  } else {
    name = normalize_name(dataset);
    if (name == "/" || !path_exists(file.get(), name))
      throw InputError(path, "no dataset " + name + " in the file; " + file_contents(list_datasets(file.get())));
    h5::Id object = h5::object(H5Oopen(file.get(), name.c_str(), H5P_DEFAULT));
    const H5I_type_t kind = object.valid() ? H5Iget_type(object.get()) : H5I_BADID;
    if (kind != H5I_DATASET)
      throw InputError(path, name + (kind == H5I_GROUP ? " is a group, not a dataset; " : " is not a dataset; ") +
                                 file_contents(list_datasets(file.get())));
  }

  h5::Id dapl = dataset_access_for(file.get(), name);
  h5::Id data = h5::dataset(H5Dopen2(file.get(), name.c_str(), dapl.valid() ? dapl.get() : H5P_DEFAULT));
  if (!data.valid()) throw InputError(path, "cannot open dataset " + name + ": " + h5::last_error());
  h5::Id type = h5::type(H5Dget_type(data.get()));
  h5::Id space = h5::space(H5Dget_space(data.get()));
  if (!type.valid() || !space.valid()) throw InputError(path, "cannot read the type and shape of dataset " + name);

  const int rank = H5Sget_simple_extent_ndims(space.get());
  const std::string described = h5::describe_dataset(data.get());
  if (rank != 2 && rank != 3)
    throw InputError(path, "dataset " + name + " has rank " + std::to_string(std::max(rank, 0)) + " (" + described +
                               "); an image stack must be 3-D (frames, y, x) or a single 2-D image (y, x)");
  TypeChoice choice{};
  if (!choose_type(type.get(), choice))
    throw InputError(path, "dataset " + name + " holds " + h5::describe_type(type.get()) +
                               " values, not pixels (supported: 8/16/32/64-bit integers, float16/32/64)");
  std::array<hsize_t, 3> dims{};
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  for (int i = 0; i < rank; ++i)
    if (dims[static_cast<std::size_t>(i)] == 0)
      throw InputError(path, "dataset " + name + " is empty (" + described + ")");
  // Frame sizes in bytes must fit in int64 (StackInfo), like those of every format.
  constexpr auto max_count = static_cast<hsize_t>(std::numeric_limits<std::int64_t>::max());
  const hsize_t frame_height = dims[static_cast<std::size_t>(rank - 2)], frame_width = dims[static_cast<std::size_t>(rank - 1)];
  if (dims[0] > max_count || frame_width > max_count / frame_height ||
      frame_width * frame_height > max_count / bytes_per_pixel(choice.type))
    throw InputError(path, "dataset " + name + " is too large (" + described + ")");
  check_filters(path, name, data.get());

  StackInfo info;
  info.path = path;
  info.format = "hdf5";
  info.type = choice.type;
  info.frames = rank == 3 ? static_cast<std::int64_t>(dims[0]) : 1;
  info.height = static_cast<std::int64_t>(dims[static_cast<std::size_t>(rank - 2)]);
  info.width = static_cast<std::int64_t>(dims[static_cast<std::size_t>(rank - 1)]);
  info.pixel_size_nm = pixel_size_nm_of(data.get());
  if (info.pixel_size_nm <= 0) info.pixel_size_nm = pixel_size_nm_of(file.get());
  return std::make_unique<Hdf5StackReader>(std::move(info), name, std::move(file), std::move(data), choice.memory_type,
                                           rank);
}

}  // namespace nanoscopy::detail
