#include "nanoscopy/cluster/part_file.hpp"

#include <charconv>
#include <filesystem>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/io/hdf5_util.hpp"

namespace nanoscopy {
namespace {

namespace h5 = detail::h5;

// Every string attribute of the root group that holds one string (H5Aread
// would write all the strings of a larger one).
herr_t collect(hid_t location, const char* name, const H5A_info_t*, void* data) {
  auto& out = *static_cast<std::map<std::string, std::string>*>(data);
  h5::Id attr = h5::attribute(H5Aopen(location, name, H5P_DEFAULT));
  h5::Id stored = h5::type(H5Aget_type(attr.get()));
  h5::Id space = h5::space(H5Aget_space(attr.get()));
  if (!attr.valid() || !stored.valid() || H5Tget_class(stored.get()) != H5T_STRING || !space.valid() ||
      H5Sget_simple_extent_npoints(space.get()) != 1)
    return 0;
  h5::Id type = h5::type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  char* value = nullptr;
  if (H5Aread(attr.get(), type.get(), &value) >= 0 && value) {
    out[name] = value;
    H5free_memory(value);
  }
  return 0;
}

}  // namespace

TextAttributes part_attributes(const std::string& format, const PartOrigin& o, const TextAttributes& extra) {
  TextAttributes out{{"format", format},
                     {"stack", o.stack_name},
                     {"movie_fingerprint", o.stack_fingerprint},
                     {"parameter_fingerprint", o.parameter_fingerprint},
                     {"stack_frames", std::to_string(o.stack_frames)},
                     {"begin", std::to_string(o.begin)},
                     {"end", std::to_string(o.end)}};
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

const std::string& PartFile::text(const std::string& name) const {
  const auto at = attributes.find(name);
  if (at == attributes.end()) throw InputError(origin.path, "the part file has no '" + name + "' attribute (damaged?)");
  return at->second;
}

std::int64_t PartFile::integer(const std::string& name) const {
  const std::string& s = text(name);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    throw InputError(origin.path, "attribute '" + name + "' is not a whole number ('" + s + "')");
  return v;
}

double PartFile::real(const std::string& name) const {
  const std::string& s = text(name);
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    throw InputError(origin.path, "attribute '" + name + "' is not a number ('" + s + "')");
  return v;
}

PartFile read_part_file(const std::string& path, const std::string& format, const std::string& how) {
  h5::silence_errors();
  std::error_code ec;
  plan_input(path, "the part file");
  if (!std::filesystem::exists(path, ec)) throw InputError(path, "no such file");
  PartFile part;
  part.origin.path = path;
  {
    h5::Id access = h5::read_access_plist();
    h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get()));
    if (!file.valid()) throw InputError(path, "not an HDF5 file: " + h5::last_error());
    hsize_t at = 0;
    H5Aiterate2(file.get(), H5_INDEX_NAME, H5_ITER_NATIVE, &at, collect, &part.attributes);
  }
  const auto kind = part.attributes.find("format");
  if (kind == part.attributes.end() || kind->second != format)
    throw InputError(path, "not a part file of this tool (write one with " + how + ")");
  PartOrigin& o = part.origin;
  o.stack_name = part.text("stack");
  if (!part.attributes.contains("movie_fingerprint")) throw InputError(path, "made by an older version of nanoscopy: it records no whole-movie fingerprint (movie_fingerprint), so merge cannot tell which movie it was cut from; make the part again");
  o.stack_fingerprint = part.text("movie_fingerprint");
  o.parameter_fingerprint = part.text("parameter_fingerprint");
  o.stack_frames = part.integer("stack_frames");
  o.begin = part.integer("begin");
  o.end = part.integer("end");
  if (!(0 <= o.begin && o.begin < o.end && o.end <= o.stack_frames))
    throw InputError(path, "frames " + std::to_string(o.begin) + ":" + std::to_string(o.end) + " of " +
                               std::to_string(o.stack_frames) + " make no sense (damaged part file?)");
  return part;
}

MergeParts read_merge_parts(const std::vector<std::string>& paths, const std::string& format, const std::string& how,
                            bool series) {
  MergeParts m;
  for (const auto& path : paths) {
    m.parts.push_back(read_part_file(path, format, how));
    m.origins.push_back(m.parts.back().origin);
  }
  m.order = arrange_parts(m.origins, series);
  m.frames = merged_frames(m.origins, m.order);
  return m;
}

}  // namespace nanoscopy
