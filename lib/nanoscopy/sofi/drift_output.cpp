#include "nanoscopy/sofi/drift_output.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/io/plot_png.hpp"
#include "nanoscopy/io/table_writer.hpp"

namespace nanoscopy {

std::vector<std::string> sofi_drift_paths(const std::string& output) {
  return {sibling_path(output, "_drift.csv"), sibling_path(output, "_drift.png")};
}

std::vector<std::string> write_sofi_drift_files(const std::string& output, const SofiCorrections& c,
                                                double pixel_size_nm) {
  if (!c.drift) throw std::logic_error("sofi: drift files without a drift estimate");
  const auto& d = *c.drift;
  const auto paths = sofi_drift_paths(output);
  const bool nm = pixel_size_nm > 0 && std::isfinite(pixel_size_nm);
  CsvOptions options;
  options.quote_header = false;
  std::vector<Column> columns{{"frame", ColumnType::i32}, {"dx_px", ColumnType::f64}, {"dy_px", ColumnType::f64}};
  if (nm) columns.insert(columns.end(), {{"dx_nm", ColumnType::f64}, {"dy_nm", ColumnType::f64}});
  auto writer = create_csv_writer(paths[0], columns, options);
  std::vector<double> rows;
  for (std::size_t i = 0; i < d.dx.size(); ++i) {
    rows.insert(rows.end(), {static_cast<double>(c.first + static_cast<std::int64_t>(i)), d.dx[i], d.dy[i]});
    if (nm) rows.insert(rows.end(), {d.dx[i] * pixel_size_nm, d.dy[i] * pixel_size_nm});
    if (rows.size() >= 5 * 4096) {
      writer->append(rows);
      rows.clear();
    }
  }
  writer->append(rows);
  writer->finish();

  PlotSpec spec;
  spec.title = "sofi --undrift: drift per frame";
  spec.x_label = "frame";
  spec.y_label = nm ? "drift [nm]" : "drift [px]";
  const double scale = nm ? pixel_size_nm : 1.0;
  // At most ~4,000 points: the plot is 900 px wide.
  const auto step = std::max<std::size_t>(1, d.dx.size() / 4000);
  PlotSeries x{"x", {}, {}, Rgb{31, 119, 180}, false, 2}, y{"y", {}, {}, Rgb{214, 39, 40}, false, 2};
  for (std::size_t i = 0; i < d.dx.size(); i += step) {
    x.x.push_back(static_cast<double>(c.first + static_cast<std::int64_t>(i)));
    x.y.push_back(d.dx[i] * scale);
    y.x.push_back(x.x.back());
    y.y.push_back(d.dy[i] * scale);
  }
  PlotSeries bx{"x per block", {}, {}, Rgb{158, 202, 225}, true, 1}, by{"y per block", {}, {}, Rgb{252, 174, 145}, true, 1};
  for (std::size_t k = 0; k < d.block_time.size(); ++k) {
    if (!d.block_solved[k]) continue;
    bx.x.push_back(static_cast<double>(c.first) + d.block_time[k]);
    bx.y.push_back(d.block_dx[k] * scale);
    by.x.push_back(bx.x.back());
    by.y.push_back(d.block_dy[k] * scale);
  }
  spec.series = {bx, by, x, y};
  write_plot_png(paths[1], spec);
  return paths;
}

}  // namespace nanoscopy
