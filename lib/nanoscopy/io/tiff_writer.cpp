// TIFF stack writer, laid out the way ImageJ and tifffile lay out ImageJ
// stacks: header, the first IFD (with the ImageJ description), every frame's
// pixels back to back as one strip per frame, then the IFDs of frames 1..N-1.
// Readers that trust `images=N` and read the frames contiguously after the
// first IFD (ImageJ) and readers that walk the IFDs (libtiff, tifffile, our
// reader) both see the same stack. Frames stream straight to disk; the
// trailing IFDs are written by close(). Values are in the host byte order,
// which the header declares ("II" or "MM").
#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/tiff_format.hpp"

namespace nanoscopy::detail {
namespace {

using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

enum : u16 { kByte = 1, kShort = 3, kLong = 4, kRational = 5, kAscii = 2, kLong8 = 16 };

struct Field {
  u16 tag;
  u16 type;
  u64 count;
  std::vector<unsigned char> bytes;  // the values in host byte order
};

template <typename T>
void append(std::vector<unsigned char>& out, T value) {
  const std::size_t n = out.size();
  out.resize(n + sizeof(T));
  std::memcpy(out.data() + n, &value, sizeof(T));
}

Field short_field(u16 tag, u16 value) {
  Field f{tag, kShort, 1, {}};
  append(f.bytes, value);
  return f;
}

Field long_field(u16 tag, u32 value) {
  Field f{tag, kLong, 1, {}};
  append(f.bytes, value);
  return f;
}

// LONG in classic TIFF, LONG8 in BigTIFF (offsets and byte counts).
Field offset_field(u16 tag, u64 value, bool big) {
  if (!big) return long_field(tag, static_cast<u32>(value));
  Field f{tag, kLong8, 1, {}};
  append(f.bytes, value);
  return f;
}

Field ascii_field(u16 tag, const std::string& text) {
  Field f{tag, kAscii, text.size() + 1, {}};
  f.bytes.assign(text.begin(), text.end());
  f.bytes.push_back(0);
  return f;
}

Field rational_field(u16 tag, u32 numerator, u32 denominator) {
  Field f{tag, kRational, 1, {}};
  append(f.bytes, numerator);
  append(f.bytes, denominator);
  return f;
}

struct Layout {
  bool big = false;
  u64 header() const { return big ? 16 : 8; }
  u64 inline_bytes() const { return big ? 8 : 4; }
  u64 ifd_bytes(u64 entries) const { return big ? 8 + entries * 20 + 8 : 2 + entries * 12 + 4; }
  // IFD plus the values that do not fit inline, padded to an even size.
  u64 block_bytes(const std::vector<Field>& fields) const {
    u64 n = ifd_bytes(fields.size());
    for (const auto& f : fields)
      if (f.bytes.size() > inline_bytes()) n += (f.bytes.size() + 1) & ~u64{1};
    return n;
  }
};

// The fields of frame k's IFD; `first` adds the description and Software.
std::vector<Field> page_fields(const ImageMeta& meta, const Layout& layout, u64 data_offset, bool first) {
  const u64 bpf = static_cast<u64>(meta.width * meta.height) * bytes_per_pixel(meta.type);
  std::vector<Field> f;
  f.push_back(long_field(254, 0));  // NewSubfileType: a full-resolution page
  f.push_back(long_field(256, static_cast<u32>(meta.width)));
  f.push_back(long_field(257, static_cast<u32>(meta.height)));
  f.push_back(short_field(258, static_cast<u16>(8 * bytes_per_pixel(meta.type))));
  f.push_back(short_field(259, 1));  // no compression
  f.push_back(short_field(262, 1));  // min-is-black
  // DocumentName: the run this file belongs to (core/run_files.hpp), so a set's files can be told apart.
  if (const RunFiles* run = recorded_run(); first && run)
    f.push_back(ascii_field(269, "nanoscopy run " + run->generation() + ", manifest " + run->manifest_name()));
  if (first) {
    std::string description = imagej_description(meta.frames, meta.pixel_size_nm > 0.0, meta.axis);
    for (const auto& [name, value] : meta.notes) description += name + "=" + value + "\n";
    f.push_back(ascii_field(270, description));
  }
  f.push_back(offset_field(273, data_offset, layout.big));
  f.push_back(short_field(277, 1));
  f.push_back(long_field(278, static_cast<u32>(meta.height)));
  f.push_back(offset_field(279, bpf, layout.big));
  if (meta.pixel_size_nm > 0.0) {
    // Pixels per µm as 10^6 / (pixel size in pm): exact for sizes given to 0.001 nm,
    // so readers get 108 nm back, not 108.000003.
    const double picometres = std::clamp(std::round(meta.pixel_size_nm * 1000.0), 1.0, 4'294'967'295.0);
    f.push_back(rational_field(282, 1'000'000, static_cast<u32>(picometres)));
    f.push_back(rational_field(283, 1'000'000, static_cast<u32>(picometres)));
    f.push_back(short_field(296, 1));  // ResolutionUnit none: the unit is in the description, as ImageJ does
  }
  if (first && !meta.software.empty()) f.push_back(ascii_field(305, meta.software));
  f.push_back(short_field(339, meta.type == PixelType::f32 ? 3 : 1));
  if (first && !meta.labels.empty()) {
    const ImageJLabels ij = imagej_labels(meta.labels);
    Field counts{50838, kLong, ij.counts.size(), {}};
    for (const u32 c : ij.counts) append(counts.bytes, c);
    f.push_back(std::move(counts));
    f.push_back(Field{50839, kByte, ij.bytes.size(), ij.bytes});
  }
  return f;
}

// Appends the IFD at file offset `at` with its out-of-line values after it.
void encode_block(std::vector<unsigned char>& out, const Layout& layout, const std::vector<Field>& fields, u64 at,
                  u64 next) {
  const std::size_t start = out.size();
  u64 extra = at + layout.ifd_bytes(fields.size());
  std::vector<unsigned char> values;
  if (layout.big)
    append<u64>(out, fields.size());
  else
    append<u16>(out, static_cast<u16>(fields.size()));
  for (const auto& f : fields) {
    append<u16>(out, f.tag);
    append<u16>(out, f.type);
    if (layout.big)
      append<u64>(out, f.count);
    else
      append<u32>(out, static_cast<u32>(f.count));
    if (f.bytes.size() <= layout.inline_bytes()) {
      const std::size_t n = out.size();
      out.resize(n + layout.inline_bytes(), 0);
      std::memcpy(out.data() + n, f.bytes.data(), f.bytes.size());
    } else {
      if (layout.big)
        append<u64>(out, extra);
      else
        append<u32>(out, static_cast<u32>(extra));
      values.insert(values.end(), f.bytes.begin(), f.bytes.end());
      if (f.bytes.size() % 2) values.push_back(0);
      extra += (f.bytes.size() + 1) & ~std::size_t{1};
    }
  }
  if (layout.big)
    append<u64>(out, next);
  else
    append<u32>(out, static_cast<u32>(next));
  out.insert(out.end(), values.begin(), values.end());
  if (out.size() - start != layout.block_bytes(fields)) throw std::logic_error("tiff writer: IFD block size mismatch");
}

struct Plan {
  Layout layout;
  u64 bytes_per_frame = 0;
  u64 first_block = 0;  // bytes of IFD 0 with its values
  u64 later_block = 0;  // bytes of each later IFD with its values
  u64 data_offset = 0;  // frame 0's pixels
  u64 total = 0;
};

Plan plan_for(const ImageMeta& meta, bool big) {
  Plan p;
  p.layout.big = big;
  p.bytes_per_frame = static_cast<u64>(meta.width * meta.height) * bytes_per_pixel(meta.type);
  p.first_block = p.layout.block_bytes(page_fields(meta, p.layout, 0, true));
  p.later_block = p.layout.block_bytes(page_fields(meta, p.layout, 0, false));
  p.data_offset = p.layout.header() + p.first_block;
  const u64 frames = static_cast<u64>(meta.frames);
  p.total = p.data_offset + frames * p.bytes_per_frame + (frames > 0 ? frames - 1 : 0) * p.later_block;
  return p;
}

std::string errno_text(int err) {
  return std::strerror(err);
}

class TiffStackWriter final : public ImageWriter {
 public:
  TiffStackWriter(const std::string& path, const ImageMeta& meta, bool bigtiff)
      : meta_(meta), out_(path), plan_(plan_for(meta, bigtiff)) {
    file_ = std::fopen(out_.temp_path().c_str(), "wb");
    if (!file_) throw OutputError(path, "cannot create " + out_.temp_path().string() + ": " + errno_text(errno));
    std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
    std::vector<unsigned char> head;
    head.push_back(std::endian::native == std::endian::little ? 'I' : 'M');
    head.push_back(head[0]);
    if (plan_.layout.big) {
      append<u16>(head, 43);
      append<u16>(head, 8);
      append<u16>(head, 0);
      append<u64>(head, plan_.layout.header());
    } else {
      append<u16>(head, 42);
      append<u32>(head, static_cast<u32>(plan_.layout.header()));
    }
    const u64 frames = static_cast<u64>(meta_.frames);
    const u64 next = frames > 1 ? plan_.data_offset + frames * plan_.bytes_per_frame : 0;
    encode_block(head, plan_.layout, page_fields(meta_, plan_.layout, plan_.data_offset, true), plan_.layout.header(),
                 next);
    put(head.data(), head.size());
  }

  ~TiffStackWriter() override {
    if (file_) std::fclose(file_);  // AtomicOutput then removes the temporary file
  }

  void write(const void* frames, std::int64_t count) override {
    if (!file_) throw OutputError(out_.final_path().string(), "write after close");
    if (count < 0 || count > meta_.frames - written_)
      throw OutputError(out_.final_path().string(),
                        "more frames written than the " + std::to_string(meta_.frames) + " announced");
    put(frames, static_cast<std::size_t>(static_cast<u64>(count) * plan_.bytes_per_frame));
    written_ += count;
  }

  void close() override {
    const std::string where = out_.final_path().string();
    if (!file_) throw OutputError(where, "close() called twice");
    if (written_ != meta_.frames) {
      std::fclose(file_);
      file_ = nullptr;
      throw OutputError(where, "only " + std::to_string(written_) + " of the " + std::to_string(meta_.frames) +
                                   " announced frames were written; no file was created");
    }
    const u64 frames = static_cast<u64>(meta_.frames);
    u64 at = plan_.data_offset + frames * plan_.bytes_per_frame;
    std::vector<unsigned char> buffer;
    for (u64 k = 1; k < frames; ++k) {
      const u64 next = k + 1 < frames ? at + plan_.later_block : 0;
      encode_block(buffer, plan_.layout,
                   page_fields(meta_, plan_.layout, plan_.data_offset + k * plan_.bytes_per_frame, false), at, next);
      at += plan_.later_block;
      if (buffer.size() >= (1u << 20)) {
        put(buffer.data(), buffer.size());
        buffer.clear();
      }
    }
    put(buffer.data(), buffer.size());
    const bool flushed = std::fflush(file_) == 0;
    const int flush_errno = errno;
    const bool closed = std::fclose(file_) == 0;
    const int close_errno = errno;
    file_ = nullptr;
    if (!flushed || !closed)
      throw OutputError(where, "cannot finish writing the TIFF: " + errno_text(!flushed ? flush_errno : close_errno));
    out_.commit();
  }

 private:
  void put(const void* data, std::size_t bytes) {
    if (bytes == 0) return;
    if (std::fwrite(data, 1, bytes, file_) != bytes)
      throw OutputError(out_.final_path().string(), "cannot write the TIFF: " + errno_text(errno));
  }

  ImageMeta meta_;
  AtomicOutput out_;
  Plan plan_;
  std::FILE* file_ = nullptr;
  std::int64_t written_ = 0;
};

}  // namespace

std::uint64_t estimated_classic_tiff_size(const ImageMeta& meta) {
  return plan_for(meta, false).total;
}

bool needs_bigtiff(const ImageMeta& meta) {
  return estimated_classic_tiff_size(meta) > kClassicTiffLimit;
}

std::unique_ptr<ImageWriter> create_tiff_writer(const std::string& path, const ImageMeta& meta) {
  return create_tiff_writer(path, meta, meta.width > 0 && meta.height > 0 && meta.frames > 0 && needs_bigtiff(meta));
}

std::unique_ptr<ImageWriter> create_tiff_writer(const std::string& path, const ImageMeta& meta, bool bigtiff) {
  if (meta.type != PixelType::u16 && meta.type != PixelType::f32)
    throw UsageError(path, "TIFF images are written as uint16 or float32, not " + to_string(meta.type));
  if (meta.width <= 0 || meta.height <= 0 || meta.frames <= 0) throw UsageError(path, "nothing to write (empty image)");
  if (!meta.root_attributes.empty()) throw UsageError(path, "this file carries attributes only HDF5 can hold: name it .h5");
  if (meta.width > 0xFFFFFFFFLL || meta.height > 0xFFFFFFFFLL)
    throw UsageError(path, "the image is too large for TIFF");
  if (!bigtiff && needs_bigtiff(meta)) throw UsageError(path, "the stack does not fit in a classic TIFF (over 4 GB)");
  return std::make_unique<TiffStackWriter>(path, meta, bigtiff);
}

}  // namespace nanoscopy::detail
