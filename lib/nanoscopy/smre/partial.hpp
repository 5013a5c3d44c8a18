// smre beyond one process: part files (smre --frames A:B --partial part.h5: an
// HDF5 stack /data of the restored frames with the part attributes of
// part_file.hpp), smre merge (the pages of every part into one stack, in frame
// order, streamed), and the frames ranks send to rank 0 under mpirun.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/io/image_writer.hpp"

namespace nanoscopy {

inline constexpr const char* kSmrePartFormat = "nanoscopy smre part 1";

// The parameters that shape the restored frames (not where they are read from
// or written to): parts made with different values must not be merged.
std::string smre_parameter_fingerprint(const Params& p, double psf_sigma);

// mpirun: a rank other than 0 keeps its restored frames in an unnamed temporary
// file (TMPDIR) and sends them to rank 0 when it is done, a chunk at a time.
std::unique_ptr<ImageWriter> create_rank_spool(const ImageMeta& meta);
void send_spool(ImageWriter& spool, std::int64_t chunk_frames);
// Rank 0: appends `source`'s frames to `writer` as they arrive.
void receive_frames(int source, ImageWriter& writer, std::int64_t pixels_per_frame);

struct SmreMergeOptions {
  std::vector<std::string> parts;
  std::string output;
  bool series = false;  // parts of several files, in the order given
};

void run_smre_merge(const SmreMergeOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
