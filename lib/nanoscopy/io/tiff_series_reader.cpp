// open_tiff(): one TIFF file, or the whole Micro-Manager series it belongs to.
// A series reads as one stack: the frames of its files one after another, in
// acquisition order. Every file is indexed at open (one walk of its IFD chain,
// no pixels read), so a missing, truncated or mismatched file is one clear
// error before any work starts; pixels are then read on demand, from the file
// that holds them, like any stack.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <set>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/io/formats.hpp"
#include "nanoscopy/io/micromanager_metadata.hpp"
#include "nanoscopy/io/micromanager_series.hpp"
#include "nanoscopy/io/tiff_stack.hpp"

namespace nanoscopy::detail {
namespace {

namespace fs = std::filesystem;

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  const bool same = fs::equivalent(a, b, ec);
  return !ec && same;
}

std::string frame_shape(const StackInfo& info) {
  return std::to_string(info.width) + "x" + std::to_string(info.height) + " " + to_string(info.type);
}

// Says once per process that naming one file read the whole series (the
// parallel readers of a tool open the stack again).
void tell_series_read(const std::string& named, const std::string& first, std::size_t files, std::int64_t frames) {
  static std::mutex mutex;
  static std::set<std::string> told;
  const std::lock_guard lock(mutex);
  if (quiet() || !told.insert(named).second) return;
  const RunFiles* run = RunFiles::current();
  std::cerr << (run ? run->tool() + ": " : std::string()) << named << ": one file of a Micro-Manager series: reading the series of "
            << files << " files from " << first << " (" << frames << " frames, in acquisition order)\n";
}

class SeriesReader final : public StackReader {
 public:
  SeriesReader(const std::string& named, std::unique_ptr<TiffStack> first, const SeriesPlan& plan) {
    const std::size_t n = plan.members.size();
    const std::string series = "the Micro-Manager series " + plan.members[0].path;
    starts_.push_back(0);
    for (std::size_t k = 0; k < n; ++k) {
      const SeriesMember& m = plan.members[k];
      const std::string role = "file " + std::to_string(k + 1) + " of " + std::to_string(n) + " of " + series;
      std::unique_ptr<TiffStack> file;
      if (k == 0) {
        file = std::move(first);
      } else {
        plan_input(m.path, "a file of " + series);
        std::error_code ec;
        if (!fs::exists(m.path, ec))
          throw InputError(m.path, "is missing: " + plan.source + " names it as " + role);
        try {
          file = open_tiff_file(m.path);
        } catch (const InputError& e) {
          throw InputError(e.where(), std::string(e.what()) + " (" + role + ")");
        }
      }
      const StackInfo& fi = file->info();
      if (k > 0 && (fi.width != members_[0]->info().width || fi.height != members_[0]->info().height ||
                    fi.type != members_[0]->info().type))
        throw InputError(m.path, "holds " + frame_shape(fi) + " frames but " + plan.members[0].path + " holds " +
                                     frame_shape(members_[0]->info()) + ": every file of " + series +
                                     " must have the same frame size and pixel type");
      if (m.planes >= 0 && fi.frames < m.planes)
        throw InputError(m.path, "holds " + std::to_string(fi.frames) + " frames but " + plan.source +
                                     " maps planes to " + std::to_string(m.planes) + " of its pages: the file is truncated (" +
                                     role + ")");
      starts_.push_back(starts_.back() + fi.frames);
      members_.push_back(std::move(file));
    }
    info_ = members_[0]->info();
    info_.path = named;
    info_.frames = starts_.back();
    info_.format += ", Micro-Manager series of " + std::to_string(n) + " files";
    if (!same_file(named, plan.members[0].path)) tell_series_read(named, plan.members[0].path, n, info_.frames);
  }

  void read_raw(std::int64_t first, std::int64_t count, void* dst) override {
    if (first < 0 || count < 0 || first > info_.frames || count > info_.frames - first)
      throw InputError(info_.path, "frames [" + std::to_string(first) + ", " + std::to_string(first + count) +
                                       ") are outside the stack (" + std::to_string(info_.frames) + " frames)");
    auto* out = static_cast<unsigned char*>(dst);
    const auto bpf = info_.bytes_per_frame();
    for_each_member(first, count, [&](StackReader& member, std::int64_t local, std::int64_t take) {
      member.read_raw(local, take, out);
      out += take * bpf;
    });
  }

  void will_read(std::int64_t first, std::int64_t count) override {
    if (first < 0 || count <= 0 || count > info_.frames - first) return;
    for_each_member(first, count, [](StackReader& member, std::int64_t local, std::int64_t take) {
      member.will_read(local, take);
    });
  }

  // Calls f(member, its first frame, frames) for each file holding part of series frames [first, first + count),
  // in order.
  template <class F>
  void for_each_member(std::int64_t first, std::int64_t count, F&& f) {
    while (count > 0) {
      const auto k = static_cast<std::size_t>(std::upper_bound(starts_.begin(), starts_.end(), first) - starts_.begin() - 1);
      const std::int64_t take = std::min(count, starts_[k + 1] - first);
      f(*members_[k], first - starts_[k], take);
      first += take;
      count -= take;
    }
  }

  // Another reader of the whole series for a decoding thread (FrameReader): every member's own.
  std::unique_ptr<StackReader> another_reader() const override {
    auto copy = std::unique_ptr<SeriesReader>(new SeriesReader());
    for (const auto& m : members_) {
      auto other = m->another_reader();
      if (!other) return nullptr;
      copy->members_.push_back(std::move(other));
    }
    copy->starts_ = starts_;
    copy->info_ = info_;
    return copy;
  }

 private:
  SeriesReader() = default;

  std::vector<std::unique_ptr<StackReader>> members_;
  std::vector<std::int64_t> starts_;  // the series frame each file starts at; the last entry is the total
};

bool looks_like_micromanager(const TiffStack& file) {
  const std::string name = std::filesystem::path(file.info().path).filename().string();
  return !file.micromanager_json().empty() || name.find("_MMStack") != std::string::npos ||
         name.find("NDTiffStack") != std::string::npos;
}

// One file on its own, with its Micro-Manager metadata when it has any.
std::unique_ptr<StackReader> single_file(std::unique_ptr<TiffStack> file) {
  if (!file->micromanager_json().empty())
    apply_micromanager_metadata(parse_micromanager_metadata(file->micromanager_json()), file->mutable_info());
  return file;
}

}  // namespace

std::unique_ptr<StackReader> open_tiff(const std::string& path) {
  const std::string first_path = series_first_file(path);
  const bool named_first = first_path == path;
  std::unique_ptr<TiffStack> first;
  try {
    first = open_tiff_file(first_path);
  } catch (const InputError& e) {
    if (named_first) throw;
    throw InputError(e.where(), std::string(e.what()) + " (the first file of the Micro-Manager series " + path +
                                    " belongs to)");
  }
  const SeriesPlan plan = find_series(first_path, first->description(), looks_like_micromanager(*first));
  const bool in_series = std::any_of(plan.members.begin(), plan.members.end(),
                                     [&](const SeriesMember& m) { return same_file(m.path, path); });
  if (plan.members.size() < 2 || !in_series) return single_file(named_first ? std::move(first) : open_tiff_file(path));
  if (!first->micromanager_json().empty())
    apply_micromanager_metadata(parse_micromanager_metadata(first->micromanager_json()), first->mutable_info());
  return std::make_unique<SeriesReader>(path, std::move(first), plan);
}

}  // namespace nanoscopy::detail
