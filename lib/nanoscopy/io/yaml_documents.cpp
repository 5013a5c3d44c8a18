#include "nanoscopy/io/yaml_documents.hpp"

#include <yaml-cpp/eventhandler.h>

#include <fstream>
#include <sstream>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy::detail {
namespace {

// Metadata files hold a few documents; far more means the parser is stuck.
constexpr int kMaxDocuments = 1000;

class IgnoreEvents final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

std::vector<YAML::Node> load_yaml_documents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw YAML::BadFile(path);
  std::ostringstream text;
  text << in.rdbuf();
  {
    // A dry run counts the documents before any node is built.
    std::istringstream stream(text.str());
    YAML::Parser parser(stream);
    IgnoreEvents ignore;
    for (int documents = 0; parser.HandleNextDocument(ignore);)
      if (++documents > kMaxDocuments)
        throw InputError(path, "not valid YAML: the parser finds no end (more than " + std::to_string(kMaxDocuments) +
                                   " documents; a stray ',' at the start of a document?)");
  }
  std::istringstream stream(text.str());
  return YAML::LoadAll(stream);
}

std::vector<YAML::Node> read_yaml_documents(const std::string& path, const std::string& what) {
  try {
    return load_yaml_documents(path);
  } catch (const YAML::BadFile&) {
    throw InputError(path, "cannot read " + what);
  } catch (const YAML::Exception& e) {
    throw InputError(path + ":" + std::to_string(e.mark.line + 1), "not valid YAML: " + e.msg);
  }
}

MovieMetadata movie_metadata(const std::string& path) {
  const std::vector<YAML::Node> documents = read_yaml_documents(path, "the movie's metadata");
  if (documents.empty() || !documents.front().IsMap())
    throw InputError(path, "the movie's metadata must start with a map of keys (Width, Height, Frames, ...)");
  MovieMetadata out;
  for (const auto& entry : documents.front())
    if (entry.first.IsScalar() && entry.second.IsScalar())
      out.scalars.emplace_back(entry.first.Scalar(), entry.second.Scalar());
  YAML::Emitter text;
  text << documents.front();
  if (!text.good()) throw InputError(path, std::string("cannot re-emit the movie's metadata: ") + text.GetLastError());
  out.yaml = text.c_str();
  return out;
}

}  // namespace nanoscopy::detail
