// nanoscopy_fuzz_seeds OUT_DIR: writes small valid inputs for every fuzz target
// into OUT_DIR/<target>/, through the library's own writers (what the tools
// write) and, for the TIFF variants our writer never makes (compressed, tiled,
// big-endian, BigTIFF, other pixel types, OME), through libtiff. scripts/fuzz
// adds Picasso's files (tests/data/picasso) and params/*.prm|json to these.
#include <hdf5.h>
#include <tiffio.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_entry.hpp"
#include "nanoscopy/cluster/part_file.hpp"
#include "nanoscopy/core/astigmatism.hpp"
#include "nanoscopy/core/camera_maps.hpp"
#include "nanoscopy/io/hdf5_util.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/table_writer.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/params/tool_schemas.hpp"
#include "nanoscopy/sim/movie.hpp"
#include "nanoscopy/sofi/partial.hpp"
#include "nanoscopy/sofi/problem.hpp"
#include "nanoscopy/fit2d/partial.hpp"
#include "nanoscopy/params/tool_schemas.hpp"
#include "nanoscopy/smre/partial.hpp"

namespace {

namespace fs = std::filesystem;
using namespace nanoscopy;

fs::path out_dir;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path seed(const std::string& target, const std::string& name) {
  fs::create_directories(out_dir / target);
  return out_dir / target / name;
}

// A two-file seed: YAML, the split line, the binary file.
void pair_seed(const std::string& target, const std::string& name, const fs::path& yaml, const fs::path& binary) {
  fuzz::write_file(seed(target, name), slurp(yaml) + std::string(fuzz::kSplit) + slurp(binary));
}

// ---- HDF5 files as recipes (tests/fuzz/h5_recipe.hpp) ----

std::string type_token(hid_t type) {
  const H5T_class_t cls = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  const bool big = H5Tget_order(type) == H5T_ORDER_BE;
  std::string token;
  if (cls == H5T_INTEGER)
    token = (H5Tget_sign(type) == H5T_SGN_2 ? "i" : "u") + std::to_string(8 * size);
  else if (cls == H5T_FLOAT)
    token = "f" + std::to_string(8 * size);
  else
    return "";
  return big && size > 1 ? token + "be" : token;
}

std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;  // shortest exact form
  return std::string(buffer, end);
}

std::string values_text(const std::vector<double>& values, std::size_t limit) {
  std::string out;
  for (std::size_t i = 0; i < values.size() && i < limit; ++i) out += " " + number_text(values[i]);
  return out;
}

struct DumpContext {
  std::string* out;
  std::string path;  // of the object whose attributes are listed
};

herr_t dump_attribute(hid_t location, const char* name, const H5A_info_t*, void* data) {
  auto& ctx = *static_cast<DumpContext*>(data);
  const hid_t attr = H5Aopen(location, name, H5P_DEFAULT);
  const hid_t type = H5Aget_type(attr);
  const hid_t space = H5Aget_space(attr);
  const std::string head = "attr " + ctx.path + " " + name + " ";
  if (H5Tget_class(type) == H5T_STRING) {
    if (H5Tis_variable_str(type) > 0) {
      char* value = nullptr;
      H5Aread(attr, type, &value);
      *ctx.out += head + "str " + (value ? value : "") + "\n";
      H5free_memory(value);
    } else {
      std::string value(H5Tget_size(type), '\0');
      H5Aread(attr, type, value.data());
      value.resize(std::strlen(value.c_str()));
      *ctx.out += head + "fstr " + value + "\n";
    }
  } else if (const std::string token = type_token(type); !token.empty()) {
    std::vector<double> values(static_cast<std::size_t>(std::max<hssize_t>(H5Sget_simple_extent_npoints(space), 0)));
    if (!values.empty() && values.size() <= 64 && H5Aread(attr, H5T_NATIVE_DOUBLE, values.data()) >= 0)
      *ctx.out += head + token + values_text(values, 64) + "\n";
  }
  H5Sclose(space);
  H5Tclose(type);
  H5Aclose(attr);
  return 0;
}

void dump_attributes(hid_t object, const std::string& path, std::string& out) {
  DumpContext ctx{&out, path};
  hsize_t at = 0;
  H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, &at, dump_attribute, &ctx);
}

void dump_dataset(hid_t d, const std::string& path, std::string& out) {
  const hid_t type = H5Dget_type(d);
  const hid_t space = H5Dget_space(d);
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  const auto n = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space));
  constexpr std::size_t kValues = 256;
  if (H5Tget_class(type) == H5T_COMPOUND && rank == 1) {
    const int members = H5Tget_nmembers(type);
    std::string line = "table " + path + " " + std::to_string(n);
    const hid_t memory = H5Tcreate(H5T_COMPOUND, static_cast<std::size_t>(members) * sizeof(double));
    for (int m = 0; m < members; ++m) {
      char* name = H5Tget_member_name(type, static_cast<unsigned>(m));
      const hid_t member = H5Tget_member_type(type, static_cast<unsigned>(m));
      line += std::string(" ") + name + ":" + type_token(member);
      H5Tinsert(memory, name, static_cast<std::size_t>(m) * sizeof(double), H5T_NATIVE_DOUBLE);
      H5Tclose(member);
      H5free_memory(name);
    }
    std::vector<double> values(n * static_cast<std::size_t>(members));
    if (!values.empty() && H5Dread(d, memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0)
      line += " =" + values_text(values, kValues * static_cast<std::size_t>(members));
    H5Tclose(memory);
    out += line + "\n";
  } else if (const std::string token = type_token(type); !token.empty()) {
    std::string line = "data " + path + " " + token;
    for (hsize_t dim : dims) line += " " + std::to_string(dim);
    std::vector<double> values(n);
    if (n > 0 && n <= fuzz::h5recipe::kMaxWritten && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0)
      line += " =" + values_text(values, kValues);
    out += line + "\n";
  }
  H5Sclose(space);
  H5Tclose(type);
}

// The link info type of H5Lvisit's callback differs between HDF5 1.10 and 1.12.
template <typename F>
struct link_info;
template <typename R, typename A, typename B, typename C, typename D>
struct link_info<R (*)(A, B, C, D)> {
  using type = C;
};

herr_t dump_link(hid_t group, const char* name, link_info<H5L_iterate_t>::type, void* data) {
  auto& out = *static_cast<std::string*>(data);
  const std::string path = std::string("/") + name;
  const hid_t object = H5Oopen(group, name, H5P_DEFAULT);
  if (object < 0) return 0;
  if (H5Iget_type(object) == H5I_GROUP) out += "group " + path + "\n";
  if (H5Iget_type(object) == H5I_DATASET) dump_dataset(object, path, out);
  dump_attributes(object, path, out);
  H5Oclose(object);
  return 0;
}

// A recipe that h5_recipe.hpp turns back into (nearly) this file: the same
// groups, datasets, shapes, types and attributes, and the first values.
std::string dump_recipe(const fs::path& path) {
  std::string out;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) throw std::runtime_error("cannot open " + path.string());
  dump_attributes(file, "/", out);
  H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, dump_link, &out);
  H5Fclose(file);
  return out;
}

// Every binary HDF5 seed of `target` (or YAML + split + HDF5) becomes a recipe
// seed; the binary goes to <target>.h5bytes/ (for NANOSCOPY_FUZZ_RAW_HDF5).
void hdf5_seeds_as_recipes(const std::string& target, const fs::path& work) {
  const fs::path dir = out_dir / target, bytes_dir = out_dir / (target + ".h5bytes");
  fs::create_directories(bytes_dir);
  std::vector<fs::directory_entry> entries(fs::directory_iterator(dir), fs::directory_iterator{});
  for (const auto& entry : entries) {
    const std::string data = slurp(entry.path());
    const auto [yaml, hdf5] = fuzz::split_input(data);
    if (hdf5.substr(0, fuzz::kHdf5Signature.size()) != fuzz::kHdf5Signature) continue;
    const fs::path binary = work / "dump.h5";
    fuzz::write_file(binary, hdf5);
    const std::string recipe = dump_recipe(binary);
    fs::rename(entry.path(), bytes_dir / entry.path().filename());
    fuzz::write_file(fs::path(entry.path()).replace_extension(".recipe"),
                     yaml.empty() ? recipe : std::string(yaml) + std::string(fuzz::kSplit) + recipe);
  }
}

// ---- parameter files: every tool's listing of defaults ----

void params_seeds() {
  const Schema smre = smre_schema();
  for (const Schema* s : {&smre, &fit2d_schema(), &sofi_schema(), &frc_schema(), &bench_schema()}) {
    for (const std::string format : {"prm", "json"}) {
      std::ostringstream text;
      s->print(text, format);
      fuzz::write_file(seed(format, s->tool() + "_defaults." + format), text.str());
    }
  }
}

// ---- TIFF ----

struct TiffVariant {
  const char* name;
  const char* mode;  // libtiff open mode: "w", "w8" (BigTIFF), "wb" (big-endian)
  std::uint16_t bits = 16, format = SAMPLEFORMAT_UINT, compression = COMPRESSION_NONE;
  bool tiled = false;
  std::uint32_t rows_per_strip = 16;
  int pages = 3;
  const char* description = nullptr;
  bool thumbnail = false;  // a reduced-resolution page after the first
};

void tiff_variant(const TiffVariant& v) {
  constexpr std::uint32_t W = 16, H = 12;
  const fs::path path = seed("tiff", std::string(v.name) + ".tif");
  TIFF* t = TIFFOpen(path.c_str(), v.mode);
  if (!t) throw std::runtime_error(std::string("libtiff cannot write ") + path.string());
  const std::size_t bpp = v.bits / 8;
  std::vector<unsigned char> page(W * H * bpp);
  for (int p = 0; p < v.pages; ++p) {
    for (std::uint32_t i = 0; i < W * H; ++i) {
      const double value = 100 + 7 * p + (i % W) + 3 * (i / W);
      unsigned char* px = page.data() + i * bpp;
      if (v.format == SAMPLEFORMAT_IEEEFP && v.bits == 32) {
        const float f = static_cast<float>(value) + 0.25f;
        std::memcpy(px, &f, 4);
      } else if (v.format == SAMPLEFORMAT_IEEEFP) {
        const double d = value + 0.25;
        std::memcpy(px, &d, 8);
      } else if (v.bits == 8) {
        px[0] = static_cast<unsigned char>(value);
      } else if (v.bits == 16 && v.format == SAMPLEFORMAT_INT) {
        const auto s = static_cast<std::int16_t>(value - 150);
        std::memcpy(px, &s, 2);
      } else if (v.bits == 16) {
        const auto s = static_cast<std::uint16_t>(value);
        std::memcpy(px, &s, 2);
      } else {
        const auto s = static_cast<std::uint32_t>(value * 1000);
        std::memcpy(px, &s, 4);
      }
    }
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, W);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, H);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, v.bits);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, v.format);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(t, TIFFTAG_COMPRESSION, v.compression);
    if (p == 0 && v.description) TIFFSetField(t, TIFFTAG_IMAGEDESCRIPTION, v.description);
    if (p == 0) {
      TIFFSetField(t, TIFFTAG_XRESOLUTION, 10.0f);
      TIFFSetField(t, TIFFTAG_YRESOLUTION, 10.0f);
    }
    if (v.tiled) {
      TIFFSetField(t, TIFFTAG_TILEWIDTH, 16);
      TIFFSetField(t, TIFFTAG_TILELENGTH, 16);
      std::vector<unsigned char> tile(16 * 16 * bpp, 0);
      for (std::uint32_t r = 0; r < H; ++r) std::memcpy(tile.data() + r * 16 * bpp, page.data() + r * W * bpp, W * bpp);
      TIFFWriteEncodedTile(t, 0, tile.data(), static_cast<tmsize_t>(tile.size()));
    } else {
      TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, v.rows_per_strip);
      const std::uint32_t strips = (H + v.rows_per_strip - 1) / v.rows_per_strip;
      for (std::uint32_t s = 0; s < strips; ++s) {
        const std::uint32_t rows = std::min(v.rows_per_strip, H - s * v.rows_per_strip);
        TIFFWriteEncodedStrip(t, s, page.data() + s * v.rows_per_strip * W * bpp, static_cast<tmsize_t>(rows * W * bpp));
      }
    }
    TIFFWriteDirectory(t);
    if (p == 0 && v.thumbnail) {  // a reduced-resolution copy: not a frame
      TIFFSetField(t, TIFFTAG_SUBFILETYPE, FILETYPE_REDUCEDIMAGE);
      TIFFSetField(t, TIFFTAG_IMAGEWIDTH, W / 2);
      TIFFSetField(t, TIFFTAG_IMAGELENGTH, H / 2);
      TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, v.bits);
      TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
      TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, v.format);
      TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, H / 2);
      TIFFWriteEncodedStrip(t, 0, page.data(), static_cast<tmsize_t>(W / 2 * H / 2 * bpp));
      TIFFWriteDirectory(t);
    }
  }
  TIFFClose(t);
}

void tiff_seeds() {
  MovieSettings movie;
  movie.frames = 4;
  movie.width = 16;
  movie.height = 16;
  movie.emitters = 3;
  simulate_movie(movie, seed("tiff", "simulated_u16.tif").string());
  std::vector<float> a(8 * 6, 1.5f), b(8 * 6, -2.0f);
  const float* pages[] = {a.data(), b.data()};
  write_float_pages(seed("tiff", "float_pages.tif").string(), 8, 6, pages, 108.0, "nanoscopy fuzz seeds");

  const char* ome =
      "<?xml version=\"1.0\"?><OME><Image><Pixels PhysicalSizeX=\"0.16\" PhysicalSizeXUnit=\"\xC2\xB5m\" "
      "SizeX=\"16\" SizeY=\"12\" SizeT=\"3\"/></Image></OME>";
  const char* imagej = "ImageJ=1.53t\nimages=3\nslices=3\nunit=micron\nloop=false\n";
  const TiffVariant variants[] = {
      {"lzw", "w", 16, SAMPLEFORMAT_UINT, COMPRESSION_LZW},
      {"deflate_strips", "w", 16, SAMPLEFORMAT_UINT, COMPRESSION_ADOBE_DEFLATE, false, 5},
      {"packbits_u8", "w", 8, SAMPLEFORMAT_UINT, COMPRESSION_PACKBITS},
      {"tiled_deflate", "w", 16, SAMPLEFORMAT_UINT, COMPRESSION_ADOBE_DEFLATE, true},
      {"tiled_plain", "w", 16, SAMPLEFORMAT_UINT, COMPRESSION_NONE, true},
      {"big_endian_i16", "wb", 16, SAMPLEFORMAT_INT, COMPRESSION_NONE, false, 4},
      {"bigtiff_f32", "w8", 32, SAMPLEFORMAT_IEEEFP},
      {"bigtiff_lzw_u32", "w8", 32, SAMPLEFORMAT_UINT, COMPRESSION_LZW},
      {"f64_ome", "w", 64, SAMPLEFORMAT_IEEEFP, COMPRESSION_NONE, false, 16, 3, ome},
      {"imagej_u16", "w", 16, SAMPLEFORMAT_UINT, COMPRESSION_NONE, false, 16, 3, imagej},
      {"thumbnail", "w", 16, SAMPLEFORMAT_UINT, COMPRESSION_NONE, false, 16, 2, nullptr, true},
  };
  for (const auto& v : variants) tiff_variant(v);
}

// ---- HDF5 stacks ----

void hdf5_dataset(const fs::path& path, const char* name, int rank, const hsize_t* dims, hid_t type, bool gzip,
                  const char* pixel_attribute) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (gzip) {
    std::vector<hsize_t> chunk(dims, dims + rank);
    chunk[0] = 1;
    H5Pset_chunk(dcpl, rank, chunk.data());
    H5Pset_deflate(dcpl, 4);
  }
  const hid_t space = H5Screate_simple(rank, dims, nullptr);
  const hid_t d = H5Dcreate2(file, name, type, space, lcpl, dcpl, H5P_DEFAULT);
  hsize_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[i];
  std::vector<double> values(n);
  for (hsize_t i = 0; i < n; ++i) values[i] = static_cast<double>(i % 97);
  H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  if (pixel_attribute) {
    const hid_t aspace = H5Screate(H5S_SCALAR);
    const hid_t a = H5Acreate2(d, pixel_attribute, H5T_IEEE_F64LE, aspace, H5P_DEFAULT, H5P_DEFAULT);
    const double v = 0.1;
    H5Awrite(a, H5T_NATIVE_DOUBLE, &v);
    H5Aclose(a);
    H5Sclose(aspace);
  }
  H5Dclose(d);
  H5Sclose(space);
  H5Pclose(dcpl);
  H5Pclose(lcpl);
  H5Fclose(file);
}

void hdf5_seeds() {
  MovieSettings movie;
  movie.frames = 4;
  movie.width = 12;
  movie.height = 10;
  movie.emitters = 3;
  simulate_movie(movie, seed("hdf5", "simulated_u16.h5").string());
  ImageMeta meta;
  meta.width = 8;
  meta.height = 6;
  meta.frames = 2;
  meta.type = PixelType::f32;
  meta.pixel_size_nm = 160;
  meta.root_attributes = {{"note", "fuzz seed"}};
  auto writer = create_image_writer(seed("hdf5", "float_stack.h5").string(), meta);
  std::vector<float> frames(2 * 8 * 6, 3.5f);
  writer->write(frames.data(), 2);
  writer->close();
  const hsize_t stack[] = {3, 6, 8}, image[] = {6, 8};
  hdf5_dataset(seed("hdf5", "gzip_chunked_u16.h5"), "/data", 3, stack, H5T_STD_U16LE, true, "pixel_size_nm");
  hdf5_dataset(seed("hdf5", "nexus_2d_i8.h5"), "/entry/data/data", 2, image, H5T_STD_I8LE, false, "element_size_um");
  hdf5_dataset(seed("hdf5", "ilastik_f64_be.h5"), "/exported_data", 3, stack, H5T_IEEE_F64BE, false, nullptr);
  hdf5_dataset(seed("hdf5", "i64.h5"), "/ImageData", 3, stack, H5T_STD_I64LE, true, "pixel_size_um");
}

// ---- Picasso .raw + .yaml ----

void raw_seeds() {
  const std::string yaml =
      "Byte Order: <\nCamera: Simulation\nData Type: uint16\nFrames: 3\nHeight: 6\nWidth: 8\n"
      "Camera.Pixelsize: 130\n";
  std::string raw(3 * 6 * 8 * 2, '\0');
  for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<char>(i * 7);
  fuzz::write_file(seed("raw", "u16_le"), yaml + std::string(fuzz::kSplit) + raw);
  const std::string yaml_be =
      "Byte Order: '>'\nData Type: float32\nFrames: 2\nHeight: 4\nWidth: 3\n---\nCamera:\n  Pixelsize: 100\n";
  fuzz::write_file(seed("raw", "f32_be"), yaml_be + std::string(fuzz::kSplit) + std::string(2 * 4 * 3 * 4, '\x41'));
}

// ---- localization files ----

std::vector<Localization> some_locs() {
  std::vector<Localization> locs;
  for (int i = 0; i < 6; ++i) {
    Localization l;
    l.frame = i / 2;
    l.x = 3.25 + i;
    l.y = 4.5 + 0.5 * i;
    l.sigma = 1.3;
    l.photons = 1000 + 10 * i;
    l.background = 20;
    l.lpx = l.lpy = 0.05;
    l.chi2 = 1.1;
    l.net_gradient = 500;
    l.iterations = 5;
    l.status = FitStatus::converged_min_delta;
    locs.push_back(l);
  }
  return locs;
}

LocWriterContext loc_context() {
  LocWriterContext ctx;
  ctx.camera.pixel_size_nm = 108;
  ctx.width = 16;
  ctx.height = 16;
  ctx.frames = 4;
  ctx.data_type = "uint16";
  ctx.version = "fuzz";
  ctx.parameters = {{"Input file", "movie.tif"}, {"Box", "7"}};
  return ctx;
}

// The tools' tables are chunked in 64 KB chunks; the same rows and attributes in a
// contiguous float64 table make a seed of a few KB, which mutates far better.
void compact_table(const fs::path& path, const std::vector<Localization>& locs, const TextAttributes& attributes) {
  std::vector<double> rows;
  pack_localizations(locs, rows);
  const auto columns = fit2d_part_columns();
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t type = H5Tcreate(H5T_COMPOUND, columns.size() * sizeof(double));
  for (std::size_t i = 0; i < columns.size(); ++i)
    H5Tinsert(type, columns[i].name.c_str(), i * sizeof(double), H5T_IEEE_F64LE);
  const hsize_t n = locs.size();
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t d = H5Dcreate2(file, "locs", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data());
  detail::h5::write_attributes(file, attributes);
  H5Dclose(d);
  H5Sclose(space);
  H5Tclose(type);
  H5Fclose(file);
}

void loc_seeds(const fs::path& work) {
  const auto locs = some_locs();
  write_localizations(seed("locs_csv", "thunderstorm.csv").string(), "", loc_context(), locs);
  const fs::path hdf5 = work / "seed_locs.hdf5", yaml = work / "seed_locs.yaml";
  write_localizations(hdf5.string(), "", loc_context(), locs);
  pair_seed("locs_picasso", "nanoscopy_locs", yaml, hdf5);
  const fs::path compact = work / "compact.hdf5";
  compact_table(compact, locs, {});
  pair_seed("locs_picasso", "compact_locs", yaml, compact);
  fs::copy_file(compact, seed("locs_picasso", "compact_no_yaml.hdf5"), fs::copy_options::overwrite_existing);
}

// ---- part files ----

void part_seeds() {
  PartOrigin origin{"", "movie.tif", "0123456789abcdef", "fedcba9876543210", 10, 2, 6};
  TextAttributes extra = writer_context_attributes(loc_context());
  extra.insert(extra.end(), {{"input", "movie.tif"}, {"candidates", "12"}, {"rejected", "3"}});
  auto locs = some_locs();
  for (auto& l : locs) l.frame += 2;
  std::vector<double> rows;
  pack_localizations(locs, rows);
  auto table = create_hdf5_table_writer(seed("part_file", "fit2d_part.h5").string(), "locs", fit2d_part_columns(),
                                        part_attributes(kFit2dPartFormat, origin, extra));
  table->append(rows);
  table->finish();
  compact_table(seed("part_file", "fit2d_part_compact.h5"), locs, part_attributes(kFit2dPartFormat, origin, extra));

  ImageMeta meta;
  meta.width = 8;
  meta.height = 6;
  meta.frames = 4;
  meta.type = PixelType::f32;
  meta.root_attributes = part_attributes(kSmrePartFormat, origin);
  auto writer = create_image_writer(seed("part_file", "smre_part.h5").string(), meta);
  std::vector<float> frames(4 * 8 * 6, 0.5f);
  writer->write(frames.data(), 4);
  writer->close();
}

void sofi_seed(const std::string& name, const SofiProblemOptions& options, bool open_block) {
  SofiPartial p;
  p.stack_fingerprint = "0123456789abcdef";
  p.parameter_fingerprint = "fedcba9876543210";
  p.stack_name = "movie.tif";
  p.options = options;
  p.width = 5;
  p.height = 4;
  p.block = 10;
  p.sequence = {0, 1, open_block ? 25 : 20};
  p.begin = 0;
  p.end = p.sequence.count;
  p.pixel_size_nm = 100;
  const SofiProblem plan = make_sofi_problem(p.width, p.height, p.options);
  p.acc.finished.reset(plan);
  p.acc.finished.blocks = open_block ? 1 : 2;
  p.acc.finished.frames = open_block ? 10 : 20;
  for (auto& plane : p.acc.finished.planes)
    for (std::size_t i = 0; i < plane.size(); ++i) plane[i] = 1.0 + 0.01 * static_cast<double>(i);
  for (std::size_t i = 0; i < p.acc.finished.frame_sum.size(); ++i) p.acc.finished.frame_sum[i] = 100.0 + static_cast<double>(i);
  if (open_block) {  // the last block (frames 10-24), as the range edge leaves it
    BlockSums b;
    b.block = 1;
    b.frames = 15;
    b.tuples = 15 - plan.max_lag;
    const std::size_t pixels = static_cast<std::size_t>(plan.pixels());
    b.shift.assign(pixels, 100.0f);
    b.frame_sum.assign(pixels, 3.0);
    b.terms.assign(plan.terms.size() * pixels, 0.5);
    p.acc.open.push_back(std::move(b));
  }
  write_sofi_partial(seed("sofi_partial", name).string(), p);
}

void sofi_seeds() {
  SofiProblemOptions auto_cumulants;
  auto_cumulants.orders = {2, 3};
  sofi_seed("auto_2_3.h5", auto_cumulants, false);
  sofi_seed("auto_2_3_open_block.h5", auto_cumulants, true);
  SofiProblemOptions cross;
  cross.orders = {2};
  cross.cross = true;
  sofi_seed("cross_2.h5", cross, false);
}

// Picasso's own files (tests/data/picasso), when there.
void peer_seeds(const fs::path& peers) {
  const auto copy = [&](const char* name, const std::string& target) {
    if (fs::exists(peers / name)) fs::copy_file(peers / name, seed(target, name), fs::copy_options::overwrite_existing);
  };
  copy("picasso_testdata_locs.hdf5", "hdf5");
  if (fs::exists(peers / "picasso_testdata_locs.hdf5") && fs::exists(peers / "picasso_testdata_locs.yaml"))
    pair_seed("locs_picasso", "picasso_testdata_locs", peers / "picasso_testdata_locs.yaml",
              peers / "picasso_testdata_locs.hdf5");
  if (fs::exists(peers / "picasso_testdata.raw") && fs::exists(peers / "picasso_testdata.yaml")) {
    // Picasso's movie (100 frames of 32x32 uint16), cut to its first 2 frames.
    std::string yaml = slurp(peers / "picasso_testdata.yaml");
    const auto at = yaml.find("Frames: 100");
    if (at != std::string::npos) yaml.replace(at, 11, "Frames: 2");
    fuzz::write_file(seed("raw", "picasso_testdata_2frames"),
                     yaml + std::string(fuzz::kSplit) + slurp(peers / "picasso_testdata.raw").substr(0, 2 * 32 * 32 * 2));
  }
}

// ---- --where expressions, calibrations, camera maps ----

void where_seeds() {
  const char* expressions[] = {
      "photons > 500 and lpx < 0.1",
      "abs(z) < 300 && sqrt(sx * sy) <= 1.5 || !(frame >= 100)",
      "not (status != 0) or (net_gradient - bg) / photons == -1.5e-3",
      "ellipticity < .2 and chi2 > 0 and iterations < 50 and log_likelihood != 0 and lpz < 20 and y > x",
      "((((x))))+-(-y)*2",
  };
  int k = 0;
  for (const char* e : expressions) fuzz::write_file(seed("where", "expr" + std::to_string(k++)), e);
}

void calibration_seeds() {
  AstigmaticCalibration c = default_astigmatic_calibration(100);
  fuzz::write_file(seed("calibration", "default.json"), to_json(c));
  c.x.a = 0.02;
  c.y.b = -0.01;
  c.z_min_nm = -450;
  c.z_max_nm = 380;
  c.pixel_size_nm = 108;
  fuzz::write_file(seed("calibration", "higher_order.json"), to_json(c));
}

void camera_map_seeds(const fs::path& work) {
  CameraMaps m;
  m.width = 6;
  m.height = 4;
  for (std::int64_t i = 0; i < m.pixels(); ++i) {
    m.offset.push_back(100.0f + static_cast<float>(i));
    m.gain.push_back(2.0f + 0.01f * static_cast<float>(i));
    m.variance.push_back(4.0f + static_cast<float>(i % 3));
  }
  const fs::path maps = work / "maps.h5";
  write_camera_maps_hdf5(maps.string(), m, "nanoscopy fuzz seeds");
  fuzz::write_file(seed("camera_maps", "maps_6x4"), "6x4" + std::string(fuzz::kSplit) + slurp(maps));
  fuzz::write_file(seed("camera_maps", "maps_other_frame"), "8x8" + std::string(fuzz::kSplit) + slurp(maps));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::cerr << "usage: nanoscopy_fuzz_seeds OUT_DIR [PEER_DIR]\n";
    return 2;
  }
  out_dir = argv[1];
  try {
    const fs::path work = out_dir / ".work";
    fs::create_directories(work);
    params_seeds();
    tiff_seeds();
    hdf5_seeds();
    raw_seeds();
    loc_seeds(work);
    part_seeds();
    sofi_seeds();
    where_seeds();
    calibration_seeds();
    camera_map_seeds(work);
    if (argc == 3) peer_seeds(argv[2]);
    for (const char* target : {"hdf5", "locs_picasso", "part_file", "sofi_partial", "camera_maps"}) hdf5_seeds_as_recipes(target, work);
    fs::remove_all(work);
  } catch (const std::exception& e) {
    std::cerr << "nanoscopy_fuzz_seeds: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
