#include "nanoscopy/loc/undrift/drift_files.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/plot_png.hpp"
#include "nanoscopy/io/table_writer.hpp"

namespace nanoscopy {

void write_undrift_csv(const std::filesystem::path& path, const DriftTrace& trace, double pixel_size_nm, bool markers) {
  if (!(pixel_size_nm > 0.0) || !std::isfinite(pixel_size_nm))
    throw UsageError(path.string(), "the pixel size must be a positive number of nm");
  CsvOptions options;
  options.quote_header = false;
  std::vector<Column> columns{{"frame", ColumnType::i32}, {"dx [nm]", ColumnType::f64}, {"dy [nm]", ColumnType::f64}};
  if (markers) columns.push_back({"markers", ColumnType::i32});
  auto writer = create_csv_writer(path.string(), columns, options);
  std::vector<double> rows;
  constexpr std::int64_t rows_per_append = 4096;
  for (std::int64_t t = 0; t < trace.frames(); ++t) {
    const auto i = static_cast<std::size_t>(t);
    rows.insert(rows.end(), {static_cast<double>(t), trace.dx[i] * pixel_size_nm, trace.dy[i] * pixel_size_nm});
    if (markers) rows.push_back(static_cast<double>(trace.markers[i]));
    if ((t + 1) % rows_per_append == 0) {
      writer->append(rows);
      rows.clear();
    }
  }
  writer->append(rows);
  writer->finish();
}

void write_drift_plot(const std::filesystem::path& path, const std::string& title, const DriftTrace& trace,
                      double pixel_size_nm, const DriftTrace* raw) {
  PlotSpec spec;
  spec.title = title;
  spec.x_label = "frame";
  spec.y_label = "drift [nm]";
  // The raw trace's free constant aligned with the trace's over the frames with markers.
  double offset_x = 0, offset_y = 0;
  if (raw) {
    std::int64_t seen = 0;
    for (std::int64_t t = 0; t < std::min(raw->frames(), trace.frames()); ++t) {
      const auto i = static_cast<std::size_t>(t);
      if (raw->markers[i] == 0) continue;
      offset_x += trace.dx[i] - raw->dx[i];
      offset_y += trace.dy[i] - raw->dy[i];
      ++seen;
    }
    if (seen > 0) {
      offset_x /= static_cast<double>(seen);
      offset_y /= static_cast<double>(seen);
    }
  }
  const auto series = [&](const DriftTrace& d, bool x, const std::string& label, Rgb color, int thickness) {
    PlotSeries s{label, {}, {}, color, false, thickness};
    // At most ~4,000 points: a plot 900 px wide shows no more, and long runs have 10⁵–10⁶ frames.
    const std::int64_t step = std::max<std::int64_t>(1, d.frames() / 4000);
    for (std::int64_t t = 0; t < d.frames(); t += step) {
      const auto i = static_cast<std::size_t>(t);
      if (raw == &d && d.markers[i] == 0) continue;  // the raw trace only where markers were seen
      s.x.push_back(static_cast<double>(t));
      const double offset = raw == &d ? (x ? offset_x : offset_y) : 0.0;
      s.y.push_back(((x ? d.dx[i] : d.dy[i]) + offset) * pixel_size_nm);
    }
    return s;
  };
  if (raw) {
    spec.series.push_back(series(*raw, true, "x markers", Rgb{158, 202, 225}, 1));
    spec.series.push_back(series(*raw, false, "y markers", Rgb{252, 174, 145}, 1));
  }
  spec.series.push_back(series(trace, true, "x", Rgb{31, 119, 180}, 2));
  spec.series.push_back(series(trace, false, "y", Rgb{214, 39, 40}, 2));
  write_plot_png(path.string(), spec);
}

}  // namespace nanoscopy
