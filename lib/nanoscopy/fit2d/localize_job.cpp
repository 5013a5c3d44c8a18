#include "nanoscopy/fit2d/localize_job.hpp"

#include <filesystem>
#include <iomanip>
#include <ostream>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/cluster/fingerprint.hpp"
#include "nanoscopy/cluster/part_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/fit2d/partial.hpp"
#include "nanoscopy/fit2d/postprocess.hpp"
#include "nanoscopy/io/table_writer.hpp"

namespace nanoscopy {

namespace fs = std::filesystem;

Fit2dLocalizeJob::Fit2dLocalizeJob(const Fit2dOptions& options, ToolContext& ctx, const FrameJob& job,
                                   StackReader& reader, const Fit2dSetup& setup,
                                   std::chrono::steady_clock::time_point start, std::ostream& out)
    : options_(options), ctx_(ctx), job_(job), reader_(reader), info_(reader.info()), setup_(setup), start_(start),
      out_(out), wctx_(fit2d_writer_context(ctx.params, info_, setup.settings)) {}

Fit2dLocalizeJob::~Fit2dLocalizeJob() = default;

void Fit2dLocalizeJob::open_output() {
  if (job_.part() || !job_.root()) return;
  const Params& p = ctx_.params;
  const fs::path input_path(info_.path);
  const std::string output = options_.output.empty() ? sibling_path(input_path, "_locs.hdf5") : options_.output;
  sink_ = std::make_unique<Fit2dOutput>(output, output_format(p), wctx_, options_.track, p, info_.path);
  // movie.tif -o movie.csv would put the localizations' .yaml over the movie's own.
  for (const auto& file : sink_->writer().files())
    if (!info_.metadata_path.empty() && fs::weakly_canonical(file) == fs::weakly_canonical(info_.metadata_path))
      throw UsageError(file, "is the movie's own metadata: name the localizations differently (e.g. " +
                                 sibling_path(input_path, "_locs" + fs::path(output).extension().string()) + ")");
}

FrameJobHooks<Fit2dResult> Fit2dLocalizeJob::hooks() {
  FrameJobHooks<Fit2dResult> h;
  h.process = [this](const FrameJob&) { return process(); };
  h.write_part = [this](Fit2dResult& r) { write_part(r); };
  h.pack = [](const Fit2dResult& r) { return pack(r); };
  h.merge = [this](Fit2dResult&& mine, const std::vector<std::vector<double>>& all) {
    return merge(std::move(mine), all);
  };
  h.write_output = [this](Fit2dResult& r) { write_output(r); };
  return h;
}

// One process streams into the output; a part or a rank keeps its rows.
Fit2dResult Fit2dLocalizeJob::process() {
  const PipelineSettings& settings = setup_.settings;
  Fit2dResult r;
  const auto t0 = std::chrono::steady_clock::now();
  // One or two engines per GPU of --device cuda:all: the pipeline shares the chunks out, the output is the same.
  const auto engines = make_localize_engines(
      job_.device, LocalizeSettings{settings.detect, settings.fit, settings.regions, settings.camera_maps, settings.recenter_px},
      localize_engines_per_gpu(settings));
  std::vector<LocalizeEngine*> localizers;
  for (const auto& e : engines) localizers.push_back(e.get());
  if (sink_ && !job_.mpi())
    r.summary = run_localization(reader_, job_.mine(), localizers, settings,
                                 [&](std::span<const Localization> locs) { sink_->append(locs); });
  else
    r.summary = run_localization(reader_, job_.mine(), localizers, settings,
                                 [&](std::span<const Localization> locs) { pack_localizations(locs, r.rows); });
  // The engine's set-up counts, as it did when the pipeline built the engine itself.
  r.summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// fit2d --frames A:B --partial part.h5: the localizations of A:B and where they came from.
void Fit2dLocalizeJob::write_part(const Fit2dResult& r) const {
  const FrameRange::Resolved range = job_.range;
  PartOrigin origin;
  origin.stack_name = fs::path(info_.path).filename().string();
  origin.stack_fingerprint = stack_fingerprint(reader_);
  origin.parameter_fingerprint =
      fit2d_parameter_fingerprint(ctx_.params, setup_.settings.camera, options_.regions_file);
  origin.stack_frames = info_.frames;
  origin.begin = range.first;
  origin.end = range.last;
  TextAttributes extra = writer_context_attributes(wctx_);
  extra.insert(extra.end(), {{"input", info_.path},
                             {"candidates", std::to_string(r.summary.candidates)},
                             {"rejected", std::to_string(r.summary.rejected)}});
  auto table = create_hdf5_table_writer(options_.partial, "locs", fit2d_part_columns(),
                                        part_attributes(kFit2dPartFormat, origin, extra));
  table->append(r.rows);
  table->finish();
  if (!ctx_.quiet)
    out_ << "fit2d: frames " << range.first << ":" << range.last << " of " << info_.path << ": "
         << r.summary.localizations << " localizations on " << r.summary.device << " -> " << options_.partial
         << " (merge with fit2d merge)\n";
}

// mpirun: the rank's counts first, then its rows.
std::vector<double> Fit2dLocalizeJob::pack(const Fit2dResult& r) {
  std::vector<double> values{static_cast<double>(r.summary.candidates), static_cast<double>(r.summary.rejected)};
  values.insert(values.end(), r.rows.begin(), r.rows.end());
  return values;
}

// Rank 0: every rank's rows written in rank order (so in frame order).
Fit2dResult Fit2dLocalizeJob::merge(Fit2dResult&& mine, const std::vector<std::vector<double>>& all) {
  Fit2dResult total;
  total.summary = std::move(mine.summary);
  PipelineSummary& summary = total.summary;
  summary.candidates = summary.rejected = 0;
  for (const auto& rank_rows : all) {
    summary.candidates += static_cast<std::int64_t>(rank_rows.at(0));
    summary.rejected += static_cast<std::int64_t>(rank_rows.at(1));
    sink_->append(unpack_localizations(std::span<const double>(rank_rows).subspan(2)));
  }
  summary.frames = job_.range.count();
  summary.median_precision_nm = sink_->median_precision_nm();
  summary.device += " (" + std::to_string(job_.world.size) + " MPI ranks)";
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return total;
}

void Fit2dLocalizeJob::write_output(const Fit2dResult& r) {
  const PipelineSummary& summary = r.summary;
  const Camera& camera = setup_.settings.camera;
  sink_->finish();
  out_ << "fit2d: " << info_.path << ": " << summary.frames << " frames (" << info_.width << "x" << info_.height << " "
       << to_string(info_.type) << ") on " << summary.device << "\n";
  print_camera(out_, camera, setup_.camera_from_movie, setup_.movie_files);
  print_fit(out_, setup_, ctx_.params);
  print_fit2d_outputs(out_, *sink_, summary.candidates, summary.rejected, summary.median_precision_nm,
                      camera.pixel_size_nm);
  out_ << "  time:               " << std::setprecision(3) << summary.seconds << " s, " << std::setprecision(4)
       << static_cast<double>(summary.frames) / summary.seconds << " frames/s (reading took " << std::setprecision(3)
       << summary.read_seconds << " s)\n";
  // --undrift, --link, --render: on the file just written, as the subcommands would be run on it.
  const Fit2dPostprocess post = fit2d_postprocess(ctx_.params);
  if (post.any())
    run_fit2d_postprocess(post, sink_->writer().files().front(), output_format(ctx_.params), camera.pixel_size_nm,
                          ctx_, out_);
}

}  // namespace nanoscopy
