#include "nanoscopy/fit2d/partial.hpp"

#include <chrono>
#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>
#include <utility>

#include "nanoscopy/cluster/part_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/fit2d/output.hpp"
#include "nanoscopy/fit2d/postprocess.hpp"

namespace nanoscopy {
namespace {

constexpr std::size_t kRow = 20;

std::string exact(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

}  // namespace

std::vector<Column> fit2d_part_columns() {
  std::vector<Column> columns;
  for (const char* name : {"frame", "x", "y", "photons", "sx", "sy", "bg", "lpx", "lpy", "net_gradient", "chi2",
                           "iterations", "status", "log_likelihood", "z", "lpz", "photons_unc", "bg_unc", "sx_unc",
                           "sy_unc"})
    columns.push_back({name, ColumnType::f64});
  return columns;
}

void pack_localizations(std::span<const Localization> locs, std::vector<double>& out) {
  for (const auto& l : locs)
    out.insert(out.end(), {static_cast<double>(l.frame), l.x, l.y, l.photons, l.sigma, l.sy(), l.background, l.lpx,
                           l.lpy, l.net_gradient, l.chi2, static_cast<double>(l.iterations),
                           static_cast<double>(static_cast<int>(l.status)), l.log_likelihood, l.z, l.lpz, l.photons_unc,
                           l.bg_unc, l.sx_unc, l.sy_unc});
}

std::vector<Localization> unpack_localizations(std::span<const double> rows) {
  std::vector<Localization> locs(rows.size() / kRow);
  for (std::size_t i = 0; i < locs.size(); ++i) {
    const double* v = rows.data() + i * kRow;
    Localization& l = locs[i];
    l.frame = static_cast<std::int64_t>(v[0]);
    l.x = v[1];
    l.y = v[2];
    l.photons = v[3];
    l.sigma = v[4];
    if (v[5] != v[4]) l.sigma_y = v[5];
    l.background = v[6];
    l.lpx = v[7];
    l.lpy = v[8];
    l.net_gradient = v[9];
    l.chi2 = v[10];
    l.iterations = v[11];
    l.status = static_cast<FitStatus>(static_cast<int>(v[12]));
    l.log_likelihood = v[13];
    l.z = v[14];
    l.lpz = v[15];
    l.photons_unc = v[16];
    l.bg_unc = v[17];
    l.sx_unc = v[18];
    l.sy_unc = v[19];
  }
  return locs;
}

TextAttributes writer_context_attributes(const LocWriterContext& c) {
  nlohmann::json parameters = nlohmann::json::array();
  for (const auto& [key, value] : c.parameters) parameters.push_back({key, value});
  TextAttributes a = {{"width", std::to_string(c.width)},
          {"height", std::to_string(c.height)},
          {"data_type", c.data_type},
          {"baseline", exact(c.camera.baseline)},
          {"sensitivity", exact(c.camera.sensitivity)},
          {"gain", exact(c.camera.em_gain)},
          {"qe", exact(c.camera.qe)},
          {"pixel_size_nm", exact(c.camera.pixel_size_nm)},
          {"version", c.version},
          {"provenance", parameters.dump()},
          {"movie", c.movie_yaml},
          {"fit_diagnostics", c.fit_diagnostics ? "1" : "0"},
          {"mle", c.mle ? "1" : "0"}};
  if (c.elliptical) a.push_back({"elliptical", "1"});  // only then: a round fit's part is as before
  if (c.three_d) a.push_back({"three_d", "1"});
  return a;
}

LocWriterContext writer_context_from(const PartFile& part) {
  LocWriterContext c;
  c.width = part.integer("width");
  c.height = part.integer("height");
  c.frames = part.origin.stack_frames;
  c.data_type = part.text("data_type");
  c.camera.baseline = part.real("baseline");
  c.camera.sensitivity = part.real("sensitivity");
  c.camera.em_gain = part.real("gain");
  c.camera.qe = part.real("qe");
  c.camera.pixel_size_nm = part.real("pixel_size_nm");
  c.version = part.text("version");
  try {
    for (const auto& pair : nlohmann::json::parse(part.text("provenance")))
      c.parameters.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
  } catch (const nlohmann::json::exception&) {
    throw InputError(part.origin.path, "the provenance attribute is not a list of name/value pairs (damaged part file?)");
  }
  c.movie_yaml = part.text("movie");
  c.fit_diagnostics = part.text("fit_diagnostics") == "1";
  c.elliptical = part.attributes.contains("elliptical") && part.text("elliptical") == "1";
  c.three_d = part.attributes.contains("three_d") && part.text("three_d") == "1";
  c.mle = part.text("mle") == "1";
  return c;
}

void run_fit2d_merge(const Fit2dMergeOptions& options, ToolContext& ctx, std::ostream& out) {
  const auto start = std::chrono::steady_clock::now();
  const MergeParts merge =
      read_merge_parts(options.parts, kFit2dPartFormat, "fit2d --frames A:B --partial PART.h5", options.series);
  const auto& parts = merge.parts;
  const auto& order = merge.order;
  const std::int64_t frames = merge.frames;

  // The merged file describes the whole recording: the first part's movie and
  // settings, with every frame (of every file, for --series).
  const PartFile& first = merge.first();
  LocWriterContext context = writer_context_from(first);
  context.frames = frames;
  if (options.series) {
    std::string inputs;  // each stack's input, in order: a new offset starts a new stack
    std::int64_t offset = -1;
    for (const auto& placed : order)
      if (std::exchange(offset, placed.offset) != placed.offset)
        inputs += (inputs.empty() ? "" : ", ") + parts[placed.index].text("input");
    for (auto& [key, value] : context.parameters)
      if (key == "Input file") value = inputs;
  }
  for (const auto& part : parts)
    if (part.integer("width") != context.width || part.integer("height") != context.height)
      throw InputError(part.origin.path, "frames of " + std::to_string(part.integer("width")) + "x" +
                                             std::to_string(part.integer("height")) + ", not " +
                                             std::to_string(context.width) + "x" + std::to_string(context.height) +
                                             " as in " + first.origin.path);
  // The part files record the camera in effect, not where its pixel size came from: taken as known.
  const Fit2dPostprocess post = fit2d_postprocess(ctx.params);
  check_fit2d_postprocess(post, ctx.params, frames, context.width, context.height, context.camera.pixel_size_nm, true);
  plan_fit2d_outputs(options.output, output_format(ctx.params), options.track, post);
  check_run_plan();
  Fit2dOutput output(options.output, output_format(ctx.params), context, options.track, ctx.params, options.output);

  std::int64_t candidates = 0, rejected = 0;
  for (const auto& placed : order) {
    const PartFile& part = parts[placed.index];
    LocReadOptions read;
    read.format = "hdf5";
    auto locs = read_localization_file(part.origin.path, read).locs;
    for (auto& l : locs) {
      if (l.frame < part.origin.begin || l.frame >= part.origin.end)
        throw InputError(part.origin.path, "a localization in frame " + std::to_string(l.frame) +
                                               ", outside the part's frames (damaged part file?)");
      l.frame += placed.offset;
    }
    output.append(locs);
    candidates += part.integer("candidates");
    rejected += part.integer("rejected");
  }
  output.finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!ctx.quiet) {
    out << "fit2d merge: " << parts.size() << " parts, " << frames << " frames" << (options.series ? " (series)" : "")
        << " in " << std::fixed << std::setprecision(2) << seconds << " s\n" << std::defaultfloat;
    print_fit2d_outputs(out, output, candidates, rejected, output.median_precision_nm(),
                        context.camera.pixel_size_nm);
  }
  // --undrift, --link, --render on the merged file, as on one run's output.
  if (post.any())
    run_fit2d_postprocess(post, output.writer().files().front(), output_format(ctx.params),
                          context.camera.pixel_size_nm, ctx, out);
}

}  // namespace nanoscopy
