#include "nanoscopy/bench/bench_compare.hpp"

#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"

namespace nanoscopy {

void add_compare_options(CLI::App& cmd, CompareOptions& o) {
  cmd.add_option("locs", o.locs, "Localizations: ThunderSTORM CSV or Picasso HDF5")->required()->type_name("LOCS");
  cmd.add_option("truth", o.truth, "The truth: bench simulate movie's STEM_truth.csv")->required()->type_name("TRUTH");
  cmd.add_option("--radius", o.radius_nm, "largest distance of a match, nm (the SMLM challenge's 250)")
      ->default_val(o.radius_nm)->check(CLI::PositiveNumber);
  cmd.add_option("--pixel-size", o.pixel_size_nm, "pixel size in nm (default: the Picasso file's own)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--json", o.json, "also write the numbers as JSON")->type_name("FILE");
}

CompareResult compare_with_truth(const CompareOptions& o) {
  // Both files are read in px with the same pixel size. Two CSVs are in nm, so
  // any size gives the same nm figures; a Picasso file brings its own.
  LocReadOptions read;
  read.pixel_size_nm = o.pixel_size_nm;
  if (read.pixel_size_nm <= 0) {
    read.pixel_size_nm = 100;
    if (loc_format_for(o.locs) == LocFormat::picasso_hdf5) {
      read.pixel_size_nm = read_localization_file(o.locs).pixel_size_nm;
      if (!(read.pixel_size_nm > 0))
        throw UsageError(o.locs, "the file does not say its pixel size (no Pixelsize in its .yaml): give --pixel-size");
    }
  }
  const auto locs = read_localizations(o.locs, read.pixel_size_nm);
  const auto truth = read_localizations(o.truth, read.pixel_size_nm);
  if (truth.empty()) throw InputError(o.truth, "the truth holds no emitters");
  CompareResult r;
  r.pixel_size_nm = read.pixel_size_nm;
  r.three_d = both_three_d(locs, truth);
  r.match = match_to_truth(locs, truth, o.radius_nm / read.pixel_size_nm, r.three_d);
  return r;
}

void run_compare(const CompareOptions& o, std::ostream& out) {
  if (!o.json.empty()) AtomicOutput check(o.json);  // an unwritable JSON fails now, not after the work
  const auto r = compare_with_truth(o);
  const TruthMatch& m = r.match;
  const double px = r.pixel_size_nm;
  out << "compare: " << o.locs << " against " << o.truth << " (matches within " << o.radius_nm << " nm)\n"
      << std::fixed << std::setprecision(1)
      << "  recall:             " << 100 * m.recall() << " % (" << m.true_positives << " of "
      << m.true_positives + m.false_negatives << " emitter images found)\n"
      << "  false positives:    " << 100 * (1 - m.precision()) << " % (" << m.false_positives << " of "
      << m.true_positives + m.false_positives << " localizations)\n"
      << "  Jaccard index:      " << 100 * m.jaccard() << " %\n"
      << std::setprecision(2) << "  RMS error:          " << m.rms_px * px << " nm lateral (x " << m.rms_x_px * px
      << " nm, y " << m.rms_y_px * px << " nm)\n"
      << "  median error:       " << m.median_px * px << " nm\n"
      << "  bias:               x " << m.bias_x_px * px << " nm, y " << m.bias_y_px * px << " nm\n";
  if (r.three_d)
    out << "  z error:            RMS " << m.rms_z_nm << " nm, median " << m.median_z_nm << " nm, bias " << m.bias_z_nm
        << " nm\n";
  out.unsetf(std::ios::fixed);
  if (o.json.empty()) return;
  nlohmann::json j = {{"locs", o.locs},
                            {"truth", o.truth},
                            {"radius_nm", o.radius_nm},
                            {"true_positives", m.true_positives},
                            {"false_positives", m.false_positives},
                            {"false_negatives", m.false_negatives},
                            {"recall", m.recall()},
                            {"precision", m.precision()},
                            {"jaccard", m.jaccard()},
                            {"rms_nm", m.rms_px * px},
                            {"median_error_nm", m.median_px * px},
                            {"rms_x_nm", m.rms_x_px * px},
                            {"rms_y_nm", m.rms_y_px * px},
                            {"bias_x_nm", m.bias_x_px * px},
                            {"bias_y_nm", m.bias_y_px * px}};
  if (r.three_d) j.update({{"rms_z_nm", m.rms_z_nm}, {"median_z_error_nm", m.median_z_nm}, {"bias_z_nm", m.bias_z_nm}});
  write_file_atomically(o.json, j.dump(2) + "\n");
}

}  // namespace nanoscopy
