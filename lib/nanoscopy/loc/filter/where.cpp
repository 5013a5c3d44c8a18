#include "nanoscopy/loc/filter/where.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <functional>

#include "nanoscopy/core/clip_text.hpp"
#include "nanoscopy/core/error.hpp"

namespace nanoscopy {
namespace {

using Column = std::function<double(const Localization&)>;

struct NamedColumn {
  const char* name;
  Column get;
};

double ellipticity(const Localization& l) {
  const double a = l.sigma, b = l.sy();
  const double hi = std::max(a, b);
  return hi > 0 ? (hi - std::min(a, b)) / hi : 0.0;
}

const std::vector<NamedColumn>& named_columns() {
  static const std::vector<NamedColumn> columns = {
      {"frame", [](const Localization& l) { return static_cast<double>(l.frame); }},
      {"x", [](const Localization& l) { return l.x; }},
      {"y", [](const Localization& l) { return l.y; }},
      {"photons", [](const Localization& l) { return l.photons; }},
      {"sx", [](const Localization& l) { return l.sigma; }},
      {"sy", [](const Localization& l) { return l.sy(); }},
      {"bg", [](const Localization& l) { return l.background; }},
      {"lpx", [](const Localization& l) { return l.lpx; }},
      {"lpy", [](const Localization& l) { return l.lpy; }},
      {"ellipticity", ellipticity},
      {"net_gradient", [](const Localization& l) { return l.net_gradient; }},
      {"chi2", [](const Localization& l) { return l.chi2; }},
      {"iterations", [](const Localization& l) { return static_cast<double>(l.iterations); }},
      {"status", [](const Localization& l) { return static_cast<double>(static_cast<int>(l.status)); }},
      {"log_likelihood", [](const Localization& l) { return l.log_likelihood; }},
      {"photons_unc", [](const Localization& l) { return l.photons_unc; }},
      {"bg_unc", [](const Localization& l) { return l.bg_unc; }},
      {"sx_unc", [](const Localization& l) { return l.sx_unc; }},
      {"sy_unc", [](const Localization& l) { return l.sy_unc; }},
      {"photon_rate", [](const Localization& l) { return l.photon_rate; }},
      {"z", [](const Localization& l) { return l.z; }},
      {"lpz", [](const Localization& l) { return l.lpz; }},
  };
  return columns;
}

}  // namespace

// One node of the expression tree: an operator with its operands, a number or a column.
struct WhereFilter::Node {
  enum class Kind { number, column, negate, logical_not, abs, sqrt, binary } kind = Kind::number;
  std::string op;  // binary: + - * / < <= > >= == != and or
  double value = 0;
  Column column;
  std::unique_ptr<Node> a, b;
  int depth = 1;  // of the tree below and with this node (bounded by kMaxWhereDepth: eval recurses)

  double eval(const Localization& l) const {
    switch (kind) {
      case Kind::number:
        return value;
      case Kind::column:
        return column(l);
      case Kind::negate:
        return -a->eval(l);
      case Kind::logical_not:
        return a->eval(l) != 0 ? 0.0 : 1.0;  // NaN != 0: not NaN is false
      case Kind::abs:
        return std::abs(a->eval(l));
      case Kind::sqrt:
        return std::sqrt(a->eval(l));
      case Kind::binary:
        break;
    }
    if (op == "and") return a->eval(l) != 0 && b->eval(l) != 0 ? 1.0 : 0.0;
    if (op == "or") return a->eval(l) != 0 || b->eval(l) != 0 ? 1.0 : 0.0;
    const double x = a->eval(l), y = b->eval(l);
    if (op == "+") return x + y;
    if (op == "-") return x - y;
    if (op == "*") return x * y;
    if (op == "/") return x / y;
    if (op == "<") return x < y ? 1.0 : 0.0;
    if (op == "<=") return x <= y ? 1.0 : 0.0;
    if (op == ">") return x > y ? 1.0 : 0.0;
    if (op == ">=") return x >= y ? 1.0 : 0.0;
    if (op == "==") return x == y ? 1.0 : 0.0;
    return x != y ? 1.0 : 0.0;  // "!=" (NaN != NaN is true, as in C and numpy)
  }
};

namespace {

using Node = WhereFilter::Node;

// Recursive descent over the grammar of where.hpp.
class Parser {
 public:
  Parser(const std::string& text, const std::string& where) : s_(text), where_(where) {}

  std::unique_ptr<Node> parse() {
    if (s_.size() > kMaxWhereLength)
      throw UsageError(where_, "the expression has " + std::to_string(s_.size()) + " characters (at most " +
                                   std::to_string(kMaxWhereLength) + ")");
    auto n = parse_or();
    skip();
    if (i_ < s_.size()) fail("unexpected '" + s_.substr(i_, 1) + "'");
    return n;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw UsageError(where_, what + " at character " + std::to_string(i_ + 1) + " of " + quote_value(s_));
  }
  // Recursion guard of the descent: one level per '(' or function, prefix operator or comparison.
  struct Level {
    explicit Level(Parser& p) : parser(p) {
      if (++parser.level_ > kMaxWhereDepth)
        parser.fail("the expression nests too deeply (more than " + std::to_string(kMaxWhereDepth) +
                    " levels of parentheses, functions and operators)");
    }
    ~Level() { --parser.level_; }
    Level(const Level&) = delete;
    Level& operator=(const Level&) = delete;
    Parser& parser;
  };
  // A node's depth; the tree's depth is bounded as the descent's is (a + a + … builds depth by iteration).
  std::unique_ptr<Node> checked(std::unique_ptr<Node> n) {
    n->depth = 1 + std::max(n->a ? n->a->depth : 0, n->b ? n->b->depth : 0);
    if (n->depth > kMaxWhereDepth)
      fail("the expression nests too deeply (more than " + std::to_string(kMaxWhereDepth) + " levels of parentheses, functions and operators)");
    return n;
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  // Consumes `token` when it comes next (a word only when whole).
  bool accept(const std::string& token) {
    skip();
    if (s_.compare(i_, token.size(), token) != 0) return false;
    const bool word = std::isalpha(static_cast<unsigned char>(token[0])) != 0;
    const std::size_t end = i_ + token.size();
    if (word && end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_')) return false;
    i_ = end;
    return true;
  }
  std::unique_ptr<Node> binary(const std::string& op, std::unique_ptr<Node> a, std::unique_ptr<Node> b) {
    auto n = std::make_unique<Node>();
    n->kind = Node::Kind::binary;
    n->op = op;
    n->a = std::move(a);
    n->b = std::move(b);
    return checked(std::move(n));
  }
  std::unique_ptr<Node> unary(Node::Kind kind, std::unique_ptr<Node> a) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->a = std::move(a);
    return checked(std::move(n));
  }

  std::unique_ptr<Node> parse_or() {
    auto n = parse_and();
    while (accept("or") || accept("||")) n = binary("or", std::move(n), parse_and());
    return n;
  }
  std::unique_ptr<Node> parse_and() {
    auto n = parse_not();
    while (accept("and") || accept("&&")) n = binary("and", std::move(n), parse_not());
    return n;
  }
  std::unique_ptr<Node> parse_not() {
    const Level level(*this);
    skip();
    if (accept("not")) return unary(Node::Kind::logical_not, parse_not());
    if (s_.compare(i_, 2, "!=") != 0 && accept("!")) return unary(Node::Kind::logical_not, parse_not());
    return parse_cmp();
  }
  std::unique_ptr<Node> parse_cmp() {
    auto n = parse_sum();
    for (const char* op : {"<=", ">=", "==", "!=", "<", ">"})
      if (accept(op)) return binary(op, std::move(n), parse_sum());
    return n;
  }
  std::unique_ptr<Node> parse_sum() {
    auto n = parse_prod();
    for (;;) {
      if (accept("+"))
        n = binary("+", std::move(n), parse_prod());
      else if (accept("-"))
        n = binary("-", std::move(n), parse_prod());
      else
        return n;
    }
  }
  std::unique_ptr<Node> parse_prod() {
    auto n = parse_unary();
    for (;;) {
      if (accept("*"))
        n = binary("*", std::move(n), parse_unary());
      else if (accept("/"))
        n = binary("/", std::move(n), parse_unary());
      else
        return n;
    }
  }
  std::unique_ptr<Node> parse_unary() {
    const Level level(*this);
    if (accept("-")) return unary(Node::Kind::negate, parse_unary());
    skip();
    if (i_ >= s_.size()) fail("the expression ends early");
    if (accept("(")) {
      auto n = parse_or();
      if (!accept(")")) fail("')' expected");
      return n;
    }
    for (const auto& [name, kind] : {std::pair{"abs", Node::Kind::abs}, std::pair{"sqrt", Node::Kind::sqrt}}) {
      const std::size_t at = i_;
      if (accept(name)) {
        if (accept("(")) {
          auto n = unary(kind, parse_or());
          if (!accept(")")) fail("')' expected");
          return n;
        }
        i_ = at;  // a column that happens to be called abs: not one of ours, reported below
      }
    }
    const char c = s_[i_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      char* end = nullptr;
      const double v = std::strtod(s_.c_str() + i_, &end);
      if (end == s_.c_str() + i_) fail("a number expected");
      i_ = static_cast<std::size_t>(end - s_.c_str());
      auto n = std::make_unique<Node>();
      n->value = v;
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
      const std::string name = s_.substr(start, i_ - start);
      for (const auto& col : named_columns())
        if (name == col.name) {
          auto n = std::make_unique<Node>();
          n->kind = Node::Kind::column;
          n->column = col.get;
          return n;
        }
      skip();
      if (i_ < s_.size() && s_[i_] == '(')
        throw UsageError(where_, "unknown function " + quote_value(name, 64) + " (functions: abs, sqrt)");
      std::string list;
      for (const auto& col : named_columns()) list += (list.empty() ? "" : ", ") + std::string(col.name);
      throw UsageError(where_, "unknown column " + quote_value(name, 64) + " (columns: " + list + ")");
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }

  const std::string& s_;
  std::string where_;
  std::size_t i_ = 0;
  int level_ = 0;
};

}  // namespace

WhereFilter::WhereFilter(const std::string& expression, const std::string& where)
    : expression_(expression), root_(Parser(expression, where).parse()) {}
WhereFilter::~WhereFilter() = default;
WhereFilter::WhereFilter(WhereFilter&&) noexcept = default;
WhereFilter& WhereFilter::operator=(WhereFilter&&) noexcept = default;

bool WhereFilter::keeps(const Localization& l) const {
  const double v = root_->eval(l);
  return v != 0 && !std::isnan(v);
}

std::vector<std::string> WhereFilter::columns() {
  std::vector<std::string> names;
  for (const auto& c : named_columns()) names.emplace_back(c.name);
  return names;
}

}  // namespace nanoscopy
