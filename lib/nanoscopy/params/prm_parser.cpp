// The deal.II ParameterHandler text format (the SMRE paper's listing), read the
// way deal.II reads it: lines are trimmed, a trailing '\' joins the next line,
// '#' starts a comment, '=' splits a set statement at its first occurrence.
#include <string>
#include <vector>

#include "nanoscopy/core/clip_text.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/params/param_detail.hpp"
#include "nanoscopy/params/params.hpp"

namespace nanoscopy {
namespace {

using param_detail::trim;

struct OpenSection {
  std::string name;
  int line;
};

class PrmReader {
 public:
  explicit PrmReader(const std::string& file) : file_(file) {}

  void scan(std::string line, int line_no) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    for (char& c : line)
      if (c == '\t') c = ' ';
    line = trim(line);
    if (line.empty()) return;

    const auto space = line.find(' ');
    const std::string keyword = line.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : trim(line.substr(space + 1));
    const std::string where = at(line_no);

    if (keyword == "subsection" || keyword == "SUBSECTION") {
      if (rest.empty()) throw UsageError(where, "'subsection' without a name (expected 'subsection NAME')");
      param_detail::check_name(rest, "subsection name", where);
      if (open_.size() >= param_detail::kMaxParamDepth)
        throw UsageError(where, "subsections nested deeper than " + std::to_string(param_detail::kMaxParamDepth) + " levels");
      open_.push_back({rest, line_no});
    } else if (keyword == "end" || keyword == "END") {
      if (!rest.empty()) throw UsageError(where, "unexpected text after 'end': " + quote_value(rest));
      if (open_.empty()) throw UsageError(where, "'end' without an open subsection");
      open_.pop_back();
    } else if (keyword == "set" || keyword == "SET") {
      const auto eq = rest.find('=');
      if (eq == std::string::npos) throw UsageError(where, "'set' without '=' (expected 'set KEY = VALUE')");
      const std::string key = trim(rest.substr(0, eq));
      if (key.empty()) throw UsageError(where, "'set' without a key (expected 'set KEY = VALUE')");
      param_detail::check_name(key, "key", where);
      const std::string path = section_path(open_.size()) + (open_.empty() ? "" : "/") + key;
      const auto [it, inserted] =
          tree_.emplace(path, ParamEntry{trim(rest.substr(eq + 1)), ParamSource{file_, line_no}});
      if (!inserted)
        throw UsageError(where, "duplicate parameter " + quote_value(path) + " (already set on line " +
                                    std::to_string(it->second.source.line) + ")");
    } else {
      throw UsageError(
          where, "cannot read " + quote_value(line) + " (expected 'subsection NAME', 'set KEY = VALUE', 'end' or a '#' comment)");
    }
  }

  ParamTree finish(bool in_continuation, int continuation_line) {
    if (in_continuation) throw UsageError(at(continuation_line), "the file ends inside a line continued with '\\'");
    if (!open_.empty())
      throw UsageError(at(open_.back().line), "subsection " + quote_value(section_path(open_.size())) +
                                                  " opened on this line is never closed (missing 'end')");
    return std::move(tree_);
  }

 private:
  std::string at(int line_no) const { return file_ + ":" + std::to_string(line_no); }

  std::string section_path(std::size_t depth) const {
    std::string path;
    for (std::size_t i = 0; i < depth; ++i) path += (i ? "/" : "") + open_[i].name;
    return path;
  }

  std::string file_;
  std::vector<OpenSection> open_;
  ParamTree tree_;
};

}  // namespace

ParamTree parse_prm(const std::string& text, const std::string& file) {
  PrmReader reader(file);
  std::string logical;     // the current line, with continued lines joined
  int logical_start = 0;   // its first physical line
  bool continued = false;  // the previous line ended in '\'
  std::size_t pos = 0;
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) pos = 3;  // UTF-8 byte order mark
  for (int line_no = 1; pos < text.size(); ++line_no) {
    auto end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = trim(std::string_view(text).substr(pos, end - pos));
    pos = end + 1;
    if (!continued) logical_start = line_no;
    if (!line.empty() && line.back() == '\\') {
      line.pop_back();
      logical += line;
      continued = true;
      continue;
    }
    logical += line;
    continued = false;
    reader.scan(std::move(logical), logical_start);
    logical.clear();
  }
  return reader.finish(continued, logical_start);
}

}  // namespace nanoscopy
