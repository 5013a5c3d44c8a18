#include "nanoscopy/smre/partial.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <ostream>

#include "nanoscopy/cluster/fingerprint.hpp"
#include "nanoscopy/cluster/mpi.hpp"
#include "nanoscopy/cluster/part_file.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/io/frame_source.hpp"
#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {
namespace {

bool shapes_result(const std::string& path) {
  return path.rfind("output/", 0) != 0 && path.rfind("Input/", 0) != 0 && path != "input data/image";
}

class RankSpool final : public ImageWriter {
 public:
  explicit RankSpool(const ImageMeta& meta) : meta_(meta), file_(std::tmpfile()) {
    if (!file_) throw OutputError("TMPDIR", "cannot create a temporary file for this rank's frames");
  }
  ~RankSpool() override { std::fclose(file_); }
  void write(const void* frames, std::int64_t count) override {
    const auto n = static_cast<std::size_t>(count * meta_.width * meta_.height);
    if (std::fwrite(frames, sizeof(float), n, file_) != n)
      throw OutputError("TMPDIR", "cannot keep this rank's frames (disk full?)");
    written_ += count;
  }
  void close() override {}
  void send(std::int64_t chunk_frames) {
    const std::int64_t n = meta_.width * meta_.height;
    std::vector<float> chunk;
    std::rewind(file_);
    for (std::int64_t done = 0; done < written_; done += chunk_frames) {
      chunk.resize(static_cast<std::size_t>(std::min(chunk_frames, written_ - done) * n));
      if (std::fread(chunk.data(), sizeof(float), chunk.size(), file_) != chunk.size())
        throw OutputError("TMPDIR", "cannot read back this rank's frames");
      mpi_send(0, std::span<const float>(chunk));
    }
    mpi_send(0, std::span<const float>());  // the end
  }

 private:
  ImageMeta meta_;
  std::FILE* file_;
  std::int64_t written_ = 0;
};

}  // namespace

std::string smre_parameter_fingerprint(const Params& p, double psf_sigma) {
  Fnv f;
  for (const auto& spec : p.schema().specs())
    if (shapes_result(spec.path)) f.add(spec.path + "=" + p.text(spec.path) + ";");
  f.add(psf_sigma);  // --fwhm
  return f.hex();
}

std::unique_ptr<ImageWriter> create_rank_spool(const ImageMeta& meta) { return std::make_unique<RankSpool>(meta); }

void send_spool(ImageWriter& spool, std::int64_t chunk_frames) { dynamic_cast<RankSpool&>(spool).send(chunk_frames); }

void receive_frames(int source, ImageWriter& writer, std::int64_t pixels_per_frame) {
  for (;;) {
    const auto chunk = mpi_receive_floats(source);
    if (chunk.empty()) return;
    writer.write(chunk.data(), static_cast<std::int64_t>(chunk.size()) / pixels_per_frame);
  }
}

void run_smre_merge(const SmreMergeOptions& options, ToolContext& ctx, std::ostream& out) {
  const auto start = std::chrono::steady_clock::now();
  const MergeParts merge =
      read_merge_parts(options.parts, kSmrePartFormat, "smre --frames A:B --partial PART.h5", options.series);
  const auto& parts = merge.parts;
  const auto& order = merge.order;
  const std::int64_t frames = merge.frames;
  std::vector<std::unique_ptr<StackReader>> readers(parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) readers[i] = open_stack(parts[i].origin.path + ":/data");
  const StackInfo& first = readers[order.front().index]->info();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const StackInfo& info = readers[i]->info();
    const auto& o = parts[i].origin;
    if (info.frames != o.end - o.begin)
      throw InputError(o.path, "holds " + std::to_string(info.frames) + " frames, not the " +
                                   std::to_string(o.end - o.begin) + " of frames " + std::to_string(o.begin) + ":" +
                                   std::to_string(o.end) + " (damaged part file?)");
    if (info.width != first.width || info.height != first.height)
      throw InputError(o.path, "frames of " + std::to_string(info.width) + "x" + std::to_string(info.height) + ", not " +
                                   std::to_string(first.width) + "x" + std::to_string(first.height));
  }
  ImageMeta meta;
  meta.width = first.width;
  meta.height = first.height;
  meta.frames = frames;
  meta.type = PixelType::f32;
  meta.pixel_size_nm = first.pixel_size_nm;
  meta.software = std::string("nanoscopy smre ") + NANOSCOPY_VERSION;
  auto writer = create_image_writer(options.output, meta);
  Progress progress("smre merge", frames, ctx.quiet);
  std::int64_t done = 0;
  const std::int64_t chunk_frames = std::max<std::int64_t>(1, (std::int64_t{1} << 24) / (meta.width * meta.height));
  for (const auto& placed : order) {
    StackReader& reader = *readers[placed.index];
    FrameSource source(reader, {0, reader.info().frames}, chunk_frames);
    FrameChunk chunk;
    while (source.next(chunk)) {
      writer->write(chunk.floats().data(), chunk.count);
      progress.update(done += chunk.count);
    }
  }
  progress.finish();
  writer->close();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!ctx.quiet)
    out << "smre merge: " << parts.size() << " parts, " << frames << " frames" << (options.series ? " (series)" : "")
        << " -> " << options.output << " in " << std::fixed << std::setprecision(2) << seconds << " s\n";
}

}  // namespace nanoscopy
