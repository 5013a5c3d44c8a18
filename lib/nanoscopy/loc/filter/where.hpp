// A row filter over localizations (`fit2d filter --where 'photons > 500 and lpx < 0.1'`).
//
// Columns, in Picasso's names and units (what `fit2d filter` users see in their
// HDF5 files): frame (0-based), x, y, sx, sy, lpx, lpy (px), photons, bg
// (photons per pixel), ellipticity, net_gradient (camera counts), chi2, iterations,
// status (the FitStatus code), log_likelihood, photons_unc, bg_unc, sx_unc, sy_unc
// (mle fits), photon_rate (linked), z and lpz (nm, 3D).
//
// Grammar (case-sensitive names; keywords and, or, not; also &&, ||, !):
//   or   := and (("or" | "||") and)*
//   and  := not (("and" | "&&") not)*
//   not  := ("not" | "!") not | cmp
//   cmp  := sum (("<" | "<=" | ">" | ">=" | "==" | "!=") sum)?
//   sum  := prod (("+" | "-") prod)*
//   prod := unary (("*" | "/") unary)*
//   unary := "-" unary | number | column | "abs(" or ")" | "sqrt(" or ")" | "(" or ")"
// A comparison is 1 or 0; a row is kept when the whole expression is non-zero
// (a NaN comparison is false, as in Picasso's and pandas' filters).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "nanoscopy/loc/localization.hpp"

namespace nanoscopy {

// Bounds on an expression: its length in characters, and its nesting (parentheses, functions,
// prefix operators and chained binary operators each add a level), so that neither the
// recursive parse nor the evaluation can run out of stack.
inline constexpr std::size_t kMaxWhereLength = 100000;
inline constexpr int kMaxWhereDepth = 256;

class WhereFilter {
 public:
  // UsageError (where: `where`, e.g. "--where") on one line: a syntax error
  // with its position, an unknown column with the columns listed, an unknown
  // function with the functions listed, or an expression longer or deeper
  // than the bounds above.
  WhereFilter(const std::string& expression, const std::string& where);
  ~WhereFilter();
  WhereFilter(WhereFilter&&) noexcept;
  WhereFilter& operator=(WhereFilter&&) noexcept;

  bool keeps(const Localization& l) const;
  const std::string& expression() const { return expression_; }

  // The column names, in the order listed above.
  static std::vector<std::string> columns();

  struct Node;

 private:
  std::string expression_;
  std::unique_ptr<Node> root_;
};

}  // namespace nanoscopy
