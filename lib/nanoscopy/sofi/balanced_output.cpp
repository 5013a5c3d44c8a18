#include "nanoscopy/sofi/balanced_output.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <future>
#include <iomanip>
#include <ostream>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/io/gray_label.hpp"
#include "nanoscopy/io/hdf5_images.hpp"
#include "nanoscopy/io/image_png.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/params/tool_schemas.hpp"
#include "nanoscopy/smre/cli.hpp"
#include "nanoscopy/smre/runner.hpp"

namespace nanoscopy {
int balanced_panel_label_scale(std::int64_t tile_width) {
  return tile_width >= 160 ? 2 : 1;  // glyphs of 2 x 2 pixels once a tile has room for them
}

const char* balanced_panel_label(int tile, std::int64_t tile_width) {
  static constexpr const char* long_names[4] = {"BALANCED", "RHO", "EPSILON", "DENSITY N"};
  static constexpr const char* short_names[4] = {"BAL", "RHO", "EPS", "N"};
  const int t = std::clamp(tile, 0, 3);
  return gray_label_width(long_names[t], balanced_panel_label_scale(tile_width)) <= tile_width ? long_names[t]
                                                                                          : short_names[t];
}

namespace {

// SMRE of each order: the user's smre settings (or smre's defaults) with the
// order's PSF, sigma / sqrt(n); SMRE may go below zero where RL cannot: clipped,
// since it restores a magnitude.
CumulantDeconvolver smre_deconvolver(const BalancedOptions& o, const Device& device) {
  return [o, device](std::span<float> image, std::int64_t w, std::int64_t h, int order) {
    SmreRunOptions ro;
    if (o.smre_prm.empty())
      ro.settings = smre_settings_from(smre_schema().defaults());
    else
      ro = smre_options_from_file(o.smre_prm, 1.0, true);
    ro.quiet = true;
    ro.settings.psf_sigma = o.settings.psf_sigma / std::sqrt(static_cast<double>(order));
    ro.source = "sofi order " + std::to_string(order) + " (--balanced)";
    SmreRunner runner(w, h, ro, smre_engine_factory(device));
    runner.run(image, 0);
    for (float& v : image) v = std::max(v, 0.0f);
  };
}


// A map scaled to [0, 1] for the panel: low..high percentiles of its finite pixels; masked pixels black.
std::vector<float> panel_tile(const std::vector<float>& v, bool unit_range) {
  std::vector<float> finite;
  for (float x : v)
    if (std::isfinite(x)) finite.push_back(x);
  float lo = 0, hi = 1;
  if (!unit_range && !finite.empty()) {
    lo = order_statistic(finite, 0.005);
    hi = order_statistic(finite, 0.995);
  }
  std::vector<float> out(v.size(), 0.0f);
  for (std::size_t i = 0; i < v.size(); ++i)
    if (std::isfinite(v[i])) out[i] = hi > lo ? std::clamp((v[i] - lo) / (hi - lo), 0.0f, 1.0f) : 0.0f;
  return out;
}

// 2 x 2 tiles: balanced, rho (0..1) / epsilon, density; each labelled in its top-left corner (four grey
// pictures side by side are otherwise told apart only by docs/sofi.md).
std::vector<float> parameter_panel(const BalancedImages& b, std::int64_t w, std::int64_t h) {
  const std::vector<float> tiles[4] = {panel_tile(b.balanced, false), panel_tile(b.rho, true),
                                       panel_tile(b.epsilon, false), panel_tile(b.density, false)};
  std::vector<float> panel(static_cast<std::size_t>(4 * w * h));
  for (int t = 0; t < 4; ++t)
    for (std::int64_t y = 0; y < h; ++y)
      std::copy_n(tiles[t].begin() + y * w, w,
                  panel.begin() + ((t / 2) * h + y) * 2 * w + (t % 2) * w);
  for (int t = 0; t < 4; ++t) {
    const std::int64_t x0 = (t % 2) * w, y0 = (t / 2) * h;
    burn_gray_label(panel.data(), 2 * w, 2 * h, x0, y0, x0 + w, y0 + h, balanced_panel_label(t, w),
                    balanced_panel_label_scale(w));
  }
  return panel;
}

double median_finite(const std::vector<float>& v) {
  std::vector<float> f;
  for (float x : v)
    if (std::isfinite(x)) f.push_back(x);
  if (f.empty()) return std::nan("");
  std::nth_element(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(f.size() / 2), f.end());
  return f[f.size() / 2];
}

}  // namespace

BalancedOptions balanced_options_from(const Params& p) {
  BalancedOptions o;
  o.enabled = p.get_bool("SOFI/balanced");
  o.settings.psf_sigma = p.get_real("SOFI/psf sigma");
  o.settings.mask_fraction = p.get_real("SOFI/parameter mask");
  o.method = p.get_string("SOFI/deconvolution");
  o.iterations = static_cast<int>(p.get_int("SOFI/rl iterations"));
  o.smre_prm = p.get_string("SOFI/deconvolution smre");
  if (o.enabled && p.source("SOFI/psf sigma").file == "default")
    throw UsageError("--balanced", "needs the camera PSF: give --psf-sigma PX (Gaussian standard deviation in pixels, "
                                   "e.g. from fit2d's sigma of single emitters)");
  return o;
}

std::vector<int> balanced_orders(const std::vector<int>& orders, bool cross, bool moments) {
  if (cross) throw UsageError("--balanced", "works on auto-cumulants; leave out --cross");
  if (moments) throw UsageError("--balanced", "needs cumulants; leave out --moments");
  const int n = orders.empty() ? 0 : *std::max_element(orders.begin(), orders.end());
  if (n < 3 || n > 4)
    throw UsageError("--balanced", "needs the largest order 3 or 4 (--orders 2,3,4; got " + join_ints(orders) +
                                       "): bSOFI balances orders 3 and 4, and rho, epsilon, N need order 4");
  std::vector<int> all;
  for (int k = 2; k <= n; ++k) all.push_back(k);
  return all;
}

std::vector<std::string> balanced_files(const std::string& sofi_path, int order) {
  const std::string ext = std::filesystem::path(sofi_path).extension().string();
  std::vector<std::string> files{sibling_path(sofi_path, "_balanced" + ext), sibling_path(sofi_path, "_balanced.png")};
  if (order >= 4) files.push_back(sibling_path(sofi_path, "_balanced_panel.png"));
  return files;
}

std::vector<std::string> write_balanced(const std::string& sofi_path, const SofiProblem& problem,
                                        const SofiImages& images, const BalancedOptions& options, const Device& device,
                                        double pixel_size_nm, bool quiet, std::ostream& out) {
  if (!options.enabled) return {};
  const auto t0 = std::chrono::steady_clock::now();
  const CumulantDeconvolver deconvolve = options.method == "smre"
                                             ? smre_deconvolver(options, device)
                                             : richardson_lucy_deconvolver(options.settings.psf_sigma, options.iterations,
                                                                           make_deconvolve_engine(device));
  const BalancedImages b = balance_sofi(problem, images, options.settings, deconvolve);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const std::string software = std::string("nanoscopy sofi ") + NANOSCOPY_VERSION;
  const std::string ext = std::filesystem::path(sofi_path).extension().string();
  const std::int64_t w = problem.width, h = problem.height;
  struct Page {
    std::string name, label;
    const std::vector<float>* pixels;
  };
  std::vector<Page> pages{{"balanced", "balanced (bSOFI, relative brightness)", &b.balanced}};
  if (b.order >= 4) {
    pages.push_back({"rho", "on-time ratio rho", &b.rho});
    pages.push_back({"epsilon", "brightness epsilon (photons per frame while on)", &b.epsilon});
    pages.push_back({"density", "density N (emitters per pixel)", &b.density});
  }
  // The three files are written side by side: each ends in an fsync (core/atomic_file.hpp), which waits
  // for the disk; in turn they took 0.13 s on this 2-core machine after a 512^2 run, side by side 0.06 s
  // (the panel's PNG the longest). Only the first uses HDF5 (not thread-safe); libpng and libtiff are safe
  // per file, and the output group's list is locked.
  const std::vector<std::string> files = balanced_files(sofi_path, b.order);
  std::vector<std::future<void>> writes;
  writes.push_back(std::async(std::launch::async, [&] {
    if (ext == ".h5" || ext == ".hdf5") {
      std::vector<NamedImage> named;
      for (const auto& pg : pages) named.push_back({pg.name, w, h, pg.pixels->data(), pg.label, pixel_size_nm});
      write_hdf5_images(files[0], named, software);
    } else {
      std::vector<const float*> data;
      std::vector<std::string> labels;
      for (const auto& pg : pages) {
        data.push_back(pg.pixels->data());
        labels.push_back(pg.label);
      }
      write_float_pages(files[0], w, h, data, pixel_size_nm, software, labels);
    }
  }));
  writes.push_back(std::async(std::launch::async, [&] { write_gray_png(files[1], w, h, b.balanced); }));
  if (b.order >= 4)
    writes.push_back(std::async(std::launch::async,
                                [&] { write_gray_png(files[2], 2 * w, 2 * h, parameter_panel(b, w, h), 0, 100); }));
  for (auto& wr : writes) wr.get();  // the first failure is rethrown; the futures left wait for their writes
  if (!quiet) {
    out << "  balanced SOFI of orders 2.." << b.order << " ("
        << (options.method == "smre" ? std::string("SMRE") : "Richardson-Lucy, " + std::to_string(options.iterations) +
                                                                 " iterations")
        << ", PSF sigma " << options.settings.psf_sigma << " px, " << std::fixed << std::setprecision(3) << seconds
        << " s)";
    if (b.order >= 4)
      out << std::setprecision(3) << ": median rho " << median_finite(b.rho) << ", epsilon " << std::setprecision(1)
          << median_finite(b.epsilon) << " photons/frame over the unmasked pixels";
    out << "\n";
  }
  return files;
}

}  // namespace nanoscopy
