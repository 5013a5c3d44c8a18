#include "nanoscopy/sofi/partial.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "nanoscopy/cluster/part_ranges.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/io/hdf5_util.hpp"
#include "nanoscopy/sofi/merge.hpp"

namespace nanoscopy {
namespace {

namespace h5 = detail::h5;
constexpr const char* kFormat = "nanoscopy sofi partial 1";

// "2,3,4" (join_ints); InputError naming `where` for anything else.
std::vector<int> split_ints(const std::string& s, const std::string& where) {
  std::vector<int> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) continue;
    int v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size())
      throw InputError(where, "'" + s + "' is not a list of whole numbers (damaged partial file?)");
    out.push_back(v);
  }
  return out;
}

class Writer {
 public:
  explicit Writer(std::string where) : where_(std::move(where)) {}
  void attr(hid_t obj, const char* name, std::int64_t v) {
    h5::Id space = h5::space(H5Screate(H5S_SCALAR));
    h5::Id a = h5::attribute(H5Acreate2(obj, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT));
    if (!a.valid() || H5Awrite(a.get(), H5T_NATIVE_INT64, &v) < 0) fail(name);
  }
  void attr(hid_t obj, const char* name, double v) {
    if (!h5::write_attribute(obj, name, v)) fail(name);
  }
  void attr(hid_t obj, const char* name, const std::string& v) {
    if (!h5::write_attribute(obj, name, v)) fail(name);
  }
  template <typename T>
  void data(hid_t parent, const std::string& name, const std::vector<T>& values, std::vector<hsize_t> dims) {
    h5::Id space = h5::space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
    const hid_t file_type = std::is_same_v<T, float> ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    const hid_t mem_type = std::is_same_v<T, float> ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    h5::Id lcpl = h5::intermediate_group_lcpl();
    h5::Id d = h5::dataset(H5Dcreate2(parent, name.c_str(), file_type, space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT));
    if (!d.valid() || H5Dwrite(d.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0) fail(name);
  }
  [[noreturn]] void fail(const std::string& what) {
    throw OutputError(where_, "cannot write '" + what + "' of the partial file: " + h5::last_error());
  }

 private:
  std::string where_;
};

class Reader {
 public:
  explicit Reader(std::string where) : where_(std::move(where)) {}
  std::int64_t integer(hid_t obj, const char* name) {
    std::int64_t v = 0;
    h5::Id a = open_attr(obj, name);
    if (H5Aread(a.get(), H5T_NATIVE_INT64, &v) < 0) bad(name);
    return v;
  }
  double real(hid_t obj, const char* name) {
    double v = 0;
    h5::Id a = open_attr(obj, name);
    if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, &v) < 0) bad(name);
    return v;
  }
  std::string text(hid_t obj, const char* name) {
    h5::Id a = open_attr(obj, name);
    h5::Id type = h5::type(H5Tcopy(H5T_C_S1));
    H5Tset_size(type.get(), H5T_VARIABLE);
    H5Tset_cset(type.get(), H5T_CSET_UTF8);
    char* value = nullptr;
    if (H5Aread(a.get(), type.get(), &value) < 0 || !value) bad(name);
    std::string out(value);
    H5free_memory(value);
    return out;
  }
  template <typename T>
  std::vector<T> data(hid_t parent, const std::string& name, std::size_t expected) {
    h5::Id d = h5::dataset(H5Dopen2(parent, name.c_str(), H5P_DEFAULT));
    if (!d.valid()) bad(name);
    h5::Id space = h5::space(H5Dget_space(d.get()));
    if (static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get())) != expected)
      throw InputError(where_, "dataset '" + name + "' has the wrong size (damaged partial file?)");
    if (!h5::stores_its_data(d.get()))
      throw InputError(where_, "dataset '" + name + "' is not stored in full (damaged partial file?)");
    std::vector<T> out(expected);
    const hid_t mem_type = std::is_same_v<T, float> ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    if (H5Dread(d.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0) bad(name);
    return out;
  }
  // The frame size, from the attributes, must be that of a frame stored in full.
  void frame_shape(hid_t parent, const std::string& name, std::int64_t height, std::int64_t width) {
    h5::Id d = h5::dataset(H5Dopen2(parent, name.c_str(), H5P_DEFAULT));
    if (!d.valid()) bad(name);
    h5::Id space = h5::space(H5Dget_space(d.get()));
    hsize_t dims[2] = {};
    if (!space.valid() || H5Sget_simple_extent_ndims(space.get()) != 2 ||
        H5Sget_simple_extent_dims(space.get(), dims, nullptr) != 2 || static_cast<std::int64_t>(dims[0]) != height ||
        static_cast<std::int64_t>(dims[1]) != width || height < 1 || width < 1 || !h5::stores_its_data(d.get()))
      throw InputError(where_, "its frame size (" + std::to_string(width) + "x" + std::to_string(height) +
                                   ") is not that of '" + name + "' (damaged partial file?)");
  }
  [[noreturn]] void bad(const std::string& what) {
    throw InputError(where_, "not a complete sofi partial file ('" + what + "' missing or unreadable)");
  }

 private:
  // Every attribute read holds one value: H5Aread would write all of a larger one.
  h5::Id open_attr(hid_t obj, const char* name) {
    h5::Id a = h5::attribute(H5Aopen(obj, name, H5P_DEFAULT));
    if (!a.valid()) bad(name);
    h5::Id space = h5::space(H5Aget_space(a.get()));
    if (!space.valid() || H5Sget_simple_extent_npoints(space.get()) != 1) bad(name);
    return a;
  }
  std::string where_;
};

}  // namespace

void write_sofi_partial(const std::string& path, const SofiPartial& p) {
  h5::silence_errors();
  AtomicOutput output(path);
  Writer w(path);
  {
    h5::Id file = h5::file(H5Fcreate(output.temp_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    if (!file.valid()) throw OutputError(path, "cannot create the partial file: " + h5::last_error());
    const hid_t f = file.get();
    w.attr(f, "format", std::string(kFormat));
    w.attr(f, "movie_fingerprint", p.stack_fingerprint);
    w.attr(f, "parameter_fingerprint", p.parameter_fingerprint);
    w.attr(f, "stack", p.stack_name);
    w.attr(f, "orders", join_ints(p.options.orders));
    w.attr(f, "lags", join_ints(p.options.lags));
    w.attr(f, "cross", static_cast<std::int64_t>(p.options.cross));
    w.attr(f, "moments", static_cast<std::int64_t>(p.options.moments));
    w.attr(f, "psf_sigma", p.options.psf_sigma);
    w.attr(f, "sequence_first", p.sequence.first);
    w.attr(f, "sequence_step", p.sequence.step);
    w.attr(f, "sequence_length", p.sequence.count);
    w.attr(f, "begin", p.begin);
    w.attr(f, "end", p.end);
    w.attr(f, "block", p.block);
    w.attr(f, "width", p.width);
    w.attr(f, "height", p.height);
    w.attr(f, "pixel_size_nm", p.pixel_size_nm);
    w.attr(f, "finished_blocks", p.acc.finished.blocks);
    w.attr(f, "finished_frames", p.acc.finished.frames);
    const hsize_t H = static_cast<hsize_t>(p.height), W = static_cast<hsize_t>(p.width);
    for (std::size_t i = 0; i < p.acc.finished.planes.size(); ++i) {
      const auto& plane = p.acc.finished.planes[i];
      const hsize_t up = static_cast<hsize_t>(std::llround(std::sqrt(static_cast<double>(plane.size()) / static_cast<double>(H * W))));
      w.data(f, "finished/plane" + std::to_string(i), plane, {H * up, W * up});
    }
    w.data(f, "finished/frame_sum", p.acc.finished.frame_sum, {H, W});
    for (const auto& b : p.acc.open) {
      const std::string g = "open/" + std::to_string(b.block) + "/";
      w.data(f, g + "shift", b.shift, {H, W});
      w.data(f, g + "frame_sum", b.frame_sum, {H, W});
      w.data(f, g + "terms", b.terms, {b.terms.size() / (H * W), H, W});
      h5::Id d = h5::dataset(H5Dopen2(f, (g + "terms").c_str(), H5P_DEFAULT));
      w.attr(d.get(), "block", b.block);
      w.attr(d.get(), "frames", b.frames);
      w.attr(d.get(), "tuples", b.tuples);
    }
    if (!file.close()) throw OutputError(path, "cannot finish the partial file: " + h5::last_error());
  }
  output.commit();
}

SofiPartial read_sofi_partial(const std::string& path) {
  plan_input(path, "the part file");
  h5::silence_errors();
  if (!std::filesystem::exists(path)) throw InputError(path, "no such file");
  h5::Id access = h5::read_access_plist();
  h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get()));
  if (!file.valid()) throw InputError(path, "not an HDF5 file: " + h5::last_error());
  const hid_t f = file.get();
  Reader r(path);
  if (H5Aexists(f, "format") <= 0 || r.text(f, "format") != kFormat)
    throw InputError(path, "not a sofi partial file (write one with sofi --partial)");
  SofiPartial p;
  if (H5Aexists(f, "movie_fingerprint") <= 0) throw InputError(path, "made by an older version of nanoscopy: it records no whole-movie fingerprint (movie_fingerprint), so merge cannot tell which movie it was cut from; make the part again");
  p.stack_fingerprint = r.text(f, "movie_fingerprint");
  p.parameter_fingerprint = r.text(f, "parameter_fingerprint");
  p.stack_name = r.text(f, "stack");
  p.options.orders = split_ints(r.text(f, "orders"), path);
  p.options.lags = split_ints(r.text(f, "lags"), path);
  p.options.cross = r.integer(f, "cross") != 0;
  p.options.moments = r.integer(f, "moments") != 0;
  p.options.psf_sigma = r.real(f, "psf_sigma");
  p.sequence = {r.integer(f, "sequence_first"), r.integer(f, "sequence_step"), r.integer(f, "sequence_length")};
  p.begin = r.integer(f, "begin");
  p.end = r.integer(f, "end");
  p.block = r.integer(f, "block");
  p.width = r.integer(f, "width");
  p.height = r.integer(f, "height");
  p.pixel_size_nm = r.real(f, "pixel_size_nm");
  // Every size below follows from these: check them before anything is allocated.
  if (p.sequence.first < 0 || p.sequence.step < 1 || p.block < 2 || p.sequence.count < p.block ||
      p.sequence.count > std::int64_t{9'000'000'000'000'000} || !(0 <= p.begin && p.begin < p.end && p.end <= p.sequence.count))
    throw InputError(path, "its frame sequence, block or range make no sense (damaged partial file?)");
  r.frame_shape(f, "finished/frame_sum", p.height, p.width);
  const SofiProblem problem = make_sofi_problem(p.width, p.height, p.options);
  auto& fin = p.acc.finished;
  fin.reset(problem);
  fin.blocks = r.integer(f, "finished_blocks");
  fin.frames = r.integer(f, "finished_frames");
  const SofiBlocks blocks{p.sequence.count, p.block};
  if (fin.blocks < 0 || fin.blocks > blocks.count() || fin.frames < 0 || fin.frames > p.sequence.count)
    throw InputError(path, "it counts " + std::to_string(fin.blocks) + " finished blocks of " +
                               std::to_string(fin.frames) + " frames (damaged partial file?)");
  for (std::size_t i = 0; i < fin.planes.size(); ++i)
    fin.planes[i] = r.data<double>(f, "finished/plane" + std::to_string(i), fin.planes[i].size());
  const std::size_t pixels = static_cast<std::size_t>(problem.pixels());
  fin.frame_sum = r.data<double>(f, "finished/frame_sum", pixels);
  h5::Id open = h5::group(H5Gopen2(f, "open", H5P_DEFAULT));
  if (open.valid()) {
    hsize_t count = 0;
    H5Gget_num_objs(open.get(), &count);
    for (hsize_t i = 0; i < count; ++i) {
      char name[64] = {};
      H5Gget_objname_by_idx(open.get(), i, name, sizeof name);
      const std::string g = std::string("open/") + name + "/";
      BlockSums b;
      b.shift = r.data<float>(f, g + "shift", pixels);
      b.frame_sum = r.data<double>(f, g + "frame_sum", pixels);
      b.terms = r.data<double>(f, g + "terms", problem.terms.size() * pixels);
      h5::Id d = h5::dataset(H5Dopen2(f, (g + "terms").c_str(), H5P_DEFAULT));
      b.block = r.integer(d.get(), "block");
      b.frames = r.integer(d.get(), "frames");
      b.tuples = r.integer(d.get(), "tuples");
      if (b.block < 0 || b.block >= blocks.count() || b.frames < 0 || b.tuples < 0 || b.tuples > b.frames ||
          b.frames > blocks.end(b.block) - blocks.begin(b.block))
        throw InputError(path, "open block " + std::to_string(b.block) + " (" + std::to_string(b.frames) +
                                   " frames) does not fit its sequence (damaged partial file?)");
      p.acc.open.push_back(std::move(b));
    }
  }
  return p;
}

SofiPartial merge_sofi_partials(const std::vector<std::string>& paths, int threads) {
  if (paths.empty()) throw UsageError("sofi merge", "no partial files given");
  std::vector<SofiPartial> parts;
  for (const auto& path : paths) parts.push_back(read_sofi_partial(path));
  std::vector<PartOrigin> origins;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& p = parts[i];
    origins.push_back({paths[i], p.stack_name, p.stack_fingerprint, p.parameter_fingerprint, p.sequence.count, p.begin,
                       p.end});
  }
  std::vector<std::size_t> order;
  for (const auto& placed : arrange_parts(origins, false)) order.push_back(placed.index);
  const SofiPartial& first = parts[order.front()];
  SofiPartial merged = first;
  merged.begin = 0;
  merged.end = first.sequence.count;
  const SofiProblem problem = make_sofi_problem(first.width, first.height, first.options);
  merged.acc = {};
  merged.acc.finished.reset(problem);
  for (std::size_t i : order) merge_accumulation(merged.acc, std::move(parts[i].acc), paths[i]);
  close_open_blocks(problem, SofiBlocks{first.sequence.count, first.block}, merged.acc, paths[order.back()], threads);
  return merged;
}

}  // namespace nanoscopy
