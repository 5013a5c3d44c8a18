// Where simulated emitters sit: random points, straight filaments ("lines",
// like microtubules or actin) or circles ("rings", like nuclear pores), inside
// a box of the field. Shared by the SOFI stacks (blinking.hpp), the
// single-molecule movies (movie.hpp) and the simulated localizations
// (loc_sim.hpp), so that one sample looks the same to every simulator.
#pragma once

#include <random>
#include <string>
#include <vector>

namespace nanoscopy {

struct StructureSettings {
  std::string structure = "random";  // "random", "lines" or "rings"
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;  // the box emitters stay in, px (pixel centres at integers)
  double pixel_size_nm = 100;        // turns the ring radii into px
  int filaments = 0;                 // lines: number of filaments; 0: one per 40 emitters
  int rings = 0;                     // rings: number of rings; 0: one per 12 emitters
  double ring_radius_min_nm = 150;   // rings: radius uniform in [min, max], nm
  double ring_radius_max_nm = 300;
};

// The structure a simulator's settings `s` ask for (its structure, width, height, pixel_size_nm,
// filaments, rings, ring_radius_min_nm and ring_radius_max_nm) in its frame less `margin` px at each side.
template <class Settings>
StructureSettings structure_within(const Settings& s, double margin) {
  StructureSettings st;
  st.structure = s.structure;
  st.x0 = st.y0 = margin;
  st.x1 = static_cast<double>(s.width) - 1 - margin;
  st.y1 = static_cast<double>(s.height) - 1 - margin;
  st.pixel_size_nm = s.pixel_size_nm;
  st.filaments = s.filaments;
  st.rings = s.rings;
  st.ring_radius_min_nm = s.ring_radius_min_nm;
  st.ring_radius_max_nm = s.ring_radius_max_nm;
  return st;
}

struct EmitterPoint {
  double x, y;  // px
};

// `n` points. lines: each filament the chord of the box through a random point
// at a random angle, the points evenly spaced along the filaments' total
// length; rings: the points shared evenly among the rings, evenly spaced on
// each (a random phase), each ring inside the box when it fits. UsageError for
// an unknown structure.
std::vector<EmitterPoint> place_emitters(const StructureSettings& settings, int n, std::mt19937_64& rng);

}  // namespace nanoscopy
