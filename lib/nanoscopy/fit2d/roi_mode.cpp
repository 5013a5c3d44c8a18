#include "nanoscopy/fit2d/roi_mode.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <ostream>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/cluster/mpi.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/fit/engine.hpp"
#include "nanoscopy/io/table_writer.hpp"
#include "nanoscopy/loc/track/roi_tracker.hpp"

namespace nanoscopy {
namespace {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(std::min<double>(static_cast<double>(v.size() - 1), q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

// --roi: the fixed marker ROIs fitted in every frame, warm-started; one drift
// row per frame (and, with --stream, one line on stdout as soon as it is known).
void follow_rois(const Fit2dOptions& options, ToolContext& ctx, StackReader& reader, FrameRange::Resolved range,
                 const Camera& cam, const FitSettings& fit, int box, const std::string& output, std::ostream& out) {
  const StackInfo& info = reader.info();
  auto rois = parse_roi_file(options.roi_file, info.width, info.height, box);
  auto backend = make_fit_engine(ctx.device, fit);
  RoiTracker tracker(std::move(rois), *backend, cam.pixel_size_nm, info.width, info.height);
  auto table = create_csv_writer(output, {{"frame", ColumnType::u32}, {"dx [nm]", ColumnType::f64},
                                          {"dy [nm]", ColumnType::f64}, {"markers", ColumnType::i32},
                                          {"status", ColumnType::i32}},
                                 CsvOptions{false});
  std::vector<double> latency_us;
  std::int64_t lost = 0;
  auto last = std::chrono::steady_clock::now();
  const auto start = last;
  track_rois(reader, range, tracker, [&](const RoiFrameResult& r) {
    const auto now = std::chrono::steady_clock::now();
    latency_us.push_back(std::chrono::duration<double, std::micro>(now - last).count());  // read + cut + fit
    last = now;
    if (r.status == RoiFrameStatus::lost) ++lost;
    const double row[] = {static_cast<double>(r.frame), r.dx_nm, r.dy_nm, static_cast<double>(r.markers),
                          static_cast<double>(static_cast<int>(r.status))};
    table->append(row);
    if (options.stream) std::cout << format_roi_line(r) << std::endl;  // flushed: a stage controller reads it now
  });
  table->finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out << "fit2d --roi: " << info.path << ": " << range.count() << " frames, " << tracker.rois().rois.size()
      << " marker ROIs of " << tracker.rois().width << "x" << tracker.rois().height << " on " << backend->name() << "\n"
      << "  per-frame latency:  p50 " << percentile(latency_us, 0.5) << " us, p99 " << percentile(latency_us, 0.99)
      << " us (read, cut, fit)\n"
      << "  frames lost:        " << lost << "\n"
      << "  time:               " << seconds << " s\n"
      << "  output:             " << output << " (frame, dx [nm], dy [nm], markers, status 0 ok 1 partial 2 lost)\n";
}

}  // namespace

std::string roi_mode_output(const Fit2dOptions& options, const StackInfo& info) {
  return options.output.empty() ? sibling_path(info.path, "_roi_drift.csv") : options.output;
}

void run_roi_mode(const Fit2dOptions& options, ToolContext& ctx, StackReader& reader, FrameRange::Resolved range,
                  const PipelineSettings& settings, std::ostream& out) {
  if (!options.partial.empty() || mpi_world().size > 1)
    throw UsageError("--roi", "marker ROIs are followed frame by frame in one process (no --partial, no mpirun)");
  const std::string output = roi_mode_output(options, reader.info());
  // With --stream the summary goes to stderr: stdout carries only the per-frame lines.
  follow_rois(options, ctx, reader, range, settings.camera, settings.fit, settings.detect.box, output,
              options.stream ? std::cerr : out);
}

}  // namespace nanoscopy
