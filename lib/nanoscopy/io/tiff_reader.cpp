// TIFF stack reader. The IFD chain is walked once at open with our own parser
// (pread, no libtiff): libtiff's TIFFSetDirectory(n) re-walks the chain on
// every call and its directory bookkeeping stops at 1,048,576 pages. Each
// page keeps its IFD offset and, for uncompressed single-sample strips laid
// out back to back, the offset of its pixel data, which read_raw() preads
// straight into the caller's buffer. Every other page (compressed, tiled,
// scattered strips) is decoded by libtiff, opened on a view of the file
// whose header points at that page's IFD.
#include <fcntl.h>
#include <sys/stat.h>
#include <tiffio.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <unordered_set>
#include <utility>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/formats.hpp"
#include "nanoscopy/io/tiff_format.hpp"
#include "nanoscopy/io/tiff_stack.hpp"

namespace nanoscopy::detail {
namespace {

using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr u64 kNoDirectData = std::numeric_limits<u64>::max();

enum : u16 {
  kNewSubfileType = 254,
  kImageWidth = 256,
  kImageLength = 257,
  kBitsPerSample = 258,
  kCompression = 259,
  kPhotometric = 262,
  kImageDescription = 270,
  kStripOffsets = 273,
  kSamplesPerPixel = 277,
  kRowsPerStrip = 278,
  kStripByteCounts = 279,
  kXResolution = 282,
  kTileWidth = 322,
  kTileLength = 323,
  kTileOffsets = 324,
  kTileByteCounts = 325,
  kSampleFormat = 339,
  kMicroManagerMetadata = 51123,  // Micro-Manager's per-image JSON
};

// Size in bytes of one value of a TIFF field type; 0 for unknown types.
u64 type_size(u16 type) {
  switch (type) {
    case 1:
    case 2:
    case 6:
    case 7:
      return 1;  // BYTE ASCII SBYTE UNDEFINED
    case 3:
    case 8:
      return 2;  // SHORT SSHORT
    case 4:
    case 9:
    case 11:
    case 13:
      return 4;  // LONG SLONG FLOAT IFD
    case 5:
    case 10:
    case 12:
    case 16:
    case 17:
    case 18:
      return 8;  // RATIONAL SRATIONAL DOUBLE LONG8 SLONG8 IFD8
    default:
      return 0;
  }
}

std::string errno_text(int err) {
  return std::strerror(err);
}

class PosixFile {
 public:
  PosixFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw InputError(path, "cannot open the file for reading: " + errno_text(errno));
    const off_t end = ::lseek(fd_, 0, SEEK_END);
    if (end < 0) {
      const int err = errno;
      ::close(fd_);
      throw InputError(path, "cannot determine the file size: " + errno_text(err));
    }
    size_ = static_cast<u64>(end);
  }
  ~PosixFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  PosixFile(const PosixFile&) = delete;
  PosixFile& operator=(const PosixFile&) = delete;

  u64 size() const { return size_; }
  int fd() const { return fd_; }

  // The same file through a descriptor of its own: the kernel keeps read-ahead
  // per open file, and threads reading different parts of a cold file through
  // one descriptor spoil each other's. Refuses a file replaced since (another
  // inode under the name); keeps the size the page index was checked against.
  std::shared_ptr<const PosixFile> reopened() const {
    auto again = std::make_shared<PosixFile>(path_);
    struct stat mine {}, theirs {};
    if (::fstat(fd_, &mine) != 0 || ::fstat(again->fd_, &theirs) != 0 || mine.st_dev != theirs.st_dev ||
        mine.st_ino != theirs.st_ino)
      throw InputError(path_, "the file was replaced while it was being read");
    again->size_ = size_;
    return again;
  }

  // Reads exactly n bytes at offset; false if the file ends first. Throws on an I/O error.
  bool read_at(u64 offset, std::size_t n, void* dst) const {
    auto* out = static_cast<unsigned char*>(dst);
    std::size_t done = 0;
    while (done < n) {
      const ssize_t got = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
      if (got < 0) {
        if (errno == EINTR) continue;
        throw InputError(path_, "read error at byte " + std::to_string(offset + done) + ": " + errno_text(errno));
      }
      if (got == 0) return false;
      done += static_cast<std::size_t>(got);
    }
    return true;
  }

 private:
  std::string path_;
  int fd_ = -1;
  u64 size_ = 0;
};

// A small read-through window: IFDs of consecutive pages usually sit close
// together (or share a block with the previous page's data), so one pread
// serves several of them.
class WindowCache {
 public:
  explicit WindowCache(const PosixFile& file) : file_(file) {}

  // Pointer to n bytes at offset, valid until the next call; nullptr if they
  // lie (partly) past the end of the file.
  const u8* get(u64 offset, u64 n) {
    if (offset > file_.size() || n > file_.size() - offset) return nullptr;
    if (offset >= base_ && offset - base_ + n <= length_) return buffer_.data() + (offset - base_);
    const u64 start = offset & ~u64{align_bytes - 1};
    const u64 want = std::min<u64>(std::max<u64>(offset - start + n, window_bytes), file_.size() - start);
    buffer_.resize(static_cast<std::size_t>(want));
    length_ = 0;  // the buffer no longer holds the old window
    if (!file_.read_at(start, static_cast<std::size_t>(want), buffer_.data())) return nullptr;
    base_ = start;
    length_ = want;
    return buffer_.data() + (offset - base_);
  }

 private:
  static constexpr u64 window_bytes = 8192;
  static constexpr u64 align_bytes = 4096;
  const PosixFile& file_;
  std::vector<u8> buffer_;
  u64 base_ = 0;
  u64 length_ = 0;
};

struct Entry {
  u16 tag = 0;
  u16 type = 0;
  u64 count = 0;
  u8 value[8] = {};  // the raw value field (4 bytes used in classic TIFF)
};

struct Page {
  u64 width = 0, height = 0;
  u64 bits = 1, samples = 1, sample_format = 1, compression = 1;
  u64 rows_per_strip = std::numeric_limits<u32>::max();
  u64 subfile_type = 0;
  bool tiled = false;
  u64 tile_width = 0, tile_length = 0;
  const Entry* offsets = nullptr;  // StripOffsets or TileOffsets
  const Entry* counts = nullptr;   // StripByteCounts or TileByteCounts
  const Entry* description = nullptr;        // the last ImageDescription
  const Entry* first_description = nullptr;  // the first, when there are several (Micro-Manager: OME-XML, then ImageJ's)
  const Entry* x_resolution = nullptr;
  const Entry* micromanager = nullptr;
};

// Maps (bits, sample format) to a pixel type, or names what is unsupported.
bool pixel_type_of(const Page& p, PixelType& type, std::string& problem) {
  if (p.samples != 1) {
    problem =
        std::to_string(p.samples) + " samples per pixel" + (p.samples == 3 || p.samples == 4 ? " (RGB/colour)" : "");
    return false;
  }
  const u64 b = p.bits;
  switch (p.sample_format) {
    case 1:
      if (b == 8) {
        type = PixelType::u8;
        return true;
      }
      if (b == 16) {
        type = PixelType::u16;
        return true;
      }
      if (b == 32) {
        type = PixelType::u32;
        return true;
      }
      problem = b == 1 ? "1-bit (bilevel)" : b == 64 ? "uint64" : std::to_string(b) + "-bit unsigned integer";
      return false;
    case 2:
      if (b == 16) {
        type = PixelType::i16;
        return true;
      }
      if (b == 32) {
        type = PixelType::i32;
        return true;
      }
      problem = b == 8 ? "int8" : b == 64 ? "int64" : std::to_string(b) + "-bit signed integer";
      return false;
    case 3:
      if (b == 32) {
        type = PixelType::f32;
        return true;
      }
      if (b == 64) {
        type = PixelType::f64;
        return true;
      }
      problem = std::to_string(b) + "-bit floating point";
      return false;
    case 5:
    case 6:
      problem = "complex (" + std::to_string(b) + "-bit)";
      return false;
    default:
      problem = "sample format " + std::to_string(p.sample_format) + " with " + std::to_string(b) + " bits";
      return false;
  }
}

// libtiff reports through per-file handlers into this sink, never to stderr.
struct LibtiffMessages {
  std::string last_error;
};

int on_libtiff_error(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  char buffer[512];
  std::vsnprintf(buffer, sizeof buffer, fmt, ap);
  auto* sink = static_cast<LibtiffMessages*>(user);
  sink->last_error = (module && *module ? std::string(module) + ": " : std::string()) + buffer;
  return 1;  // handled: do not call the global handler
}

int on_libtiff_warning(TIFF*, void*, const char*, const char*, va_list) {
  return 1;
}

// The file as libtiff sees it through TIFFClientOpen: the real bytes, except
// that the header's first-IFD offset is replaced (see libtiff_at()).
struct PageView {
  int fd = -1;
  u64 size = 0;
  u64 ifd = 0;
  u64 position = 0;
  u64 header_size = 8;
  u8 header[16] = {};

  static tmsize_t read(thandle_t h, void* buffer, tmsize_t n) {
    auto* v = static_cast<PageView*>(h);
    auto* out = static_cast<u8*>(buffer);
    tmsize_t done = 0;
    while (done < n) {
      const ssize_t got = ::pread(v->fd, out + done, static_cast<std::size_t>(n - done),
                                  static_cast<off_t>(v->position + static_cast<u64>(done)));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return -1;
      if (got == 0) break;
      done += got;
    }
    for (u64 i = v->position; i < v->header_size && i < v->position + static_cast<u64>(done); ++i)
      out[i - v->position] = v->header[i];
    v->position += static_cast<u64>(done);
    return done;
  }
  static tmsize_t write(thandle_t, void*, tmsize_t) { return -1; }
  static toff_t seek(thandle_t h, toff_t offset, int whence) {
    auto* v = static_cast<PageView*>(h);
    if (whence == SEEK_SET)
      v->position = offset;
    else if (whence == SEEK_CUR)
      v->position += offset;
    else if (whence == SEEK_END)
      v->position = v->size + offset;
    return v->position;
  }
  static int close(thandle_t) { return 0; }
  static toff_t size_of(thandle_t h) { return static_cast<PageView*>(h)->size; }
  static int map(thandle_t, void**, toff_t*) { return 0; }
  static void unmap(thandle_t, void*, toff_t) {}
};

struct TiffCloser {
  void operator()(TIFF* t) const { TIFFClose(t); }
};

class TiffStackReader final : public TiffStack {
 public:
  explicit TiffStackReader(const std::string& path) : file_(std::make_shared<const PosixFile>(path)) {
    info_.path = path;
    index();
  }

  const std::string& description() const override { return description_; }
  const std::string& micromanager_json() const override { return micromanager_json_; }

  // another_reader(): the same file (a descriptor of its own) and page index,
  // with its own libtiff state.
  struct SameStack {};
  TiffStackReader(const TiffStackReader& other, SameStack)
      : file_(other.file_->reopened()), big_(other.big_), swap_(other.swap_), index_(other.index_) {
    info_ = other.info_;
    description_ = other.description_;
    micromanager_json_ = other.micromanager_json_;
  }

  std::unique_ptr<StackReader> another_reader() const override {
    return std::make_unique<TiffStackReader>(*this, SameStack{});
  }

  // The bytes from the first page's pixels to the end of the last's (the IFDs between them included).
  void will_read(std::int64_t first, std::int64_t count) override {
    if (first < 0 || count <= 0 || count > info_.frames - first) return;
    const auto bpf = static_cast<u64>(info_.bytes_per_frame());
    u64 lo = std::numeric_limits<u64>::max(), hi = 0;
    for (std::int64_t i = first; i < first + count; ++i) {
      const auto& f = frames_[static_cast<std::size_t>(i)];
      if (f.data == kNoDirectData) continue;  // compressed or tiled: libtiff reads it
      lo = std::min(lo, f.data);
      hi = std::max(hi, f.data + bpf);
    }
    if (hi > lo) ::posix_fadvise(file_->fd(), static_cast<off_t>(lo), static_cast<off_t>(hi - lo), POSIX_FADV_WILLNEED);
  }

  void read_raw(std::int64_t first, std::int64_t count, void* dst) override {
    if (first < 0 || count < 0 || first > info_.frames || count > info_.frames - first)
      throw InputError(info_.path, "frames [" + std::to_string(first) + ", " + std::to_string(first + count) +
                                       ") are outside the stack (" + std::to_string(info_.frames) + " frames)");
    const auto bpf = static_cast<u64>(info_.bytes_per_frame());
    auto* out = static_cast<u8*>(dst);
    std::int64_t i = 0;
    while (i < count) {
      const auto& f = frames_[static_cast<std::size_t>(first + i)];
      if (f.data == kNoDirectData) {
        read_with_libtiff(first + i, out + static_cast<u64>(i) * bpf);
        ++i;
        continue;
      }
      // Pages whose pixels follow each other in the file are read with one pread.
      std::int64_t run = 1;
      while (i + run < count &&
             frames_[static_cast<std::size_t>(first + i + run)].data == f.data + static_cast<u64>(run) * bpf)
        ++run;
      u8* target = out + static_cast<u64>(i) * bpf;
      if (!file_->read_at(f.data, static_cast<std::size_t>(static_cast<u64>(run) * bpf), target)) {
        // The file shrank after it was opened: name the first frame it no longer holds whole.
        std::int64_t whole = 0;
        while (whole < run && file_->read_at(f.data + static_cast<u64>(whole) * bpf, static_cast<std::size_t>(bpf),
                                              target + static_cast<u64>(whole) * bpf))
          ++whole;
        if (whole < run)
          throw InputError(info_.path, frame_text(first + i + whole, 1) +
                                           ": the pixel data lies past the end of the file (truncated file)");
      }
      if (swap_) byte_swap(target, static_cast<u64>(run) * bpf);
      i += run;
    }
  }

 private:
  struct Frame {
    u64 ifd;
    u64 data;  // offset of the frame's contiguous uncompressed pixels, or kNoDirectData
  };

  static std::string frame_text(std::int64_t first, std::int64_t run) {
    return run == 1 ? "frame " + std::to_string(first)
                    : "frames " + std::to_string(first) + "-" + std::to_string(first + run - 1);
  }

  [[noreturn]] void fail(const std::string& what) const { throw InputError(info_.path, what); }

  u16 get16(const u8* p) const {
    u16 v;
    std::memcpy(&v, p, 2);
    return swap_ ? __builtin_bswap16(v) : v;
  }
  u32 get32(const u8* p) const {
    u32 v;
    std::memcpy(&v, p, 4);
    return swap_ ? __builtin_bswap32(v) : v;
  }
  u64 get64(const u8* p) const {
    u64 v;
    std::memcpy(&v, p, 8);
    return swap_ ? __builtin_bswap64(v) : v;
  }
  u64 get_offset(const u8* p) const { return big_ ? get64(p) : get32(p); }

  void byte_swap(u8* data, u64 bytes) const {
    switch (bytes_per_pixel(info_.type)) {
      case 2:
        for (u64 k = 0; k < bytes; k += 2) std::swap(data[k], data[k + 1]);
        break;
      case 4:
        for (u64 k = 0; k < bytes; k += 4) {
          std::swap(data[k], data[k + 3]);
          std::swap(data[k + 1], data[k + 2]);
        }
        break;
      case 8:
        for (u64 k = 0; k < bytes; k += 8) std::reverse(data + k, data + k + 8);
        break;
      default:
        break;
    }
  }

  // Value i of an unsigned integer field (BYTE, SHORT, LONG, LONG8, IFD, IFD8).
  u64 value_at(u16 type, const u8* p, u64 i) const {
    switch (type) {
      case 1:
      case 7:
        return p[i];
      case 3:
        return get16(p + 2 * i);
      case 4:
      case 13:
        return get32(p + 4 * i);
      case 16:
      case 18:
        return get64(p + 8 * i);
      default:
        return 0;
    }
  }

  bool is_unsigned_integer(u16 type) const {
    return type == 1 || type == 3 || type == 4 || type == 13 || type == 16 || type == 18;
  }

  // Pointer to the bytes of a field's values: inline, or read through the cache.
  const u8* field_bytes(const Entry& e, u64 page, const char* name) {
    const u64 size = type_size(e.type);
    if (size == 0)
      fail("page " + std::to_string(page) + ": the " + name + " field has an unknown type (" + std::to_string(e.type) +
           "); the file is corrupt");
    if (e.count > file_->size() / size + 1)
      fail("page " + std::to_string(page) + ": the " + name + " field claims " + std::to_string(e.count) +
           " values, more than the file holds; the file is corrupt or truncated");
    const u64 bytes = size * e.count;
    if (bytes <= (big_ ? 8u : 4u)) return e.value;
    const u64 offset = get_offset(e.value);
    const u8* p = cache_.get(offset, bytes);
    if (!p)
      fail("page " + std::to_string(page) + ": the " + name + " values lie past the end of the file (truncated file)");
    return p;
  }

  u64 scalar(const Entry& e, u64 page, const char* name) {
    if (!is_unsigned_integer(e.type) || e.count < 1)
      fail("page " + std::to_string(page) + ": the " + name + " field is malformed; the file is corrupt");
    return value_at(e.type, field_bytes(e, page, name), 0);
  }

  std::vector<u64> array(const Entry& e, u64 page, const char* name) {
    if (!is_unsigned_integer(e.type))
      fail("page " + std::to_string(page) + ": the " + name + " field is malformed; the file is corrupt");
    const u8* p = field_bytes(e, page, name);
    std::vector<u64> values(static_cast<std::size_t>(e.count));
    for (u64 i = 0; i < e.count; ++i) values[i] = value_at(e.type, p, i);
    return values;
  }

  std::string ascii(const Entry& e, u64 page, const char* name) {
    if (e.type != 2 && e.type != 1 && e.type != 7) return {};
    const u64 bytes = e.count;
    std::string s;
    if (bytes <= (big_ ? 8u : 4u)) {
      s.assign(reinterpret_cast<const char*>(e.value), static_cast<std::size_t>(bytes));
    } else {
      const u64 offset = get_offset(e.value);
      const std::string past_end =
          "page " + std::to_string(page) + ": the " + name + " lies past the end of the file (truncated file)";
      if (offset > file_->size() || bytes > file_->size() - offset) fail(past_end);
      s.resize(static_cast<std::size_t>(bytes));
      if (!file_->read_at(offset, s.size(), s.data())) fail(past_end);
    }
    const auto nul = s.find('\0');
    if (nul != std::string::npos) s.resize(nul);
    return s;
  }

  double rational(const Entry& e, u64 page) {
    if (e.type != 5 || e.count < 1) return 0.0;
    const u8* p = field_bytes(e, page, "XResolution");
    const u32 num = get32(p), den = get32(p + 4);
    return den == 0 ? 0.0 : static_cast<double>(num) / static_cast<double>(den);
  }

  // Parses the IFD at `offset` into entries_ and returns the next IFD's offset.
  u64 read_ifd(u64 offset, u64 page) {
    const u64 count_size = big_ ? 8 : 2, entry_size = big_ ? 20 : 12, offset_size = big_ ? 8 : 4;
    const u8* p = cache_.get(offset, count_size);
    if (!p)
      fail("page " + std::to_string(page) + ": its IFD offset " + std::to_string(offset) +
           " lies past the end of the file (" + std::to_string(file_->size()) +
           " bytes): the file is truncated or its IFD chain is corrupt");
    const u64 n = big_ ? get64(p) : get16(p);
    if (n == 0 || n > 65535)
      fail("page " + std::to_string(page) + ": the IFD at offset " + std::to_string(offset) + " claims " +
           std::to_string(n) + " entries; the IFD chain is corrupt");
    const u64 bytes = n * entry_size + offset_size;
    p = cache_.get(offset + count_size, bytes);
    if (!p)
      fail("page " + std::to_string(page) + ": the IFD at offset " + std::to_string(offset) +
           " runs past the end of the file (truncated file)");
    entries_.resize(static_cast<std::size_t>(n));
    for (u64 i = 0; i < n; ++i) {
      const u8* e = p + i * entry_size;
      Entry& out = entries_[i];
      out.tag = get16(e);
      out.type = get16(e + 2);
      out.count = big_ ? get64(e + 4) : get32(e + 4);
      std::memcpy(out.value, e + (big_ ? 12 : 8), static_cast<std::size_t>(offset_size));
    }
    return get_offset(p + n * entry_size);
  }

  Page decode_page(u64 page) {
    Page pg;
    bool have_width = false, have_height = false;
    for (const Entry& e : entries_) {
      switch (e.tag) {
        case kNewSubfileType:
          pg.subfile_type = scalar(e, page, "NewSubfileType");
          break;
        case kImageWidth:
          pg.width = scalar(e, page, "ImageWidth");
          have_width = true;
          break;
        case kImageLength:
          pg.height = scalar(e, page, "ImageLength");
          have_height = true;
          break;
        case kBitsPerSample: {
          pg.bits = scalar(e, page, "BitsPerSample");
          break;
        }
        case kCompression:
          pg.compression = scalar(e, page, "Compression");
          break;
        case kSamplesPerPixel:
          pg.samples = scalar(e, page, "SamplesPerPixel");
          break;
        case kRowsPerStrip:
          pg.rows_per_strip = scalar(e, page, "RowsPerStrip");
          break;
        case kSampleFormat:
          pg.sample_format = scalar(e, page, "SampleFormat");
          break;
        case kTileWidth:
          pg.tile_width = scalar(e, page, "TileWidth");
          pg.tiled = true;
          break;
        case kTileLength:
          pg.tile_length = scalar(e, page, "TileLength");
          pg.tiled = true;
          break;
        case kStripOffsets:
          pg.offsets = &e;
          break;
        case kStripByteCounts:
          pg.counts = &e;
          break;
        case kImageDescription:
          if (!pg.first_description) pg.first_description = &e;
          pg.description = &e;
          break;
        case kXResolution:
          pg.x_resolution = &e;
          break;
        case kMicroManagerMetadata:
          pg.micromanager = &e;
          break;
        default:
          break;
      }
    }
    if (pg.tiled) {
      pg.offsets = pg.counts = nullptr;
      for (const Entry& e : entries_) {
        if (e.tag == kTileOffsets) pg.offsets = &e;
        if (e.tag == kTileByteCounts) pg.counts = &e;
      }
    }
    if (!have_width || !have_height || pg.width == 0 || pg.height == 0)
      fail("page " + std::to_string(page) + ": the image has no width/height; the file is corrupt");
    if (!pg.offsets)
      fail("page " + std::to_string(page) + ": the image has no pixel data offsets; the file is corrupt");
    return pg;
  }

  // Offset of the page's pixels when they can be preaded as is, else
  // kNoDirectData. Also checks that every strip/tile lies inside the file.
  u64 locate_data(const Page& pg, u64 page) {
    // A frame's size must fit in 64 bits (signed, as StackInfo holds it), or every
    // size below wraps around (found by tests/fuzz).
    u64 row_bytes = 0, frame_bytes = 0;
    if (__builtin_mul_overflow(pg.width, pg.bits / 8, &row_bytes) ||
        __builtin_mul_overflow(row_bytes, pg.height, &frame_bytes) ||
        frame_bytes > static_cast<u64>(std::numeric_limits<std::int64_t>::max()))
      fail("page " + std::to_string(page) + ": a " + std::to_string(pg.width) + "x" + std::to_string(pg.height) +
           " image is too large to address; the file is corrupt");
    const bool plain_strips = pg.compression == 1 && !pg.tiled && pg.samples == 1 && pg.bits % 8 == 0;
    if (plain_strips && pg.offsets->count == 1) {
      const u64 offset = scalar(*pg.offsets, page, "StripOffsets");
      check_inside(offset, row_bytes * pg.height, page);
      return offset;
    }
    const std::vector<u64> offsets = array(*pg.offsets, page, pg.tiled ? "TileOffsets" : "StripOffsets");
    std::vector<u64> counts;
    if (pg.counts) counts = array(*pg.counts, page, pg.tiled ? "TileByteCounts" : "StripByteCounts");
    if (plain_strips) {
      const u64 rps = std::min(std::max<u64>(pg.rows_per_strip, 1), pg.height);
      const u64 strips = (pg.height + rps - 1) / rps;
      if (offsets.size() == strips) {
        bool contiguous = true;
        for (u64 s = 0; s + 1 < strips && contiguous; ++s) contiguous = offsets[s + 1] == offsets[s] + rps * row_bytes;
        if (contiguous) {
          check_inside(offsets[0], row_bytes * pg.height, page);
          return offsets[0];
        }
      }
    }
    if (!pg.counts && pg.compression != 1)
      fail("page " + std::to_string(page) + ": a compressed image without byte counts; the file is corrupt");
    for (std::size_t k = 0; k < offsets.size() && k < counts.size(); ++k) check_inside(offsets[k], counts[k], page);
    return kNoDirectData;
  }

  void check_inside(u64 offset, u64 bytes, u64 page) const {
    if (offset > file_->size() || bytes > file_->size() - offset)
      fail("page " + std::to_string(page) + ": its pixel data (" + std::to_string(bytes) + " bytes at offset " +
           std::to_string(offset) + ") lies past the end of the file (" + std::to_string(file_->size()) +
           " bytes): the file is truncated");
  }

  void index() {
    u8 header[16] = {};
    if (file_->size() < 8 || !file_->read_at(0, 8, header)) fail("the file is too short to be a TIFF (truncated file)");
    if (header[0] == 'I' && header[1] == 'I')
      swap_ = std::endian::native != std::endian::little;
    else if (header[0] == 'M' && header[1] == 'M')
      swap_ = std::endian::native != std::endian::big;
    else
      fail("not a TIFF file (bad byte-order mark)");
    const u16 magic = get16(header + 2);
    if (magic == 43) {
      big_ = true;
      if (file_->size() < 16 || !file_->read_at(0, 16, header)) fail("the BigTIFF header is truncated");
      if (get16(header + 4) != 8) fail("unsupported BigTIFF offset size " + std::to_string(get16(header + 4)));
    } else if (magic != 42) {
      fail("not a TIFF file (bad magic number " + std::to_string(magic) + ")");
    }
    u64 ifd = big_ ? get64(header + 8) : get32(header + 4);
    if (ifd == 0) fail("the TIFF contains no images (no IFD)");

    PixelType type = PixelType::u16;
    u64 width = 0, height = 0, ifd_count = 0;
    std::string& description = description_;
    double x_resolution = 0.0;
    bool first_direct = false;
    u64 last_ifd = 0;
    std::unordered_set<u64> seen;  // filled only once the chain stops going forward
    bool tracking = false;

    for (u64 page = 0; ifd != 0; ++page) {
      // Pages normally follow each other forward in the file, which cannot
      // loop; once an IFD points backward, remember every offset to catch a loop.
      if (!tracking && ifd <= last_ifd) {
        tracking = true;
        seen.reserve(frames_.size() * 2 + 16);
        for (const auto& f : frames_) seen.insert(f.ifd);
        seen.insert(last_ifd);
      }
      if (tracking && !seen.insert(ifd).second)
        fail("the IFD chain loops back to offset " + std::to_string(ifd) + " after page " + std::to_string(page - 1) +
             "; the file is corrupt");
      last_ifd = ifd;
      const u64 next = read_ifd(ifd, page);
      const Page pg = decode_page(page);
      ++ifd_count;
      if (pg.subfile_type & 5u) {  // reduced-resolution copies and masks are not frames
        ifd = next;
        continue;
      }
      PixelType t{};
      std::string problem;
      if (!pixel_type_of(pg, t, problem))
        fail("page " + std::to_string(page) + ": unsupported pixel type: " + problem +
             " (supported: uint8, uint16, int16, uint32, int32, float32, float64; one sample per pixel)");
      if (frames_.empty()) {
        type = t;
        width = pg.width;
        height = pg.height;
        if (pg.description) description = ascii(*pg.description, page, "ImageDescription");
        // Micro-Manager's first page holds its OME-XML and then ImageJ's description: the OME-XML
        // describes the whole series (its files, the pixel size), so it is the one kept.
        if (pg.first_description != pg.description && description.find("<OME") == std::string::npos) {
          std::string first_text = ascii(*pg.first_description, page, "ImageDescription");
          if (first_text.find("<OME") != std::string::npos) description = std::move(first_text);
        }
        if (pg.x_resolution) x_resolution = rational(*pg.x_resolution, page);
        if (pg.micromanager) micromanager_json_ = ascii(*pg.micromanager, page, "Micro-Manager metadata");
      } else if (t != type || pg.width != width || pg.height != height) {
        fail("page " + std::to_string(page) + " is " + std::to_string(pg.width) + "x" + std::to_string(pg.height) +
             " " + to_string(t) + " but page 0 is " + std::to_string(width) + "x" + std::to_string(height) + " " +
             to_string(type) + ": all pages of a stack must have the same size and pixel type");
      }
      info_.type = t;
      info_.width = static_cast<std::int64_t>(width);
      info_.height = static_cast<std::int64_t>(height);
      const u64 data = locate_data(pg, page);
      if (frames_.empty()) first_direct = data != kNoDirectData;
      frames_.push_back(Frame{ifd, data});
      ifd = next;
    }
    if (frames_.empty()) fail("the TIFF holds no full-resolution image pages");

    info_.frames = static_cast<std::int64_t>(frames_.size());
    info_.format = big_ ? "bigtiff" : "tiff";
    const bool imagej = description.rfind("ImageJ=", 0) == 0;
    const bool ome = description.find("<OME") != std::string::npos;
    if (ome) {
      info_.format = "ome-tiff";
      info_.pixel_size_nm = ome_pixel_size_nm(description);
    } else if (imagej) {
      info_.format = "imagej-tiff";
      info_.pixel_size_nm = imagej_pixel_size_nm(description, x_resolution);
      info_.axis = imagej_axis(description);
      const auto images_text = imagej_value(description, "images");
      std::int64_t images = 0;
      if (images_text) {
        try {
          images = std::stoll(*images_text);
        } catch (const std::exception&) {
          fail("the ImageJ description has an invalid images= value '" + *images_text + "'");
        }
      }
      // ImageJ writes stacks over 4 GB as one IFD with every frame after the first one.
      if (ifd_count == 1 && frames_.size() == 1 && images > 1) expand_imagej_contiguous(images, first_direct);
    }
  }

  void expand_imagej_contiguous(std::int64_t images, bool first_direct) {
    if (!first_direct)
      fail("ImageJ stack with images=" + std::to_string(images) +
           " in a single compressed or tiled IFD is not supported");
    const auto bpf = static_cast<u64>(info_.bytes_per_frame());
    const u64 first = frames_[0].data;
    const u64 available = (file_->size() - first) / bpf;
    if (available < static_cast<u64>(images))
      fail("the ImageJ description announces " + std::to_string(images) +
           " images stored one after another, but the file holds only " + std::to_string(available) +
           " (truncated file)");
    frames_.resize(static_cast<std::size_t>(images));
    for (std::int64_t k = 0; k < images; ++k)
      frames_[static_cast<std::size_t>(k)] = Frame{frames_[0].ifd, first + static_cast<u64>(k) * bpf};
    info_.frames = images;
  }

  // libtiff positioned at one page: a client view of the file whose header
  // names that page's IFD as the first one. TIFFSetSubDirectory() would do
  // the same, but libtiff then keeps per-directory bookkeeping that slows
  // down (~1 ms per call) past its 1,048,576-directory limit.
  TIFF* libtiff_at(u64 ifd) {
    if (tif_ && view_.ifd == ifd) return tif_.get();
    tif_.reset();
    view_.fd = file_->fd();
    view_.size = file_->size();
    view_.ifd = ifd;
    view_.position = 0;
    view_.header_size = big_ ? 16 : 8;
    if (!file_->read_at(0, static_cast<std::size_t>(view_.header_size), view_.header))
      fail("the TIFF header is truncated");
    u8* field = view_.header + (big_ ? 8 : 4);
    if (big_) {
      const u64 v = swap_ ? __builtin_bswap64(ifd) : ifd;
      std::memcpy(field, &v, 8);
    } else {
      const auto v32 = static_cast<u32>(ifd);
      const u32 v = swap_ ? __builtin_bswap32(v32) : v32;
      std::memcpy(field, &v, 4);
    }
    TIFFOpenOptions* opts = TIFFOpenOptionsAlloc();
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_libtiff_error, &messages_);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_libtiff_warning, nullptr);
    TIFF* t = TIFFClientOpenExt(info_.path.c_str(), "rm", &view_, PageView::read, PageView::write, PageView::seek,
                                PageView::close, PageView::size_of, PageView::map, PageView::unmap, opts);
    TIFFOpenOptionsFree(opts);
    if (!t) return nullptr;
    tif_.reset(t);
    return t;
  }

  void read_with_libtiff(std::int64_t frame, u8* dst) {
    const auto& f = frames_[static_cast<std::size_t>(frame)];
    const std::string where = "frame " + std::to_string(frame);
    messages_.last_error.clear();
    TIFF* t = libtiff_at(f.ifd);
    if (!t) fail(where + ": libtiff cannot read its directory: " + messages_.last_error);
    u32 w = 0, h = 0;
    TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &w);
    TIFFGetField(t, TIFFTAG_IMAGELENGTH, &h);
    if (w != static_cast<u64>(info_.width) || h != static_cast<u64>(info_.height))
      fail(where + ": libtiff sees a " + std::to_string(w) + "x" + std::to_string(h) + " image where the index says " +
           std::to_string(info_.width) + "x" + std::to_string(info_.height));
    const u64 bpp = bytes_per_pixel(info_.type);
    const u64 row_bytes = static_cast<u64>(info_.width) * bpp;
    const u64 height = static_cast<u64>(info_.height);
    if (TIFFIsTiled(t)) {
      u32 tw = 0, th = 0;
      TIFFGetField(t, TIFFTAG_TILEWIDTH, &tw);
      TIFFGetField(t, TIFFTAG_TILELENGTH, &th);
      if (tw == 0 || th == 0) fail(where + ": tiles of size 0");
      // Tiles may overhang the image, but a tile far larger than the image is
      // corrupt, and would be allocated in full (found by tests/fuzz).
      const auto limit = [](u64 side) { return std::max<u64>((side + 15) / 16 * 16, 4096); };
      if (tw > limit(w) || th > limit(h))
        fail(where + ": tiles of " + std::to_string(tw) + "x" + std::to_string(th) + " for a " + std::to_string(w) +
             "x" + std::to_string(h) + " image; the file is corrupt");
      const tmsize_t tile_size = TIFFTileSize(t);
      if (tile_size <= 0 || static_cast<u64>(tile_size) < u64{tw} * th * bpp)
        fail(where + ": libtiff reports an invalid tile size: " + messages_.last_error);
      tile_.resize(static_cast<std::size_t>(tile_size));
      for (u32 y = 0; y < h; y += th) {
        for (u32 x = 0; x < w; x += tw) {
          const ttile_t index = TIFFComputeTile(t, x, y, 0, 0);
          if (TIFFReadEncodedTile(t, index, tile_.data(), tile_size) < 0)
            fail(where + ": cannot decode tile " + std::to_string(index) + ": " + messages_.last_error);
          const u64 rows = std::min<u64>(th, h - y), cols = std::min<u64>(tw, w - x);
          for (u64 r = 0; r < rows; ++r)
            std::memcpy(dst + (y + r) * row_bytes + x * bpp, tile_.data() + r * tw * bpp,
                        static_cast<std::size_t>(cols * bpp));
        }
      }
      return;
    }
    u32 rps = 0;
    if (!TIFFGetFieldDefaulted(t, TIFFTAG_ROWSPERSTRIP, &rps) || rps == 0) rps = h;
    const u64 rows_per_strip = std::min<u64>(rps, height);
    const u32 strips = TIFFNumberOfStrips(t);
    if (u64{strips} * rows_per_strip < height) fail(where + ": the strips do not cover the image; the file is corrupt");
    for (u32 s = 0; s < strips; ++s) {
      const u64 y = u64{s} * rows_per_strip;
      if (y >= height) break;
      const u64 want = std::min(rows_per_strip, height - y) * row_bytes;
      const tmsize_t got = TIFFReadEncodedStrip(t, s, dst + y * row_bytes, static_cast<tmsize_t>(want));
      if (got < 0) fail(where + ": cannot decode strip " + std::to_string(s) + ": " + messages_.last_error);
      if (static_cast<u64>(got) < want)
        fail(where + ": strip " + std::to_string(s) + " holds " + std::to_string(got) + " of " + std::to_string(want) +
             " bytes (truncated or corrupt data)");
    }
  }

  std::shared_ptr<const PosixFile> file_;
  WindowCache cache_{*file_};
  bool big_ = false;
  bool swap_ = false;
  std::vector<Entry> entries_;  // the IFD being parsed
  // The page index: built by index(), then only read, by this reader and those of another_reader().
  std::shared_ptr<std::vector<Frame>> index_ = std::make_shared<std::vector<Frame>>();
  std::vector<Frame>& frames_ = *index_;
  LibtiffMessages messages_;
  PageView view_;
  std::unique_ptr<TIFF, TiffCloser> tif_;  // declared after view_, which it reads through
  std::vector<u8> tile_;
  std::string description_;        // the first page's ImageDescription
  std::string micromanager_json_;  // the first page's tag 51123
};

}  // namespace

std::unique_ptr<TiffStack> open_tiff_file(const std::string& path) {
  return std::make_unique<TiffStackReader>(path);
}

}  // namespace nanoscopy::detail
