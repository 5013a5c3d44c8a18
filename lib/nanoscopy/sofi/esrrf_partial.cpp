#include "nanoscopy/sofi/esrrf_partial.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/io/hdf5_util.hpp"
#include "nanoscopy/sofi/esrrf.hpp"

namespace nanoscopy {
namespace {

namespace h5 = detail::h5;
constexpr const char* kFormat = "nanoscopy esrrf partial 1";

[[noreturn]] void damaged(const std::string& path, const std::string& what) {
  throw InputError(path, "not a complete eSRRF partial file ('" + what + "' missing or unreadable)");
}

h5::Id open_attr(const std::string& path, hid_t obj, const char* name) {
  h5::Id a = h5::attribute(H5Aopen(obj, name, H5P_DEFAULT));
  if (!a.valid()) damaged(path, name);
  h5::Id space = h5::space(H5Aget_space(a.get()));
  if (!space.valid() || H5Sget_simple_extent_npoints(space.get()) != 1) damaged(path, name);
  return a;
}

double read_real(const std::string& path, hid_t obj, const char* name) {
  double v = 0;
  h5::Id a = open_attr(path, obj, name);
  if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, &v) < 0) damaged(path, name);
  return v;
}

std::int64_t read_int(const std::string& path, hid_t obj, const char* name) {
  const double v = read_real(path, obj, name);
  if (!(std::abs(v) < 9e15) || v != std::floor(v)) damaged(path, name);
  return static_cast<std::int64_t>(v);
}

std::string read_text(const std::string& path, hid_t obj, const char* name) {
  h5::Id a = open_attr(path, obj, name);
  h5::Id type = h5::type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  char* value = nullptr;
  if (H5Aread(a.get(), type.get(), &value) < 0 || !value) damaged(path, name);
  std::string out(value);
  H5free_memory(value);
  return out;
}

std::vector<double> read_data(const std::string& path, hid_t parent, const std::string& name, std::size_t expected) {
  h5::Id d = h5::dataset(H5Dopen2(parent, name.c_str(), H5P_DEFAULT));
  if (!d.valid()) damaged(path, name);
  h5::Id space = h5::space(H5Dget_space(d.get()));
  if (static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get())) != expected || !h5::stores_its_data(d.get()))
    throw InputError(path, "dataset '" + name + "' has the wrong size (damaged partial file?)");
  std::vector<double> out(expected);
  if (H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0) damaged(path, name);
  return out;
}

}  // namespace

EsrrfPartSums esrrf_part_sums(const EsrrfSlotSums& s, std::int64_t n, std::int64_t first_frame,
                              std::int64_t last_frame) {
  EsrrfPartSums out;
  out.n = n;
  out.first_frame = first_frame;
  out.last_frame = last_frame;
  const std::size_t size = s.k.size();
  out.s1.resize(size), out.s2.resize(size), out.p.resize(size), out.first.resize(size), out.last.resize(size);
  const double nn = static_cast<double>(n);
  for (std::size_t i = 0; i < size; ++i) {
    // x = K + d: S1 = n K + s1, S2 = s2 + 2 K s1 + n K^2, P = p + K (2 s1 - d_first - d_last) + (n - 1) K^2
    // with d_first = 0 (the first value is K) and d_last = last.
    const double k = s.k[i], s1 = s.s1[i], s2 = s.s2[i], p = s.p[i], last = s.last[i];
    out.s1[i] = nn * k + s1;
    out.s2[i] = s2 + 2 * k * s1 + nn * k * k;
    out.p[i] = n > 1 ? p + k * (2 * s1 - last) + (nn - 1) * k * k : 0.0;
    out.first[i] = k;
    out.last[i] = n > 1 ? k + last : k;
  }
  return out;
}

void esrrf_part_append(EsrrfPartSums& total, const EsrrfPartSums& later) {
  if (total.n == 0) {
    total = later;
    return;
  }
  for (std::size_t i = 0; i < total.s1.size(); ++i) {
    total.p[i] += later.p[i] + total.last[i] * later.first[i];
    total.s1[i] += later.s1[i];
    total.s2[i] += later.s2[i];
    total.last[i] = later.last[i];
  }
  total.n += later.n;
  total.last_frame = later.last_frame;
}

std::vector<float> esrrf_part_finish(const EsrrfPartSums& s, esrrf_math::Temporal kind) {
  std::vector<float> out(s.s1.size(), 0.0f);
  if (s.n < 1) return out;
  const double n = static_cast<double>(s.n);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double m = s.s1[i] / n;
    double v = 0;
    switch (kind) {
      case esrrf_math::Temporal::avg: v = m; break;
      case esrrf_math::Temporal::var: v = s.s2[i] / n - m * m; break;
      case esrrf_math::Temporal::tac2:
        v = s.n < 2 ? 0.0 : (s.p[i] - m * (2 * s.s1[i] - s.first[i] - s.last[i]) + (n - 1) * m * m) / (n - 1);
        break;
    }
    out[i] = static_cast<float>(v);
  }
  return out;
}

std::string esrrf_settings_text(const EsrrfSettings& s) {
  std::ostringstream o;
  o.precision(17);
  o << "magnification=" << s.magnification << ";radius=" << s.radius << ";sensitivity=" << s.sensitivity
    << ";intensity_weighting=" << s.intensity_weighting << ";temporal=" << static_cast<int>(s.temporal)
    << ";macro_pixel_correction=" << s.macro_pixel_correction;
  return o.str();
}

void write_esrrf_partial(const std::string& path, const EsrrfPartial& p) {
  h5::silence_errors();
  AtomicOutput output(path);
  auto fail = [&](const std::string& what) {
    throw OutputError(path, "cannot write '" + what + "' of the partial file: " + h5::last_error());
  };
  {
    h5::Id file = h5::file(H5Fcreate(output.temp_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    if (!file.valid()) throw OutputError(path, "cannot create the partial file: " + h5::last_error());
    const hid_t f = file.get();
    auto text = [&](hid_t o, const char* name, const std::string& v) {
      if (!h5::write_attribute(o, name, v)) fail(name);
    };
    auto real = [&](hid_t o, const char* name, double v) {
      if (!h5::write_attribute(o, name, v)) fail(name);
    };
    text(f, "format", kFormat);
    text(f, "movie_fingerprint", p.stack_fingerprint);
    text(f, "stack", p.stack_name);
    text(f, "settings", esrrf_settings_text(p.settings));
    real(f, "magnification", p.settings.magnification);
    real(f, "radius", p.settings.radius);
    real(f, "sensitivity", p.settings.sensitivity);
    real(f, "intensity_weighting", p.settings.intensity_weighting ? 1 : 0);
    real(f, "temporal", static_cast<int>(p.settings.temporal));
    real(f, "macro_pixel_correction", p.settings.macro_pixel_correction ? 1 : 0);
    real(f, "stack_frames", static_cast<double>(p.stack_frames));
    real(f, "frames_per_timepoint", static_cast<double>(p.frames_per_timepoint));
    real(f, "step", static_cast<double>(p.step));
    real(f, "begin", static_cast<double>(p.begin));
    real(f, "end", static_cast<double>(p.end));
    real(f, "width", static_cast<double>(p.width));
    real(f, "height", static_cast<double>(p.height));
    real(f, "pixel_size_nm", p.pixel_size_nm);
    const int m = p.settings.magnification;
    const hsize_t dims[2] = {static_cast<hsize_t>(p.height * m), static_cast<hsize_t>(p.width * m)};
    for (const auto& [index, s] : p.time_points) {
      const std::string g = "tp/" + std::to_string(index);
      h5::Id lcpl = h5::intermediate_group_lcpl();
      h5::Id group = h5::group(H5Gcreate2(f, g.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT));
      if (!group.valid()) fail(g);
      real(group.get(), "n", static_cast<double>(s.n));
      real(group.get(), "first_frame", static_cast<double>(s.first_frame));
      real(group.get(), "last_frame", static_cast<double>(s.last_frame));
      const std::pair<const char*, const std::vector<double>*> sets[] = {
          {"s1", &s.s1}, {"s2", &s.s2}, {"p", &s.p}, {"first", &s.first}, {"last", &s.last}};
      for (const auto& [name, values] : sets) {
        h5::Id space = h5::space(H5Screate_simple(2, dims, nullptr));
        h5::Id d = h5::dataset(
            H5Dcreate2(group.get(), name, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        if (!d.valid() || H5Dwrite(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values->data()) < 0)
          fail(g + "/" + name);
      }
    }
    if (!file.close()) throw OutputError(path, "cannot finish the partial file: " + h5::last_error());
  }
  output.commit();
}

bool is_esrrf_partial(const std::string& path) {
  h5::silence_errors();
  if (!std::filesystem::is_regular_file(path) || H5Fis_hdf5(path.c_str()) <= 0) return false;
  h5::Id access = h5::read_access_plist();
  h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get()));
  if (!file.valid() || H5Aexists(file.get(), "format") <= 0) return false;
  try {
    return read_text(path, file.get(), "format") == kFormat;
  } catch (const InputError&) {
    return false;
  }
}

EsrrfPartial read_esrrf_partial(const std::string& path) {
  plan_input(path, "the part file");
  h5::silence_errors();
  if (!std::filesystem::exists(path)) throw InputError(path, "no such file");
  h5::Id access = h5::read_access_plist();
  h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get()));
  if (!file.valid()) throw InputError(path, "not an HDF5 file: " + h5::last_error());
  const hid_t f = file.get();
  if (H5Aexists(f, "format") <= 0 || read_text(path, f, "format") != kFormat)
    throw InputError(path, "not an eSRRF partial file (write one with sofi esrrf --partial)");
  EsrrfPartial p;
  p.stack_fingerprint = read_text(path, f, "movie_fingerprint");
  p.stack_name = read_text(path, f, "stack");
  p.settings_text = read_text(path, f, "settings");
  p.settings.magnification = static_cast<int>(read_int(path, f, "magnification"));
  p.settings.radius = read_real(path, f, "radius");
  p.settings.sensitivity = read_real(path, f, "sensitivity");
  p.settings.intensity_weighting = read_int(path, f, "intensity_weighting") != 0;
  const std::int64_t temporal = read_int(path, f, "temporal");
  if (temporal < 0 || temporal > 2) damaged(path, "temporal");
  p.settings.temporal = static_cast<esrrf_math::Temporal>(temporal);
  p.settings.macro_pixel_correction = read_int(path, f, "macro_pixel_correction") != 0;
  p.stack_frames = read_int(path, f, "stack_frames");
  p.frames_per_timepoint = read_int(path, f, "frames_per_timepoint");
  p.step = read_int(path, f, "step");
  p.begin = read_int(path, f, "begin");
  p.end = read_int(path, f, "end");
  p.width = read_int(path, f, "width");
  p.height = read_int(path, f, "height");
  p.pixel_size_nm = read_real(path, f, "pixel_size_nm");
  const int m = p.settings.magnification;
  if (m < 1 || m > 64 || p.width < 1 || p.height < 1 || p.width * p.height * m * m > (std::int64_t{1} << 34) ||
      !(0 <= p.begin && p.begin < p.end && p.end <= p.stack_frames) || p.frames_per_timepoint < 0 || p.step < 0 ||
      esrrf_settings_text(p.settings) != p.settings_text)
    throw InputError(path, "its sizes, range or settings make no sense (damaged partial file?)");
  const auto tps = esrrf_time_points(0, p.stack_frames, p.frames_per_timepoint, p.step);
  const std::size_t pixels = static_cast<std::size_t>(p.width * p.height * m * m);
  h5::Id group = h5::group(H5Gopen2(f, "tp", H5P_DEFAULT));
  if (group.valid()) {
    hsize_t count = 0;
    H5Gget_num_objs(group.get(), &count);
    for (hsize_t i = 0; i < count; ++i) {
      char name[64] = {};
      H5Gget_objname_by_idx(group.get(), i, name, sizeof name);
      std::int64_t index = -1;
      try {
        index = std::stoll(name);
      } catch (const std::exception&) {
      }
      if (index < 0 || index >= static_cast<std::int64_t>(tps.size())) damaged(path, std::string("tp/") + name);
      const std::string g = std::string("tp/") + name;
      h5::Id tg = h5::group(H5Gopen2(f, g.c_str(), H5P_DEFAULT));
      if (!tg.valid()) damaged(path, g);
      EsrrfPartSums s;
      s.n = read_int(path, tg.get(), "n");
      s.first_frame = read_int(path, tg.get(), "first_frame");
      s.last_frame = read_int(path, tg.get(), "last_frame");
      const auto& t = tps[static_cast<std::size_t>(index)];
      if (s.n < 1 || s.first_frame < std::max(t.begin, p.begin) || s.last_frame >= std::min(t.end, p.end) ||
          s.last_frame - s.first_frame + 1 != s.n)
        throw InputError(path, g + " does not fit its time point and range (damaged partial file?)");
      s.s1 = read_data(path, f, g + "/s1", pixels);
      s.s2 = read_data(path, f, g + "/s2", pixels);
      s.p = read_data(path, f, g + "/p", pixels);
      s.first = read_data(path, f, g + "/first", pixels);
      s.last = read_data(path, f, g + "/last", pixels);
      p.time_points[index] = std::move(s);
    }
  }
  return p;
}

EsrrfPartial merge_esrrf_partials(const std::vector<std::string>& paths) {
  if (paths.empty()) throw UsageError("sofi merge", "no partial files given");
  std::vector<EsrrfPartial> parts;
  for (const auto& path : paths) parts.push_back(read_esrrf_partial(path));
  std::vector<std::size_t> order(parts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return parts[a].begin < parts[b].begin; });
  const EsrrfPartial& first = parts[order.front()];
  std::int64_t covered = 0;
  for (const std::size_t i : order) {
    const auto& p = parts[i];
    const std::string& path = paths[i];
    if (p.stack_fingerprint != first.stack_fingerprint || p.stack_frames != first.stack_frames)
      throw InputError(path, "cut from another stack than " + paths[order.front()] + " (" + first.stack_name + ")");
    if (p.settings_text != first.settings_text || p.frames_per_timepoint != first.frames_per_timepoint ||
        p.step != first.step || p.width != first.width || p.height != first.height)
      throw InputError(path, "made with other eSRRF settings than " + paths[order.front()] + " (" + p.settings_text +
                                 " vs " + first.settings_text + ")");
    if (p.begin < covered)
      throw InputError(path, "frames " + std::to_string(p.begin) + ":" + std::to_string(p.end) +
                                 " overlap another part's (which ends at " + std::to_string(covered) + ")");
    if (p.begin > covered)
      throw InputError(path, "frames " + std::to_string(covered) + ":" + std::to_string(p.begin) +
                                 " are in no part (a part is missing before this one)");
    covered = p.end;
  }
  if (covered != first.stack_frames)
    throw InputError(paths[order.back()], "frames " + std::to_string(covered) + ":" +
                                              std::to_string(first.stack_frames) + " are in no part (a part is missing)");
  EsrrfPartial merged = first;
  merged.begin = 0;
  merged.end = first.stack_frames;
  merged.time_points.clear();
  for (const std::size_t i : order)
    for (auto& [index, s] : parts[i].time_points) {
      auto& total = merged.time_points[index];
      if (total.n > 0 && s.first_frame != total.last_frame + 1)
        throw InputError(paths[i], "time point " + std::to_string(index) + " has a gap before frame " +
                                       std::to_string(s.first_frame) + " (damaged partial file?)");
      esrrf_part_append(total, s);
    }
  const auto tps = esrrf_time_points(0, first.stack_frames, first.frames_per_timepoint, first.step);
  for (std::size_t i = 0; i < tps.size(); ++i) {
    const auto it = merged.time_points.find(static_cast<std::int64_t>(i));
    if (it == merged.time_points.end() || it->second.n != tps[i].frames())
      throw InputError(paths[order.back()], "time point " + std::to_string(i) + " is incomplete after the merge");
  }
  return merged;
}

}  // namespace nanoscopy
