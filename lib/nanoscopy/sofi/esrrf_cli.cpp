#include "nanoscopy/sofi/esrrf_cli.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/clip_text.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/parse_number.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/frc/frc.hpp"
#include "nanoscopy/io/image_png.hpp"
#include "nanoscopy/cluster/fingerprint.hpp"
#include "nanoscopy/sofi/esrrf_partial.hpp"
#include "nanoscopy/cluster/mpi.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/sofi/esrrf.hpp"

namespace nanoscopy {
namespace {

using esrrf_math::Temporal;

const char* temporal_name(Temporal t) {
  switch (t) {
    case Temporal::avg: return "AVG";
    case Temporal::var: return "VAR";
    case Temporal::tac2: return "TAC2";
  }
  return "?";
}

double parse_number(const std::string& text, const std::string& where, const std::string& whole) {
  const std::optional<double> v = parse_finite_number(text);
  if (!v)
    throw UsageError(where, "expected KEY=A:B[:STEP] or KEY=V for radius and sensitivity, such as "
                            "radius=1:2:0.25,sensitivity=1:4 (got '" + clip_text(whole) + "')");
  return *v;
}

std::string fmt(double v, int digits = 4) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", digits, v);
  return text;
}

}  // namespace

EsrrfSettings esrrf_settings_from(const Params& p) {
  EsrrfSettings s;
  s.magnification = static_cast<int>(p.get_int("eSRRF/magnification"));
  s.radius = p.get_real("eSRRF/radius");
  s.sensitivity = p.get_real("eSRRF/sensitivity");
  s.intensity_weighting = p.get_bool("eSRRF/intensity weighting");
  s.macro_pixel_correction = p.get_bool("eSRRF/macro pixel correction");
  const std::string t = p.get_string("eSRRF/temporal");
  s.temporal = t == "var" ? Temporal::var : t == "tac2" ? Temporal::tac2 : Temporal::avg;
  return s;
}

EsrrfSweepSpec parse_esrrf_sweep(const std::string& text, const EsrrfSettings& current, const std::string& where) {
  EsrrfSweepSpec spec{{current.radius}, {current.sensitivity}};
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const auto eq = item.find('=');
    const std::string key = eq == std::string::npos ? item : item.substr(0, eq);
    if (eq == std::string::npos || (key != "radius" && key != "sensitivity"))
      throw UsageError(where, "expected KEY=A:B[:STEP] or KEY=V for radius and sensitivity, such as "
                              "radius=1:2:0.25,sensitivity=1:4 (got '" + clip_text(text) + "')");
    std::vector<double> parts;
    std::stringstream range(item.substr(eq + 1));
    for (std::string part; std::getline(range, part, ':');) parts.push_back(parse_number(part, where, text));
    if (parts.empty() || parts.size() > 3)
      throw UsageError(where, "'" + clip_text(item) + "': give A:B[:STEP] or one value");
    std::vector<double> values;
    if (parts.size() == 1) {
      values = {parts[0]};
    } else {
      const double a = parts[0], b = parts[1], step = parts.size() == 3 ? parts[2] : 1.0;
      if (!(step > 0) || b < a) throw UsageError(where, "'" + clip_text(item) + "': needs A <= B and a step > 0");
      for (int k = 0;; ++k) {
        const double v = a + k * step;
        if (v > b + 1e-9 * std::max(1.0, std::abs(b))) break;
        values.push_back(v);
        if (values.size() > 1000) throw UsageError(where, "'" + clip_text(item) + "': more than 1000 values");
      }
    }
    for (const double v : values)
      if (!(v > 0)) throw UsageError(where, "'" + clip_text(item) + "': values must be > 0");
    (key == "radius" ? spec.radii : spec.sensitivities) = values;
  }
  return spec;
}

namespace {

// The meta of the output TIFF (one page per time point).
// The image formats of every tool: float32 TIFF (ImageJ) or HDF5 (T,Y,X), both with the pixel size.
bool esrrf_image_extension(const std::string& ext) {
  return ext == ".tif" || ext == ".tiff" || ext == ".h5" || ext == ".hdf5";
}

ImageMeta esrrf_meta(std::int64_t wm, std::int64_t hm, double out_pixel_nm, const EsrrfSettings& settings,
                     const std::vector<EsrrfSlot>& time_points) {
  ImageMeta meta;
  meta.width = wm;
  meta.height = hm;
  meta.frames = static_cast<std::int64_t>(time_points.size());
  meta.type = PixelType::f32;
  meta.pixel_size_nm = out_pixel_nm;
  meta.software = std::string("nanoscopy sofi esrrf ") + NANOSCOPY_VERSION;
  meta.axis = StackAxis::time;
  for (const auto& t : time_points)
    meta.labels.push_back("eSRRF " + std::string(temporal_name(settings.temporal)) + " frames " +
                          std::to_string(t.begin) + ":" + std::to_string(t.end));
  meta.notes = {{"esrrf_magnification", std::to_string(settings.magnification)},
                {"esrrf_radius", fmt(settings.radius, 6)},
                {"esrrf_sensitivity", fmt(settings.sensitivity, 6)},
                {"esrrf_temporal", temporal_name(settings.temporal)},
                {"esrrf_intensity_weighting", settings.intensity_weighting ? "true" : "false"},
                {"esrrf_macro_pixel_correction", settings.macro_pixel_correction ? "true" : "false"}};
  return meta;
}

// sofi esrrf STACK --frames A:B --partial P.h5: the time points of the whole stack, summed over A:B.
void run_esrrf_partial(const EsrrfCliOptions& options, ToolContext& ctx, const EsrrfSettings& settings,
                       std::ostream& out) {
  const Params& p = ctx.params;
  if (p.get_bool("eSRRF/error map") || !p.get_string("eSRRF/sweep").empty())
    throw UsageError("--partial", "parts carry sums only: run --error-map and --sweep on the whole stack");
  const std::string ext = std::filesystem::path(options.partial).extension().string();
  if (ext != ".h5" && ext != ".hdf5") throw UsageError(options.partial, "write the part as .h5 (HDF5)");
  plan_input(options.input, "the stack");
  plan_output(options.partial, "the part file (--partial)");
  { AtomicOutput probe(options.partial); }
  auto reader = open_stack(options.input);
  const StackInfo info = reader->info();
  const auto range = ctx.frames.resolve(info.frames, info.path);
  const std::int64_t fpt = p.get_int("eSRRF/frames per timepoint"), step = p.get_int("eSRRF/step");
  if (step > 0 && fpt == 0) throw UsageError("--step", "a sliding window needs --frames-per-timepoint N as well");
  // The whole stack's time points; this part sums their frames inside [first, last).
  const auto all = esrrf_time_points(0, info.frames, fpt, step);
  const std::int64_t min_frames = settings.temporal == Temporal::avg ? 1 : 2;
  for (const auto& t : all)
    if (t.frames() < min_frames)
      throw InputError(info.path, std::string(temporal_name(settings.temporal)) + " needs at least 2 frames per time "
                                  "point; frames " + std::to_string(t.begin) + ":" + std::to_string(t.end) + " have " +
                                  std::to_string(t.frames()));
  std::vector<EsrrfSlot> slots;
  std::vector<std::int64_t> index;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::int64_t b = std::max(all[i].begin, range.first), e = std::min(all[i].end, range.last);
    if (b < e) slots.push_back({b, e, 1}), index.push_back(static_cast<std::int64_t>(i));
  }
  EsrrfPartial part;
  part.stack_fingerprint = stack_fingerprint(*reader);
  part.stack_name = std::filesystem::path(info.path).filename().string();
  part.settings = settings;
  part.settings_text = esrrf_settings_text(settings);
  part.stack_frames = info.frames;
  part.frames_per_timepoint = fpt;
  part.step = step;
  part.begin = range.first;
  part.end = range.last;
  part.width = info.width;
  part.height = info.height;
  part.pixel_size_nm = p.get_real("Output/pixel size") > 0 ? p.get_real("Output/pixel size") : info.pixel_size_nm;
  const std::int64_t chunk = p.get_int("Input/chunk frames");
  auto engine = make_esrrf_engine(ctx.device, {info.width, info.height, esrrf_slots_needed(slots, chunk)}, settings, chunk);
  EsrrfRunInput in;
  in.reader = reader.get();
  in.read_threads = static_cast<int>(p.get_int("Input/read threads"));
  in.chunk_frames = chunk;
  in.time_points = slots;
  in.want_sums = true;
  in.macro_pixel_correction = false;
  in.quiet = ctx.quiet;
  run_esrrf(*engine, settings, in, [&](EsrrfTimePoint& tp) {
    const auto& s = slots[tp.index];
    part.time_points[index[tp.index]] = esrrf_part_sums(tp.sums, tp.frames, s.begin, s.end - 1);
  });
  write_esrrf_partial(options.partial, part);
  if (!ctx.quiet)
    out << "sofi esrrf: frames " << range.first << ":" << range.last << " of " << info.path << " -> " << options.partial
        << " (sums of " << slots.size() << " of " << all.size() << " time points; sofi merge joins the parts)\n";
}

}  // namespace

void run_esrrf_merge(const std::vector<std::string>& parts, const std::string& output, ToolContext& ctx,
                     std::ostream& out) {
  const std::string ext = std::filesystem::path(output).extension().string();
  if (!esrrf_image_extension(ext))
    throw UsageError(output, "write the merged eSRRF image as .tif/.tiff or .h5/.hdf5 (float32, one image per time point)");
  const std::string png = sibling_path(output, ".png");
  plan_output(output, "the eSRRF image (-o)");
  plan_output(png, "the eSRRF preview");
  const EsrrfPartial merged = merge_esrrf_partials(parts);
  const EsrrfSettings& settings = merged.settings;
  const int m = settings.magnification;
  const std::int64_t wm = merged.width * m, hm = merged.height * m;
  const auto tps = esrrf_time_points(0, merged.stack_frames, merged.frames_per_timepoint, merged.step);
  auto writer = create_image_writer(output, esrrf_meta(wm, hm, merged.pixel_size_nm / m, settings, tps));
  for (std::size_t i = 0; i < tps.size(); ++i) {
    std::vector<float> image = esrrf_part_finish(merged.time_points.at(static_cast<std::int64_t>(i)), settings.temporal);
    if (settings.macro_pixel_correction) macro_pixel_correct(image, wm, hm, m);
    writer->write(image.data(), 1);
    if (i == 0) write_gray_png(png, wm, hm, image);
  }
  writer->close();
  if (!ctx.quiet)
    out << "sofi merge: " << parts.size() << " eSRRF parts of " << merged.stack_name << " (" << merged.stack_frames
        << " frames) -> " << output << " (" << wm << "x" << hm << ", " << tps.size()
        << (tps.size() == 1 ? " image" : " time points") << ")\n";
}

void run_sofi_esrrf(const EsrrfCliOptions& options, ToolContext& ctx, std::ostream& out) {
  if (options.input.empty()) throw UsageError("command line", "no input stack given (see sofi esrrf --help)");
  if (mpi_world().size > 1)  // every rank would compute and write the whole image
    throw UsageError("mpirun", "sofi esrrf runs in one process: on a cluster, parts in a job array "
                               "(scripts/nanoscopy-submit sofi esrrf STACK -o OUT --chunks N)");
  const Params& p = ctx.params;
  EsrrfSettings settings = esrrf_settings_from(p);
  const std::string output = options.output.empty() ? sibling_path(options.input, "_esrrf.tif") : options.output;
  const std::string ext = std::filesystem::path(output).extension().string();
  if (!esrrf_image_extension(ext))
    throw UsageError(output, "write the eSRRF image as .tif/.tiff or .h5/.hdf5 (float32, one image per time point)");
  if (!options.partial.empty()) return run_esrrf_partial(options, ctx, settings, out);
  const bool error_map = p.get_bool("eSRRF/error map");
  const std::string sweep_text = p.get_string("eSRRF/sweep");
  const std::string png = sibling_path(output, ".png");
  const std::string map_tif = sibling_path(output, "_errormap" + ext), map_png = sibling_path(output, "_errormap.png");
  const std::string sweep_csv = sibling_path(output, "_sweep.csv");
  // Every file of the run is named before any work (a clash or a missing folder is found at once).
  plan_input(options.input, "the stack");
  plan_output(output, "the eSRRF image (-o)");
  plan_output(png, "the eSRRF preview");
  if (error_map) plan_output(map_tif, "the error map (--error-map)"), plan_output(map_png, "the error map preview");
  if (!sweep_text.empty()) plan_output(sweep_csv, "the sweep table (--sweep)");
  { AtomicOutput probe(output); }

  auto reader = open_stack(options.input);
  const StackInfo info = reader->info();
  const auto range = ctx.frames.resolve(info.frames, info.path);
  const int m = settings.magnification;
  const std::int64_t w = info.width, h = info.height, wm = w * m, hm = h * m;
  const std::int64_t fpt = p.get_int("eSRRF/frames per timepoint"), step = p.get_int("eSRRF/step");
  if (step > 0 && fpt == 0) throw UsageError("--step", "a sliding window needs --frames-per-timepoint N as well");
  const std::vector<EsrrfSlot> time_points = esrrf_time_points(range.first, range.last, fpt, step);
  const std::int64_t min_frames = settings.temporal == Temporal::avg ? 1 : 2;
  for (const auto& t : time_points)
    if (t.frames() < min_frames)
      throw InputError(info.path, std::string(temporal_name(settings.temporal)) + " needs at least 2 frames per time "
                                  "point; frames " + std::to_string(t.begin) + ":" + std::to_string(t.end) + " have " +
                                  std::to_string(t.frames()));
  const double pixel_nm = p.get_real("Output/pixel size") > 0 ? p.get_real("Output/pixel size") : info.pixel_size_nm;
  const double out_pixel_nm = pixel_nm / m;
  const std::int64_t chunk = p.get_int("Input/chunk frames");
  const int threads = std::max(ctx.device.cpu_threads, 1);
  const int read_threads = static_cast<int>(p.get_int("Input/read threads"));
  const auto t0 = std::chrono::steady_clock::now();
  std::string engine_name;

  // ------------------------------------------------------------ sweep
  if (!sweep_text.empty()) {
    const EsrrfSweepSpec spec = parse_esrrf_sweep(sweep_text, settings, p.source("eSRRF/sweep").named("--sweep"));
    EsrrfSweepInput sin;
    sin.reader = reader.get();
    sin.first = range.first;
    sin.last = range.last;
    sin.radii = spec.radii;
    sin.sensitivities = spec.sensitivities;
    sin.make_engine = [&](const EsrrfGeometry& g, const EsrrfSettings& s) {
      auto e = make_esrrf_engine(ctx.device, g, s, chunk);
      engine_name = e->name();
      return e;
    };
    sin.chunk_frames = chunk;
    sin.read_threads = read_threads;
    sin.threads = threads;
    sin.each = [&](const EsrrfSweepRow& row, const std::vector<float>&) {
      if (!ctx.quiet)
        out << "  sweep: radius " << fmt(row.radius) << ", sensitivity " << fmt(row.sensitivity) << ": RSP "
            << fmt(row.rsp) << ", FRC resolution " << fmt(row.resolution_px) << " px\n";
    };
    std::size_t best = 0;
    const std::vector<EsrrfSweepRow> rows = esrrf_sweep(settings, sin, &best);
    std::ostringstream csv;
    csv << "radius,sensitivity,rsp,rse,rsf_sigma_px,frc_resolution_px,frc_resolution_nm,qnr,best\n";
    out << "sofi esrrf sweep (" << temporal_name(settings.temporal) << ", magnification " << m << ", "
        << range.count() << " frames; QnR = harmonic mean of RSP and the logistic FRC score):\n"
        << "  radius  sensitivity     RSP   FRC (px)  FRC (nm)     QnR\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      const double nm = out_pixel_nm > 0 ? r.resolution_px * out_pixel_nm : std::numeric_limits<double>::quiet_NaN();
      char line[200];
      std::snprintf(line, sizeof line, "  %6.3g  %11.3g  %6.4f  %9.3f  %8.1f  %6.4f%s\n", r.radius, r.sensitivity, r.rsp,
                    r.resolution_px, nm, r.qnr, i == best ? "  <- best" : "");
      out << line;
      csv << fmt(r.radius, 6) << "," << fmt(r.sensitivity, 6) << "," << fmt(r.rsp, 8) << "," << fmt(r.rse, 8) << ","
          << fmt(r.sigma, 6) << "," << fmt(r.resolution_px, 6) << "," << (std::isfinite(nm) ? fmt(nm, 6) : "") << ","
          << fmt(r.qnr, 8) << "," << (i == best ? 1 : 0) << "\n";
    }
    write_file_atomically(sweep_csv, csv.str());
    settings.radius = rows[best].radius;
    settings.sensitivity = rows[best].sensitivity;
    out << "  chosen: radius " << fmt(settings.radius) << ", sensitivity " << fmt(settings.sensitivity) << " -> "
        << sweep_csv << "\n";
  }

  // ------------------------------------------------------------ the image (or time series)
  auto engine = make_esrrf_engine(ctx.device, {w, h, esrrf_slots_needed(time_points, chunk)}, settings, chunk);
  engine_name = engine->name();
  const ImageMeta meta = esrrf_meta(wm, hm, out_pixel_nm, settings, time_points);
  auto writer = create_image_writer(output, meta);
  std::unique_ptr<ImageWriter> map_writer;
  if (error_map) {
    ImageMeta mm = meta;
    mm.labels.clear();
    for (const auto& t : time_points)
      mm.labels.push_back("error map frames " + std::to_string(t.begin) + ":" + std::to_string(t.end));
    map_writer = create_image_writer(map_tif, mm);
  }
  EsrrfRunInput in;
  in.reader = reader.get();
  in.read_threads = read_threads;
  in.chunk_frames = chunk;
  in.time_points = time_points;
  in.want_mean = error_map;
  in.quiet = ctx.quiet;
  std::size_t written = 0;
  std::vector<std::string> map_lines;
  run_esrrf(*engine, settings, in, [&](EsrrfTimePoint& tp) {
    writer->write(tp.image.data(), 1);
    if (written == 0) write_gray_png(png, wm, hm, tp.image);
    if (error_map) {
      const ErrorMapResult em = squirrel_error_map(tp.mean, w, h, tp.image, m, threads);
      map_writer->write(em.map.data(), 1);
      if (written == 0) write_gray_png(map_png, wm, hm, em.map);
      map_lines.push_back("  error map frames " + std::to_string(time_points[tp.index].begin) + ":" +
                          std::to_string(time_points[tp.index].end) + ": RSE " + fmt(em.rse) + ", RSP " +
                          fmt(em.rsp) + ", RSF sigma " + fmt(em.sigma) + " px" +
                          (out_pixel_nm > 0 ? " (" + fmt(em.sigma * out_pixel_nm) + " nm)" : "") + ", alpha " +
                          fmt(em.alpha) + ", beta " + fmt(em.beta) +
                          (em.sigma_at_bound ? " (RSF at its bound: no minimum found)" : ""));
    }
    ++written;
  });
  writer->close();
  if (map_writer) map_writer->close();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!ctx.quiet) {
    out << "sofi esrrf: " << range.count() << " frames of " << info.path << " (" << w << "x" << h << ") -> " << output
        << " (" << wm << "x" << hm << ", " << time_points.size() << (time_points.size() == 1 ? " image" : " time points")
        << ", " << temporal_name(settings.temporal) << ", radius " << fmt(settings.radius) << ", sensitivity "
        << fmt(settings.sensitivity) << (out_pixel_nm > 0 ? ", pixel " + fmt(out_pixel_nm) + " nm" : "") << ") on "
        << engine_name << " in " << fmt(seconds, 3) << " s\n";
    for (const auto& line : map_lines) out << line << "\n";
  }
}

}  // namespace nanoscopy
