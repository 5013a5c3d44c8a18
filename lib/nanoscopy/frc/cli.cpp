#include "nanoscopy/frc/cli.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <tuple>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/finite_pixels.hpp"
#include "nanoscopy/core/frame_size.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/frc/loc_render.hpp"
#include "nanoscopy/io/frame_source.hpp"
#include "nanoscopy/io/plot_png.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"

namespace nanoscopy {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct ImagePair {
  std::int64_t width = 0, height = 0;
  std::vector<float> a, b;
};

std::string size_text(const StackInfo& i) {
  return std::to_string(i.width) + "x" + std::to_string(i.height);
}

std::string lower_extension(const std::string& path) {
  std::string e = fs::path(path).extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return e;
}

bool looks_like_localizations(const std::string& path) {
  const std::string e = lower_extension(path);
  return e == ".csv" || e == ".hdf5" || e == ".h5";
}

// Two independent images: page `page` of each.
ImagePair read_two_images(const std::string& first, const std::string& second, std::int64_t page, FrcReport& report) {
  auto ra = open_stack(first), rb = open_stack(second);
  const StackInfo &ia = ra->info(), &ib = rb->info();
  for (const StackInfo* i : {&ia, &ib})
    if (page >= i->frames)
      throw InputError(i->path, "--page " + std::to_string(page) + " is out of range: the file has " +
                                    std::to_string(i->frames) + " page" + (i->frames == 1 ? "" : "s"));
  if (ia.width != ib.width || ia.height != ib.height)
    throw InputError(ia.path + ", " + ib.path, "the images differ in size: " + size_text(ia) + " and " + size_text(ib) +
                                                   " px (an FRC compares two images of the same field)");
  ImagePair p;
  p.width = ia.width;
  p.height = ia.height;
  p.a.resize(static_cast<std::size_t>(ia.pixels_per_frame()));
  p.b.resize(p.a.size());
  ra->read_float(page, 1, p.a.data());
  rb->read_float(page, 1, p.b.data());
  require_finite_pixels(p.a, ia.path + " page " + std::to_string(page));
  require_finite_pixels(p.b, ib.path + " page " + std::to_string(page));
  report.mode = "images";
  report.detail = "page " + std::to_string(page) + " of " + size_text(ia) + " px";
  report.pixel_size_nm = ia.pixel_size_nm;
  return p;
}

// One stack: even vs odd frames, or first vs second half, summed while streaming.
ImagePair split_stack(const std::string& path, const std::string& split, const FrameRange& frames,
                      std::int64_t chunk_frames, int read_threads, FrcReport& report) {
  auto reader = open_stack(path);
  const StackInfo& info = reader->info();
  const auto range = frames.resolve(info.frames, info.path);
  const std::int64_t count = range.count();
  if (count < 2)
    throw InputError(info.path, "--split " + split + " needs at least 2 frames; " +
                                    (count == 1 ? std::string("the range holds 1") : "it holds none"));
  ImagePair p;
  p.width = info.width;
  p.height = info.height;
  const auto n = static_cast<std::size_t>(info.pixels_per_frame());
  p.a.assign(n, 0.0f);
  p.b.assign(n, 0.0f);
  // Sums in double: thousands of frames of large counts would lose float precision.
  std::vector<double> sa(n, 0.0), sb(n, 0.0);
  const bool odd_even = split == "odd-even";
  const std::int64_t half = range.first + count / 2;
  std::int64_t in_a = 0, in_b = 0;
  FrameSourceOptions source_options;
  source_options.read_threads = read_threads;
  FrameSource source(*reader, range, chunk_frames, std::move(source_options));
  FrameChunk chunk;
  while (source.next(chunk)) {
    for (std::int64_t f = 0; f < chunk.count; ++f) {
      const std::int64_t frame = chunk.first + f;
      const bool to_a = odd_even ? frame % 2 == 0 : frame < half;
      auto& target = to_a ? sa : sb;
      (to_a ? in_a : in_b) += 1;
      const float* src = chunk.floats().data() + static_cast<std::size_t>(f) * n;
      require_finite_pixels({src, n}, info.path + " frame " + std::to_string(frame));
      for (std::size_t i = 0; i < n; ++i) target[i] += src[i];
    }
  }
  for (std::size_t i = 0; i < n; ++i) p.a[i] = static_cast<float>(sa[i]), p.b[i] = static_cast<float>(sb[i]);
  report.mode = "split " + split;
  report.detail = "frames " + std::to_string(range.first) + ":" + std::to_string(range.last) + " of " +
                  size_text(info) + " px, " + std::to_string(in_a) + (odd_even ? " even + " : " + ") +
                  std::to_string(in_b) + (odd_even ? " odd" : "");
  report.pixel_size_nm = info.pixel_size_nm;
  return p;
}

// Localizations: random time blocks, rendered halves.
ImagePair render_localizations(const std::string& path, const Params& params, const FrameRange& frames,
                               FrcReport& report) {
  const double given = params.get_real("FRC/pixel size");
  const LocFormat format = loc_format_for(path);
  LocReadOptions ro;
  ro.pixel_size_nm = given;
  // A CSV is in nm: without a pixel size (given, or in the .yaml beside it) any size converts it to
  // px and back; 1 nm keeps the numbers.
  const bool nominal =
      format == LocFormat::thunderstorm_csv && !(given > 0) && !fs::exists(localization_metadata_path(path));
  if (nominal) ro.pixel_size_nm = 1.0;
  LocalizationFile file = read_localization_file(path, ro);
  LocRenderSettings s;
  s.pixel_size_nm = file.pixel_size_nm;
  if (!(s.pixel_size_nm > 0))
    throw UsageError("--pixel-size", path + " does not say its pixel size: give the camera pixel in nm");
  s.render_px_nm = params.get_real("FRC/render px");
  s.time_blocks = static_cast<int>(params.get_int("FRC/time blocks"));
  s.seed = static_cast<std::uint64_t>(params.get_int("FRC/seed"));
  // The rendered field: the camera frame, from the option or the .yaml beside the file (fit2d writes one
  // beside its CSV as beside its HDF5); else the localizations' extent, which is smaller.
  std::string field_source;
  if (const std::string field = params.get_string("FRC/field"); !field.empty()) {
    const auto size = parse_frame_size(field);
    if (!size)
      throw UsageError(params.source("FRC/field").describe(), "'" + field + "' is not WxH in camera pixels (e.g. 256x256)");
    std::tie(s.width_px, s.height_px) = *size;
    if (nominal) throw UsageError("--field", path + " does not say its pixel size: give --pixel-size too");
    field_source = "--field";
    // The picture this field makes, checked here so that the error names --field, not --render-px.
    const auto number = [](double v) {
      std::ostringstream t;
      t << v;
      return t.str();
    };
    const double scale = s.pixel_size_nm / s.render_px_nm;
    const double w = static_cast<double>(s.width_px) * scale, h = static_cast<double>(s.height_px) * scale;
    if (s.render_px_nm > 0 && !(w <= kMaxFrcRenderSide && h <= kMaxFrcRenderSide))
      throw UsageError(params.source("FRC/field").describe(),
                       "a field of " + field + " camera pixels of " + number(s.pixel_size_nm) +
                           " nm renders at " + number(s.render_px_nm) + " nm/px to more than " +
                           std::to_string(static_cast<int>(kMaxFrcRenderSide)) + " pixels a side: give the camera frame (e.g. 256x256) "
                           "or larger rendered pixels (--render-px)");
  } else if (file.width > 0 && file.height > 0) {
    s.width_px = file.width, s.height_px = file.height;
    field_source = fs::path(file.metadata_source).filename().string();
  } else {
    field_source = "the localizations' extent (no .yaml beside the file: give --field WxH for the camera frame)";
  }

  std::int64_t total = file.frames;
  for (const Localization& l : file.locs) total = std::max(total, l.frame + 1);
  const auto range = frames.resolve(std::max<std::int64_t>(total, 1), path);
  std::vector<Localization> locs;
  locs.reserve(file.locs.size());
  for (const Localization& l : file.locs)
    if (l.frame >= range.first && l.frame < range.last) locs.push_back(l);

  LocRenderedPair r = render_time_block_halves(locs, s, path);
  ImagePair p;
  p.width = r.width;
  p.height = r.height;
  p.a = std::move(r.a);
  p.b = std::move(r.b);
  std::ostringstream d;
  d << r.count_a << " + " << r.count_b << " localizations (" << loc_format_name(format) << ", frames " << r.first_frame
    << ".." << r.last_frame << ") in " << s.time_blocks << " time blocks, rendered at " << s.render_px_nm << " nm/px ("
    << p.width << "x" << p.height << "; field " << (s.width_px > 0 ? std::to_string(s.width_px) + "x" + std::to_string(s.height_px) + " px from " : std::string("from ")) << field_source << ")";
  report.mode = "localizations";
  report.detail = d.str();
  report.pixel_size_nm = s.render_px_nm;
  return p;
}

std::string fixed(double v, int digits) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}

}  // namespace

double resolution_nm(const FrcReport& r) {
  if (!(r.pixel_size_nm > 0) || r.result.crossing.status == FrcCrossing::Status::never_above) return 0;
  return r.result.crossing.resolution_px * r.pixel_size_nm;
}

std::string frc_json(const FrcReport& r) {
  const FrcResult& f = r.result;
  const FrcCrossing& c = f.crossing;
  json j;
  j["tool"] = "frc";
  j["mode"] = r.mode;
  j["inputs"] = r.inputs;
  j["detail"] = r.detail;
  j["backend"] = r.backend;
  j["width"] = f.width;
  j["height"] = f.height;
  j["side"] = f.side;
  j["pixel_size_nm"] = r.pixel_size_nm > 0 ? json(r.pixel_size_nm) : json(nullptr);
  j["threshold"] = f.threshold.name();
  j["status"] = to_string(c.status);
  j["reached"] = c.status == FrcCrossing::Status::crossed;
  const bool has = c.status != FrcCrossing::Status::never_above;
  j["crossing_ring"] = c.status == FrcCrossing::Status::crossed ? json(c.ring) : json(nullptr);
  j["crossing_frequency_per_px"] = c.status == FrcCrossing::Status::crossed ? json(c.frequency) : json(nullptr);
  j["resolution_px"] = has ? json(c.resolution_px) : json(nullptr);
  j["resolution_nm"] = resolution_nm(r) > 0 ? json(resolution_nm(r)) : json(nullptr);
  json curve = json::array();
  for (const FrcPoint& p : f.curve)
    curve.push_back({{"ring", p.ring},
                     {"mean_radius", p.radius},
                     {"frequency_per_px", p.frequency},
                     {"frc", p.frc},
                     {"pixels", p.pixels},
                     {"threshold", p.threshold}});
  j["curve"] = std::move(curve);
  return j.dump(2) + "\n";
}

std::string frc_curve_csv(const FrcReport& r) {
  std::ostringstream o;
  o.imbue(std::locale::classic());
  o << "ring,mean_radius,frequency_per_px,frc,pixels,threshold\n" << std::setprecision(10);
  for (const FrcPoint& p : r.result.curve)
    o << p.ring << "," << p.radius << "," << p.frequency << "," << p.frc << "," << p.pixels << "," << p.threshold
      << "\n";
  return o.str();
}

void write_frc_plot(const std::string& path, const FrcReport& r) {
  const FrcResult& f = r.result;
  const bool nm = r.pixel_size_nm > 0;
  PlotSpec spec;
  spec.title = "Fourier ring correlation";
  spec.x_label = nm ? "spatial frequency (1/nm)" : "spatial frequency (cycles/px)";
  spec.y_label = "FRC";
  PlotSeries curve, threshold;
  curve.label = "FRC";
  threshold.label = "threshold " + f.threshold.name();
  threshold.color = {255, 127, 14};
  threshold.dashed = true;
  double lowest = 0;
  for (const FrcPoint& p : f.curve) {
    const double x = nm ? p.frequency / r.pixel_size_nm : p.frequency;
    curve.x.push_back(x);
    curve.y.push_back(p.frc);
    threshold.x.push_back(x);
    threshold.y.push_back(p.threshold);
    lowest = std::min(lowest, p.frc);
  }
  spec.series = {curve, threshold};
  spec.y_min = std::min(-0.1, std::floor(lowest * 10) / 10);
  spec.y_max = 1.05;
  spec.x_min = 0;
  if (f.crossing.status == FrcCrossing::Status::crossed) {
    PlotMarker m;
    m.x = nm ? f.crossing.frequency / r.pixel_size_nm : f.crossing.frequency;
    m.label = fixed(f.crossing.resolution_px, 2) + " px" + (nm ? " = " + fixed(resolution_nm(r), 1) + " nm" : "");
    spec.markers.push_back(m);
  }
  write_plot_png(path, spec);
}

namespace {

// The two images the run compares: two files, a stack split in two, or localizations split by time blocks.
ImagePair pick_images(const FrcCliOptions& options, ToolContext& ctx, FrcReport& report) {
  const Params& p = ctx.params;
  const std::string split = p.get_string("Input/split");
  const bool page_given = p.source("Input/page").file != "default";
  const auto& in = options.inputs;
  if (in.empty()) throw UsageError("command line", "no input given (see frc --help)");
  if (in.size() > 2)
    throw UsageError("command line", "give two images, or one stack or localization file (got " +
                                         std::to_string(in.size()) + " inputs)");
  report.inputs = in;
  if (in.size() == 2) {
    if (split != "none") throw UsageError("--split", "splits one stack; with two images leave it out");
    return read_two_images(in[0], in[1], p.get_int("Input/page"), report);
  }
  if (split != "none") {
    if (page_given) throw UsageError("--page", "picks a page in two-image mode; --split uses the frames (--frames)");
    return split_stack(in[0], split, ctx.frames, p.get_int("Input/chunk frames"),
                       static_cast<int>(p.get_int("Input/read threads")), report);
  }
  if (looks_like_localizations(in[0])) return render_localizations(in[0], p, ctx.frames, report);
  throw UsageError("command line", "one image stack needs --split odd-even|halves (or give two images: frc A.tif B.tif)");
}

// Outputs first (each atomic), then the summary.
void write_outputs(const FrcCliOptions& options, const FrcReport& report) {
  OutputGroup outputs;  // the JSON, the curve and the plot appear together
  if (!options.json.empty()) write_file_atomically(options.json, frc_json(report));
  if (!options.curve.empty()) write_file_atomically(options.curve, frc_curve_csv(report));
  if (!options.plot.empty()) write_frc_plot(options.plot, report);
  outputs.commit();
}

void print_summary(std::ostream& out, const FrcCliOptions& options, const FrcReport& report) {
  const auto& in = options.inputs;
  const FrcResult& f = report.result;
  const FrcCrossing& c = f.crossing;
  out << "frc: " << in[0] << (in.size() == 2 ? " vs " + in[1] : "") << " (" << report.mode << ": " << report.detail
      << ") on " << report.backend << "\n";
  out << "  threshold:   " << f.threshold.name() << "\n";
  out << "  rings:       0.." << f.side / 2 << " (N = " << f.side << ")\n";
  switch (c.status) {
    case FrcCrossing::Status::crossed:
      out << "  crossing:    ring " << fixed(c.ring, 2) << " (" << fixed(c.frequency, 4) << " cycles/px)\n";
      out << "  resolution:  " << fixed(c.resolution_px, 2) << " px";
      break;
    case FrcCrossing::Status::not_reached:
      out << "  crossing:    not reached (the FRC stays above the threshold up to Nyquist)\n";
      out << "  resolution:  " << fixed(c.resolution_px, 2) << " px (Nyquist limit, not reached)";
      break;
    case FrcCrossing::Status::never_above:
      out << "  crossing:    none (the FRC never rises above the threshold: the images do not correlate)\n";
      out << "  resolution:  unknown";
      break;
  }
  if (resolution_nm(report) > 0)
    out << " = " << fixed(resolution_nm(report), 1) << " nm (" << report.pixel_size_nm << " nm/px)";
  out << "\n";
  for (const std::string* o : {&options.json, &options.curve, &options.plot})
    if (!o->empty()) out << "  wrote " << *o << "\n";
}

}  // namespace

void run_frc_cli(const FrcCliOptions& options, ToolContext& ctx, std::ostream& out) {
  const Params& p = ctx.params;
  const FrcThreshold threshold = parse_frc_threshold(p.get_string("FRC/threshold"));
  FrcReport report;
  // What the run writes, checked against what it reads before any work (core/run_files.hpp).
  for (const std::string& input : options.inputs) {
    if (looks_like_localizations(input))
      plan_localization_input(input);
    else
      plan_input(input.substr(0, input.rfind(":/")), "the input");
  }
  plan_output(options.json, "the results (--json)");
  plan_output(options.curve, "the curve (--curve)");
  plan_output(options.plot, "the plot (--plot)");
  check_run_plan();
  const ImagePair pair = pick_images(options, ctx, report);
  const double given = p.get_real("FRC/pixel size");
  if (given > 0 && report.mode != "localizations") report.pixel_size_nm = given;

  FrcGeometry g;
  g.width = pair.width;
  g.height = pair.height;
  g.tukey_fraction = p.get_real("FRC/tukey fraction");
  auto backend = make_frc_engine(ctx.device, g);
  report.backend = backend->name();
  report.result = compute_frc(*backend, pair.a, pair.b, threshold);
  write_outputs(options, report);
  print_summary(out, options, report);
}

}  // namespace nanoscopy
