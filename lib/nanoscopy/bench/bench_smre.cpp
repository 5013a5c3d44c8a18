#include "nanoscopy/bench/bench_smre.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <unistd.h>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/smre/cli.hpp"
#include "nanoscopy/smre/runner.hpp"
#include "nanoscopy/smre/simulate.hpp"
#include "nanoscopy/bench/bench_common.hpp"

namespace nanoscopy {

namespace fs = std::filesystem;
using json = nlohmann::json;

void add_smre_bench_options(CLI::App& cmd, SmreBenchOptions& o) {
  cmd.add_option("--sizes", o.sizes, "image edges of the runtime sweep")->delimiter(',')->default_str("256,512,1024,2048");
  cmd.add_option("--iterations", o.iterations, "ADMM iterations per runtime measurement")->default_val(o.iterations);
  cmd.add_option("--mrdepth", o.mr_depth, "exact Dykstra: largest square edge")->default_val(o.mr_depth);
  cmd.add_option("--devices", o.devices, "devices (cpu, cuda:N); default: cpu and every GPU")->delimiter(',');
  cmd.add_option("--cpu-budget", o.cpu_budget_s, "seconds per CPU runtime measurement before scaling")
      ->default_val(o.cpu_budget_s);
  cmd.add_option("--truth", o.truth, "true image for the quality table (default: scikit-image's camera.png)");
  cmd.add_option("--noise", o.noise, "noise levels of the quality table")->delimiter(',')->default_str("1,3,10");
  cmd.add_option("--psf", o.psf_sigma, "PSF sigma (px)")->default_val(o.psf_sigma);
  cmd.add_option("--quality-iterations", o.quality_iterations, "iteration cap of the quality runs (tolerance 1e-3 sigma)")
      ->default_val(o.quality_iterations);
  cmd.add_option("--regularizer", o.regularizer, "regularizer of every run")->default_val(o.regularizer);
  cmd.add_option("--stack-frames", o.stack_frames, "frames of the 512^2 stack throughput run")
      ->default_val(o.stack_frames);
  cmd.add_flag("--skip-runtime", o.skip_runtime, "leave out the runtime sweep");
  cmd.add_flag("--skip-quality", o.skip_quality, "leave out the quality table");
  cmd.add_flag("--skip-stack", o.skip_stack, "leave out the stack throughput");
  cmd.add_option("--images", o.images, "write truth, measured and restored images of the quality table here");
  cmd.add_option("--json", o.json, "also write the results as JSON")->type_name("FILE");
}

namespace {

constexpr const char* kCamera = "/usr/lib/python3/dist-packages/skimage/data/camera.png";

struct TestImage {
  std::vector<float> pixels;
  std::int64_t width = 0, height = 0;
  std::string name;
};

TestImage load_truth(const std::string& path) {
  auto r = open_stack(path);
  TestImage t;
  t.width = r->info().width;
  t.height = r->info().height;
  t.pixels.resize(static_cast<std::size_t>(t.width * t.height));
  r->read_float(0, 1, t.pixels.data());
  t.name = fs::path(path).filename().string();
  return t;
}

// A synthetic stand-in when camera.png is missing: smooth blobs and sharp bars.
TestImage synthetic_truth(std::int64_t edge) {
  TestImage t;
  t.width = t.height = edge;
  t.name = "synthetic";
  t.pixels.assign(static_cast<std::size_t>(edge * edge), 30.0f);
  for (std::int64_t y = 0; y < edge; ++y)
    for (std::int64_t x = 0; x < edge; ++x) {
      float& p = t.pixels[static_cast<std::size_t>(y * edge + x)];
      if ((x / 24 + y / 40) % 3 == 0) p += 120;
      p += static_cast<float>(80 * std::sin(static_cast<double>(x) * 0.05) * std::sin(static_cast<double>(y) * 0.03));
    }
  return t;
}

SmreSettings base_settings(const SmreBenchOptions& o, Projection p) {
  SmreSettings s;
  s.psf_sigma = o.psf_sigma;
  s.projection = p;
  s.mr_depth = o.mr_depth;
  s.regularizer = parse_regularizer(o.regularizer);
  s.weights = WeightMethod::closed_form;  // start-up (the Monte Carlo) is excluded, as in the paper
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::size_t physical_memory() {
  return static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
}

json runtime_sweep(const SmreBenchOptions& o, const std::vector<BenchDevice>& devices, const TestImage& truth,
                   std::uint64_t seed, std::ostream& out) {
  json rows = json::array();
  out << "\n## Runtime: " << o.iterations << " ADMM iterations (Dykstra to tolerance 1e-3 sigma), PSF sigma "
      << o.psf_sigma << " px, noise 3, exact MRdepth " << o.mr_depth << "\n\n"
      << "| edge | variant | device | seconds | per iteration ms | mean sweeps | note |\n|---|---|---|---|---|---|---|\n";
  for (int edge : o.sizes) {
    auto image = reflect_to_size(truth.pixels, truth.width, truth.height, edge, edge);
    blur_and_add_noise(image, edge, edge, o.psf_sigma, 3.0, seed);
    const Padding pad = smre_padding(edge, edge, o.psf_sigma);
    std::vector<float> padded(static_cast<std::size_t>(pad.padded_width * pad.padded_height));
    pad_reflect(image, pad, padded);
    for (const auto& dev : devices)
      for (Projection proj : {Projection::exact, Projection::icd}) {
        const std::string variant = std::string(dev.device.kind == DeviceKind::cpu ? "CPU " : "GPU ") + to_string(proj);
        json row{{"edge", edge}, {"variant", variant}, {"device", dev.label}, {"projection", to_string(proj)},
                 {"iterations", o.iterations}, {"padded", pad.padded_width}};
        SmreSettings s = base_settings(o, proj);
        s.tolerance = 0;
        s.max_iterations = o.iterations;
        WeightOptions wo;
        wo.method = s.weights;
        const SetFamily fam{proj, o.mr_depth, pad.padded_width, pad.padded_height};
        const double q_bytes = static_cast<double>(fam.exact_tilings()) * static_cast<double>(padded.size()) * 4.0;
        if (dev.device.kind == DeviceKind::cpu && q_bytes > 0.6 * static_cast<double>(physical_memory())) {
          row["skipped"] = "the exact method's q arrays need " + std::to_string(q_bytes / 1e9).substr(0, 5) + " GB";
          out << "| " << edge << " | " << variant << " | " << dev.label << " | - | - | - | " << row["skipped"].get<std::string>()
              << " |\n";
          rows.push_back(row);
          continue;
        }
        try {
          const SmreProblem problem = make_smre_problem(pad.padded_width, pad.padded_height, s, wo);
          auto engine = make_smre_engine(dev.device, problem, 1);
          const std::vector<double> sigma{3.0};
          engine->start(padded, sigma);
          std::vector<std::uint8_t> active{1};
          std::vector<FrameStats> stats(1);
          long long done = 0;
          double sweeps = 0;
          const auto t0 = std::chrono::steady_clock::now();
          while (done < o.iterations) {
            engine->iterate(active, stats);
            ++done;
            sweeps += stats[0].sweeps;
            if (dev.device.kind == DeviceKind::cpu && seconds_since(t0) > o.cpu_budget_s) break;
          }
          const double measured = seconds_since(t0);
          const double total = measured * static_cast<double>(o.iterations) / static_cast<double>(done);
          row["seconds"] = total;
          row["measured_iterations"] = done;
          row["extrapolated"] = done < o.iterations;
          row["mean_sweeps"] = sweeps / static_cast<double>(done);
          row["engine"] = engine->name();
          out << "| " << edge << " | " << variant << " | " << dev.label << " | " << std::setprecision(4) << total
              << " | " << 1e3 * measured / static_cast<double>(done) << " | " << std::setprecision(3)
              << sweeps / static_cast<double>(done) << " | "
              << (done < o.iterations ? "scaled from " + std::to_string(done) + " iterations" : "") << " |\n";
        } catch (const DeviceError& e) {
          row["skipped"] = e.what();
          out << "| " << edge << " | " << variant << " | " << dev.label << " | - | - | - | " << e.what() << " |\n";
        }
        out.flush();
        rows.push_back(row);
      }
  }
  return rows;
}

void write_image(const fs::path& path, std::span<const float> v, std::int64_t w, std::int64_t h) {
  ImageMeta m;
  m.width = w;
  m.height = h;
  m.type = PixelType::f32;
  m.software = std::string("nanoscopy bench smre ") + NANOSCOPY_VERSION;
  auto writer = create_image_writer(path.string(), m);
  writer->write(v.data(), 1);
  writer->close();
}

json quality_table(const SmreBenchOptions& o, const BenchDevice& dev, const TestImage& truth, std::uint64_t seed,
                   bool quiet, std::ostream& out) {
  json rows = json::array();
  out << "\n## Quality: " << truth.name << " (" << truth.width << "x" << truth.height << "), PSF sigma " << o.psf_sigma
      << " px, " << o.regularizer << ", alpha 0.9 (closed-form weights), tolerance 1e-3 sigma, cap " << o.quality_iterations
      << ", on " << dev.label << "\n\n| noise | variant | |x-x*|/|I-x*| | iterations | seconds |\n|---|---|---|---|---|\n";
  if (!o.images.empty()) {
    fs::create_directories(o.images);
    write_image(fs::path(o.images) / "truth.tif", truth.pixels, truth.width, truth.height);
  }
  for (double noise : o.noise) {
    auto measured = truth.pixels;
    blur_and_add_noise(measured, truth.width, truth.height, o.psf_sigma, noise, seed);
    const double base = l2_distance(measured, truth.pixels);
    std::string tag;
    {
      std::ostringstream t;
      t << "noise" << noise;
      tag = t.str();
    }
    if (!o.images.empty()) write_image(fs::path(o.images) / ("measured_" + tag + ".tif"), measured, truth.width, truth.height);
    for (Projection proj : {Projection::icd, Projection::exact}) {
      json row{{"noise", noise}, {"projection", to_string(proj)}, {"device", dev.label}};
      if (proj == Projection::exact && dev.device.kind == DeviceKind::cpu) {
        row["skipped"] = "exact on the CPU takes hours at this size";
        rows.push_back(row);
        continue;
      }
      SmreRunOptions ro;
      ro.settings = base_settings(o, proj);
      ro.settings.noise_sigma = noise;
      ro.settings.max_iterations = o.quality_iterations;
      ro.quiet = quiet;
      SmreRunner runner(truth.width, truth.height, ro, smre_engine_factory(dev.device));
      auto x = measured;
      const auto t0 = std::chrono::steady_clock::now();
      const auto outcome = runner.run(x, 0);
      const double secs = seconds_since(t0);
      const double ratio = l2_distance(x, truth.pixels) / base;
      row["ratio"] = ratio;
      row["iterations"] = outcome[0].iterations;
      row["converged"] = outcome[0].converged;
      row["seconds"] = secs;
      out << "| " << noise << " | " << to_string(proj) << " | " << std::setprecision(4) << ratio << " | "
          << outcome[0].iterations << " | " << std::setprecision(3) << secs << " |\n";
      out.flush();
      if (!o.images.empty())
        write_image(fs::path(o.images) / (std::string(to_string(proj)) + "_" + tag + ".tif"), x, truth.width,
                    truth.height);
      rows.push_back(row);
    }
  }
  return rows;
}

json stack_throughput(const SmreBenchOptions& o, const BenchDevice& dev, const TestImage& truth, std::uint64_t seed,
                      bool quiet, std::ostream& out) {
  const std::int64_t edge = 512, n = edge * edge;
  const auto base = reflect_to_size(truth.pixels, truth.width, truth.height, edge, edge);
  std::vector<float> stack;
  stack.reserve(static_cast<std::size_t>(o.stack_frames * n));
  for (std::int64_t f = 0; f < o.stack_frames; ++f) {
    auto frame = base;
    blur_and_add_noise(frame, edge, edge, o.psf_sigma, 3.0, seed + static_cast<std::uint64_t>(f));
    stack.insert(stack.end(), frame.begin(), frame.end());
  }
  SmreRunOptions ro;
  ro.settings = base_settings(o, Projection::icd);
  ro.settings.noise_sigma = 3.0;
  ro.settings.tolerance = 0;
  ro.settings.max_iterations = 100;
  ro.max_batch = o.stack_frames;
  ro.quiet = quiet;
  SmreRunner runner(edge, edge, ro, smre_engine_factory(dev.device));
  const auto t0 = std::chrono::steady_clock::now();
  runner.run(stack, 0);
  const double secs = seconds_since(t0);
  const double fps = static_cast<double>(o.stack_frames) / secs;
  out << "\n## Stack: " << o.stack_frames << " frames of 512x512, ICD, 100 iterations, on " << dev.label << " ("
      << runner.engine_name() << ", batches of " << runner.batch_frames() << "): " << std::setprecision(4) << fps
      << " frames/s (" << secs << " s)\n";
  return json{{"device", dev.label},        {"frames", o.stack_frames}, {"edge", edge}, {"iterations", 100},
              {"batch", runner.batch_frames()}, {"seconds", secs},       {"frames_per_s", fps}};
}

}  // namespace

void run_smre_bench(const SmreBenchOptions& o, std::uint64_t seed, bool quiet, std::ostream& out) {
  const auto devices = bench_devices(o.devices);
  TestImage truth;
  if (!o.truth.empty()) truth = load_truth(o.truth);
  else if (fs::exists(kCamera)) truth = load_truth(kCamera);
  else truth = synthetic_truth(512);
  if (!o.json.empty()) AtomicOutput check(o.json);  // fail before measuring
  json doc = bench_document("smre");
  doc["truth"] = truth.name;
  out << "# bench smre (" << truth.name << ")\n";
  if (!o.skip_runtime) doc["runtime"] = runtime_sweep(o, devices, truth, seed, out);
  // Quality and stack throughput on the fastest device named (the last: GPUs follow the CPU).
  const BenchDevice& best = devices.back();
  if (!o.skip_quality) doc["quality"] = quality_table(o, best, truth, seed, quiet, out);
  if (!o.skip_stack) doc["stack"] = stack_throughput(o, best, truth, seed, quiet, out);
  if (!o.json.empty()) {
    write_file_atomically(o.json, doc.dump(2) + "\n");
    out << "\nwrote " << o.json << "\n";
  }
}

}  // namespace nanoscopy
