// smre as a user runs it: default output name, formats, the convergence log,
// a tolerance stop that stops, stacks, the paper's parameter listing, the
// weights table, control images, and bad input answered by one line.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <sstream>

#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

CommandResult smre(const std::string& args) { return run_command(shell_quote(app_path("smre")) + " " + args); }

// Blobs and a bar on a background, blurred by nothing: a "true" image.
std::vector<float> truth_image(std::int64_t w, std::int64_t h) {
  std::vector<float> v(static_cast<std::size_t>(w * h), 20.0f);
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      float& p = v[static_cast<std::size_t>(y * w + x)];
      if (x > w / 4 && x < w / 4 + 6 && y > 5 && y < h - 5) p += 80;
      const double dx = static_cast<double>(x) - 0.7 * static_cast<double>(w), dy = static_cast<double>(y) - 0.4 * static_cast<double>(h);
      p += static_cast<float>(120 * std::exp(-(dx * dx + dy * dy) / 18.0));
    }
  return v;
}

void write_stack(const fs::path& path, const std::vector<float>& pixels, std::int64_t w, std::int64_t h) {
  ImageMeta m;
  m.width = w;
  m.height = h;
  m.frames = static_cast<std::int64_t>(pixels.size()) / (w * h);
  m.type = PixelType::f32;
  auto out = create_image_writer(path.string(), m);
  out->write(pixels.data(), m.frames);
  out->close();
}

// blurred truth + noise, `frames` times with different noise
std::vector<float> noisy_stack(std::int64_t w, std::int64_t h, int frames, double sigma, unsigned seed) {
  const auto t = truth_image(w, h);
  std::vector<float> out;
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, static_cast<float>(sigma));
  for (int f = 0; f < frames; ++f)
    for (float v : t) out.push_back(v + g(rng));
  return out;
}

std::vector<float> read_all(const std::string& spec, StackInfo* info = nullptr) {
  auto r = open_stack(spec);
  std::vector<float> v(static_cast<std::size_t>(r->info().frames * r->info().pixels_per_frame()));
  r->read_float(0, r->info().frames, v.data());
  if (info) *info = r->info();
  return v;
}

void check_one_line(const CommandResult& r, int code, const std::string& where, const std::string& what) {
  check_one_line_error(r, "smre", code, where, what);
}

}  // namespace

TEST_CASE("smre --icd --psf 2 image.tif writes image_smre.tif, float32, the same size, finite") {
  TempDir dir;
  const auto input = dir / "image.tif";
  write_stack(input, noisy_stack(60, 44, 1, 2.0, 1), 60, 44);
  const auto r = smre("--quiet --icd --psf 2 --iterations 40 --weights closed-form " + shell_quote(input.string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("wrote " + (dir / "image_smre.tif").string()) != std::string::npos);
  CHECK(r.output.find("(estimated, mean)") != std::string::npos);
  StackInfo info;
  const auto x = read_all((dir / "image_smre.tif").string(), &info);
  CHECK(info.width == 60);
  CHECK(info.height == 44);
  CHECK(info.frames == 1);
  CHECK(info.type == PixelType::f32);
  CHECK(std::all_of(x.begin(), x.end(), [](float v) { return std::isfinite(v); }));
}

TEST_CASE("simulate: blur and noise a true image, restore it better than the measurement, log the history") {
  TempDir dir;
  const auto truth = dir / "truth.tif";
  write_stack(truth, truth_image(64, 64), 64, 64);
  const auto log = dir / "conv.csv";
  const auto r = smre("--quiet --simulate --noise 3 --psf 2 --icd --iterations 150 --tolerance 0 --report-interval 10 --log " +
                      shell_quote(log.string()) + " --weights closed-form " + shell_quote(truth.string()) + " -o " +
                      shell_quote((dir / "x.h5").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(dir / "x_simulated.h5"));
  const auto at = r.output.find("quality |x - x*| / |I - x*|: ");
  REQUIRE(at != std::string::npos);
  const double quality = std::stod(r.output.substr(at + 29));
  CHECK(quality < 0.95);
  CHECK(quality > 0.1);
  // The HDF5 output holds one frame of the input's size.
  StackInfo info;
  read_all((dir / "x.h5").string() + ":/data", &info);
  CHECK(info.width == 64);
  // The log: a header and a row per report interval (15), plus nothing else.
  std::istringstream lines(read_file(log));
  std::string line;
  std::getline(lines, line);
  CHECK(line == "frame,iteration,c1,c2,max_ratio,step,sweeps");
  int rows = 0;
  double last_ratio = 0;
  while (std::getline(lines, line)) {
    ++rows;
    last_ratio = std::stod(line.substr(line.find(',', line.find(',', line.find(',', line.find(',') + 1) + 1) + 1) + 1));
  }
  CHECK(rows == 15);
  CHECK(last_ratio < 1.05);  // the residual meets the multi-resolution constraint
}

TEST_CASE("the tolerance stop really stops, and the iteration cap holds") {
  TempDir dir;
  const auto input = dir / "in.tif";
  write_stack(input, noisy_stack(48, 48, 1, 2.0, 2), 48, 48);
  const auto loose = smre("--quiet --icd --psf 1.5 --noise 2 --tolerance 0.05 --iterations 5000 --weights closed-form " +
                          shell_quote(input.string()) + " -o " + shell_quote((dir / "a.tif").string()));
  INFO(loose.output);
  REQUIRE(loose.exit_code == 0);
  CHECK(loose.output.find("1 of 1 converged") != std::string::npos);
  const auto at = loose.output.find("iterations: ");
  REQUIRE(at != std::string::npos);
  const long iterations = std::stol(loose.output.substr(at + 12));
  CHECK(iterations < 5000);
  CHECK(iterations > 1);
  const auto capped = smre("--quiet --icd --psf 1.5 --noise 2 --tolerance 0 --iterations 7 --weights closed-form " +
                           shell_quote(input.string()) + " -o " + shell_quote((dir / "b.tif").string()));
  CHECK(capped.output.find("iterations: 7, 0 of 1 converged") != std::string::npos);
}

// The default tier: the note of a cap that bites (four frames, 10 iterations).
TEST_CASE("a cap that stops the frames first writes the result and says so") {
  TempDir dir;
  const auto r0 = run_command(shell_quote(app_path("bench")) + " -q simulate blinking -o " +
                              shell_quote((dir / "qd.tif").string()) + " --frames 4 --size 64 --emitters 30");
  REQUIRE_MESSAGE(r0.exit_code == 0, r0.output);
  const auto capped = smre(shell_quote((dir / "qd.tif").string()) + " --device cpu --iterations 10 -o " +
                           shell_quote((dir / "capped.tif").string()));
  CHECK(capped.exit_code == 0);
  CHECK(capped.output.find("smre: note: 4 of 4 frames stopped at the iteration cap (10)") != std::string::npos);
  CHECK(fs::exists(dir / "capped.tif"));
}

// The full tier: the defaults to convergence, three times (over a minute on two cores).
TEST_CASE("the defaults converge on ordinary frames; the stop is scale-free; a cap that bites says so" *
          doctest::test_suite("full")) {
  TempDir dir;
  // Four 64x64 camera frames of blinking emitters (the case a user reported running 10,000 iterations).
  const auto r0 = run_command(shell_quote(app_path("bench")) + " -q simulate blinking -o " +
                              shell_quote((dir / "qd.tif").string()) + " --frames 4 --size 64 --emitters 30");
  REQUIRE_MESSAGE(r0.exit_code == 0, r0.output);
  const auto r = smre(shell_quote((dir / "qd.tif").string()) + " -q --device cpu");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("4 of 4 converged") != std::string::npos);
  CHECK(r.output.find("note:") == std::string::npos);
  // The same frames x 10 (another camera gain): the same number of iterations.
  auto frames = read_all((dir / "qd.tif").string());
  for (float& v : frames) v *= 10.0f;
  write_stack(dir / "qd10.tif", frames, 64, 64);
  const auto r10 = smre(shell_quote((dir / "qd10.tif").string()) + " -q --device cpu");
  INFO(r10.output);
  const auto iterations = [](const std::string& text) {
    const auto at = text.find("iterations: ");
    return at == std::string::npos ? -1L : std::stol(text.substr(at + 12));
  };
  CHECK(iterations(r10.output) == iterations(r.output));
  // A cap that stops the frames first: the result is written, with one note saying so.
  const auto capped = smre(shell_quote((dir / "qd.tif").string()) + " --device cpu --iterations 10 -o " +
                           shell_quote((dir / "capped.tif").string()));
  CHECK(capped.exit_code == 0);
  CHECK(capped.output.find("smre: note: 4 of 4 frames stopped at the iteration cap (10)") != std::string::npos);
  CHECK(fs::exists(dir / "capped.tif"));
}

TEST_CASE("a stack: every frame in the range, each restored on its own") {
  TempDir dir;
  const auto input = dir / "stack.tif";
  auto frames = noisy_stack(40, 36, 3, 2.0, 3);
  std::copy_n(frames.begin(), 40 * 36, frames.begin() + 2 * 40 * 36);  // frame 2 = frame 0
  write_stack(input, frames, 40, 36);
  const auto r = smre("--quiet --icd --psf 1.5 --iterations 20 --tolerance 0 --weights closed-form " +
                      shell_quote(input.string()) + " -o " + shell_quote((dir / "all.tif").string()));
  REQUIRE(r.exit_code == 0);
  const auto all = read_all((dir / "all.tif").string());
  REQUIRE(all.size() == frames.size());
  CHECK(std::equal(all.begin(), all.begin() + 40 * 36, all.begin() + 2 * 40 * 36));
  CHECK_FALSE(std::equal(all.begin(), all.begin() + 40 * 36, all.begin() + 40 * 36));
  const auto part = smre("--quiet --icd --psf 1.5 --iterations 20 --tolerance 0 --weights closed-form --frames 1:3 " +
                         shell_quote(input.string()) + " -o " + shell_quote((dir / "part.tif").string()));
  REQUIRE(part.exit_code == 0);
  const auto some = read_all((dir / "part.tif").string());
  REQUIRE(some.size() == 2u * 40 * 36);
  CHECK(std::equal(some.begin(), some.end(), all.begin() + 40 * 36));
  // The axes stay: a movie (T) in, a movie out, as tifffile and ImageJ see it.
  if (python_available()) {
    for (const char* file : {"stack.tif", "all.tif"}) {
      const auto check = run_python("tiff_check_imagej.py", {(dir / file).string(), "TYX", "0"});
      CHECK_MESSAGE(check.exit_code == 0, check.output);
    }
  }
}

TEST_CASE("a focus series (ImageJ slices, Z) stays a Z stack") {
  TempDir dir;
  ImageMeta m;
  m.width = 40;
  m.height = 36;
  m.frames = 2;
  m.type = PixelType::f32;
  m.axis = StackAxis::z;
  m.pixel_size_nm = 65;
  const auto pixels = noisy_stack(40, 36, 2, 2.0, 5);
  auto out = create_image_writer((dir / "z.tif").string(), m);
  out->write(pixels.data(), 2);
  out->close();
  CHECK(open_stack((dir / "z.tif").string())->info().axis == StackAxis::z);
  const auto r = smre("--quiet --icd --psf 1.5 --iterations 5 --tolerance 0 --weights closed-form " +
                      shell_quote((dir / "z.tif").string()));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  StackInfo info;
  read_all((dir / "z_smre.tif").string(), &info);
  CHECK(info.axis == StackAxis::z);
  CHECK(info.pixel_size_nm == doctest::Approx(65));
  if (python_available()) {
    const auto check = run_python("tiff_check_imagej.py", {(dir / "z_smre.tif").string(), "ZYX", "65"});
    CHECK_MESSAGE(check.exit_code == 0, check.output);
  }
}

TEST_CASE("--print-weights: the reference weights for 1024^2, and the weights of an image's padded frame") {
  const auto r = smre("--print-weights --size 1024x1024 --weights closed-form --icd");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (const char* c : {"1,1,", ",0.0181658", "2,4,", ",0.0207498", ",0.0155408", ",0.00760004", ",0.002742",
                        "32,1024,", ",0.000825881"})
    CHECK(r.output.find(c) != std::string::npos);
  TempDir dir;
  write_stack(dir / "in.tif", noisy_stack(50, 40, 1, 1.0, 4), 50, 40);
  const auto img = smre("--print-weights --exact --weights closed-form --mrdepth 5 " + shell_quote((dir / "in.tif").string()));
  INFO(img.output);
  CHECK(img.output.find("on a 128x128 frame") != std::string::npos);  // 50x40 + 2x36 margin -> 128x128 (tile grid)
  CHECK(img.output.find("5,25,") != std::string::npos);
  CHECK(img.output.find("6,36,") == std::string::npos);
}

TEST_CASE("the paper's listing drives a run; --control saves the estimate every report interval") {
  TempDir dir;
  write_stack(dir / "truth.tif", truth_image(40, 40), 40, 40);
  const std::string prm = std::string(NANOSCOPY_SOURCE_DIR) + "/params/smre.prm";
  const auto r = smre("--quiet --params " + shell_quote(prm) +
                      " --noise 2 --iterations 4 --mrdepth 3 --report-interval 2 --control --weight-samples 40 " +
                      shell_quote((dir / "truth.tif").string()) + " -o " + shell_quote((dir / "out.tif").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(dir / "out_simulated.tif"));  // simulate = true in the listing
  CHECK(fs::exists(dir / "out_iter000002.tif"));
  CHECK(fs::exists(dir / "out_iter000004.tif"));
  CHECK(r.output.find("iterations: 4") != std::string::npos);
  // Without -o the listing's "output image = control.tif" (beside the current directory).
  const auto cwd = run_command("cd " + shell_quote(dir.path().string()) + " && " + shell_quote(app_path("smre")) +
                               " --quiet --params " + shell_quote(prm) +
                               " --noise 2 --iterations 2 --mrdepth 2 --weight-samples 40 truth.tif");
  INFO(cwd.output);
  CHECK(cwd.exit_code == 0);
  CHECK(fs::exists(dir / "control.tif"));
}

TEST_CASE("Poisson data with --anscombe: noise 1 in the transformed domain, counts back") {
  TempDir dir;
  std::mt19937 rng(5);
  const auto t = truth_image(48, 48);
  std::vector<float> counts;
  for (float v : t) counts.push_back(static_cast<float>(std::poisson_distribution<int>(v)(rng)));
  write_stack(dir / "counts.tif", counts, 48, 48);
  const auto r = smre("--quiet --anscombe --icd --psf 1.5 --iterations 60 --weights closed-form " +
                      shell_quote((dir / "counts.tif").string()) + " -o " + shell_quote((dir / "x.tif").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("noise sigma: 1 (Anscombe domain)") != std::string::npos);
  const auto x = read_all((dir / "x.tif").string());
  double mean_x = 0, mean_t = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mean_x += x[i], mean_t += t[i];
  CHECK(mean_x == doctest::Approx(mean_t).epsilon(0.05));  // back in counts, not in the transformed domain
}

TEST_CASE("bad input: one line naming the file or option, a distinct exit code, no output") {
  TempDir dir;
  write_stack(dir / "small.tif", noisy_stack(40, 40, 1, 1.0, 6), 40, 40);
  auto nan = noisy_stack(40, 40, 2, 1.0, 7);
  nan[40 * 40 + 17] = std::nanf("");
  write_stack(dir / "nan.tif", nan, 40, 40);
  auto negative = noisy_stack(40, 40, 1, 1.0, 8);
  negative[3] = -5.0f;
  write_stack(dir / "negative.tif", negative, 40, 40);
  const std::string small = shell_quote((dir / "small.tif").string());
  const std::string out = " -o " + shell_quote((dir / "out.tif").string());
  struct Case {
    std::string args;
    int code;
    std::string where, what;
  };
  const std::vector<Case> cases = {
      {"--psf 0 " + small, 2, "--psf", "in (0, inf)"},
      {"--psf -1 " + small, 2, "--psf", "in (0, inf)"},
      {"--noise -2 " + small, 2, "gaussian noise", ""},
      {"--psf 6 " + small, 2, "--psf", "wider than the 40x40 image"},
      {"--exact --mrdepth 41 " + small, 2, "MRdepth", "do not fit the 40x40 image"},
      {"--icd --iterations 20 --weights closed-form " + shell_quote((dir / "nan.tif").string()), 3, "nan.tif frame 1",
       "NaN or infinite"},
      {"--icd --anscombe --weights closed-form " + shell_quote((dir / "negative.tif").string()), 3,
       "negative.tif frame 0", "negative values"},
      {"--simulate " + small, 2, "gaussian noise", "--noise > 0"},
      {"--regularizer tv2 " + small, 2, "regularizer", "tv2"},
      {shell_quote((dir / "missing.tif").string()), 3, "missing.tif", "no such file"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    check_one_line(smre("--quiet " + c.args + out), c.code, c.where, c.what);
    CHECK_FALSE(fs::exists(dir / "out.tif"));
  }
}
