// Parameter files: the SMRE paper's listing, the PRM and JSON readers, schema
// validation with suggestions, command-line precedence and print round trips.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/params/params.hpp"
#include "nanoscopy/params/tool_schemas.hpp"
#include "nanoscopy/params/tool_schemas.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;

using nanoscopy::test::contains;
using nanoscopy::test::expect_error;

namespace {

const std::string source_dir = NANOSCOPY_SOURCE_DIR;

void check_error(const std::function<void()>& f, const std::string& where, const std::string& fragment) {
  const UsageError e = expect_error<UsageError>(f);
  CHECK(e.where() == where);
  CHECK_MESSAGE(std::string(e.what()).find(fragment) != std::string::npos, e.message());
}

ParamTree prm(const std::string& text) {
  return parse_prm(text, "f.prm");
}
ParamTree json(const std::string& text) {
  return parse_json(text, "f.json");
}

std::string value(const ParamTree& tree, const std::string& path) {
  const auto it = tree.find(path);
  REQUIRE_MESSAGE(it != tree.end(), path);
  return it->second.value;
}

// A schema that exercises every type, nesting and top-level keys.
Schema test_schema() {
  Schema s("test");
  s.integer("seed", 7, 0, {}, "random seed");
  s.string("label", "a name with spaces", "a label");
  s.real("Fit/min step", 1e-4, 0, 1, "smallest step");
  s.choice("Fit/model", "sampled", {"sampled", "integrated"}, "spot model");
  s.boolean("Fit/Deep nest/enabled", true, "a nested switch");
  s.positive_real("Fit/Deep nest/width", 1.5, "a strictly positive width");
  s.string("Fit/Deep nest/empty", "", "empty by default");
  s.integer("Other/count", -3, -10, 10, "a bounded count");
  return s;
}

// Every value of `a` equals the one of `b`, read through the typed getters.
void check_same_values(const Params& a, const Params& b) {
  for (const auto& spec : a.schema().specs()) {
    CAPTURE(spec.path);
    switch (spec.type) {
      case ParamType::boolean:
        CHECK(a.get_bool(spec.path) == b.get_bool(spec.path));
        break;
      case ParamType::integer:
        CHECK(a.get_int(spec.path) == b.get_int(spec.path));
        break;
      case ParamType::real:
        CHECK(a.get_real(spec.path) == b.get_real(spec.path));
        break;
      case ParamType::string:
      case ParamType::choice:
        CHECK(a.get_string(spec.path) == b.get_string(spec.path));
        break;
    }
  }
}

Params reparse(const Schema& schema, const std::string& text, const std::string& format) {
  return schema.resolve(format == "prm" ? parse_prm(text, "printed.prm") : parse_json(text, "printed.json"));
}

}  // namespace

TEST_CASE("the paper's listing (params/smre.prm) loads with the smre schema and every value matches") {
  const std::string path = source_dir + "/params/smre.prm";
  const ParamTree tree = load_param_file(path);
  const Schema schema = smre_schema();
  // Every key of the listing is in the schema; the schema adds only the "method"
  // subsection and output/log (what the listing leaves to the code).
  CHECK(tree.size() == 17);
  for (const auto& spec : schema.specs())
    CHECK_MESSAGE((tree.count(spec.path) == 1) == (spec.path.rfind("method/", 0) != 0 && spec.path != "output/log"),
                  spec.path);

  const Params p = schema.resolve(tree);
  CHECK(p.get_string("input data/image") == "");
  CHECK(p.get_real("input data/alpha1") == 1.2);
  CHECK(p.get_real("input data/alpha2") == 0.12);
  CHECK(p.get_real("input data/gaussian noise") == 0.0);
  CHECK(p.get_real("input data/regularization") == 1.0);
  CHECK(p.get_real("input data/rho1") == 6.192);
  CHECK(p.get_real("input data/rho2") == 1.8);
  CHECK(p.get_real("input data/sigma") == 3.0);
  CHECK(p.get_string("output/output image") == "control.tif");
  CHECK(p.get_bool("output/control") == false);
  CHECK(p.get_int("program flow control/MRdepth") == 15);
  CHECK(p.get_bool("program flow control/approx") == false);
  CHECK(p.get_int("program flow control/maximum iterations") == 10000);
  CHECK(p.get_int("program flow control/report interval") == 1);
  CHECK(p.get_real("program flow control/tolerance") == 1e-3);
  CHECK(p.get_bool("simulate dataset from real image/simulate") == true);
  CHECK(p.get_bool("simulate dataset from real image/time seed") == false);

  // Lines as numbered in the paper's listing.
  CHECK(p.source("input data/image").describe() == path + ":5");
  CHECK(p.source("input data/alpha1").describe() == path + ":7");
  CHECK(p.source("input data/sigma").describe() == path + ":20");
  CHECK(p.source("simulate dataset from real image/time seed").describe() == path + ":53");

  // The paper's values are the schema's defaults except where a plain command
  // line must restore real data rather than simulate, not print every iteration,
  // and finish ordinary data in seconds (incomplete Dykstra, 2000 iterations,
  // tolerance 5e-3 sigma): the listing keeps its own (exact, 10000, 1e-3).
  const Params d = schema.defaults();
  CHECK(d.get_bool("simulate dataset from real image/simulate") == false);
  CHECK(d.get_string("output/output image") == "");
  CHECK(d.get_int("program flow control/report interval") == 10);
  for (const char* key : {"input data/alpha1", "input data/alpha2", "input data/rho1", "input data/rho2",
                          "input data/sigma", "input data/regularization"})
    CHECK(p.get_real(key) == d.get_real(key));
  CHECK(p.get_int("program flow control/MRdepth") == d.get_int("program flow control/MRdepth"));
  CHECK(p.get_bool("program flow control/approx") == false);
  CHECK(d.get_bool("program flow control/approx") == true);
  CHECK(p.get_int("program flow control/maximum iterations") == 10000);
  CHECK(d.get_int("program flow control/maximum iterations") == 2000);
  CHECK(p.get_real("program flow control/tolerance") == 1e-3);
  CHECK(d.get_real("program flow control/tolerance") == 5e-3);
}

TEST_CASE("params/smre.json gives the same Params as params/smre.prm") {
  const Schema schema = smre_schema();
  const Params from_prm = schema.resolve(load_param_file(source_dir + "/params/smre.prm"));
  const ParamTree tree = load_param_file(source_dir + "/params/smre.json");
  CHECK(tree.size() == load_param_file(source_dir + "/params/smre.prm").size());
  const Params from_json = schema.resolve(tree);
  check_same_values(from_prm, from_json);
  CHECK(value(tree, "program flow control/tolerance") == "1e-3");  // as written, no rounding
  CHECK(value(tree, "input data/regularization") == "1.0");
  CHECK(from_json.source("input data/sigma").line == 10);
  CHECK(from_json.source("simulate dataset from real image/time seed").line == 25);
}

TEST_CASE("PRM: nesting, comments, keys and values with spaces, continuation lines") {
  const ParamTree t =
      prm("# a comment line\n"
          "set top level = 5   # trailing comment\n"
          "\n"
          "subsection Outer Name\n"
          "  set key with  spaces = a value = with equals   \n"
          "  subsection Inner\n"
          "\tset\tx = 1e-3#no space before the comment\n"
          "  end\n"
          "  set Sigma = 1\n"
          "  set sigma = 2\n"
          "  set empty =\n"
          "  set long = first \\\n"
          "     second\\\n"
          "     third\n"
          "  set after = 9\n"
          "end\r\n"
          "SUBSECTION Outer Name\n"
          "  SET reentered = yes\n"
          "END\n");
  CHECK(t.size() == 9);
  CHECK(value(t, "top level") == "5");
  CHECK(value(t, "Outer Name/key with  spaces") == "a value = with equals");
  CHECK(value(t, "Outer Name/Inner/x") == "1e-3");
  CHECK(value(t, "Outer Name/Sigma") == "1");  // keys are case-sensitive
  CHECK(value(t, "Outer Name/sigma") == "2");
  CHECK(value(t, "Outer Name/empty") == "");
  CHECK(value(t, "Outer Name/long") == "first secondthird");  // deal.II joins the trimmed lines
  CHECK(value(t, "Outer Name/reentered") == "yes");
  CHECK(t.at("top level").source.describe() == "f.prm:2");
  CHECK(t.at("Outer Name/Inner/x").source.line == 7);
  CHECK(t.at("Outer Name/long").source.line == 12);  // a continued line is named by its first line
  CHECK(t.at("Outer Name/after").source.line == 15);
  CHECK(prm("").empty());
  CHECK(prm("\xEF\xBB\xBFset a = 1\n").count("a") == 1);  // byte order mark
}

TEST_CASE("PRM: malformed files name the file and line") {
  SUBCASE("'end' without a subsection") {
    check_error([] { prm("set a = 1\n\nend\n"); }, "f.prm:3", "'end' without an open subsection");
    check_error([] { prm("subsection A\nend\nend\n"); }, "f.prm:3", "'end' without an open subsection");
  }
  SUBCASE("missing 'end' names the unclosed subsection and where it opened") {
    check_error([] { prm("# x\nsubsection input data\n  set a = 1\n"); }, "f.prm:2",
                "subsection 'input data' opened on this line is never closed");
    check_error([] { prm("subsection A\n  subsection B\n  end\n  subsection C\n    set x = 1\nend\n"); }, "f.prm:1",
                "subsection 'A' opened");
    check_error([] { prm("subsection A\n\n  subsection B C\n    set x = 1\n  end\n  subsection D\n"); }, "f.prm:6",
                "subsection 'A/D' opened");
  }
  SUBCASE("a line that is neither") {
    check_error([] { prm("subsection A\n  sigma = 3\nend\n"); }, "f.prm:2", "cannot read 'sigma = 3'");
    check_error([] { prm("setx = 3\n"); }, "f.prm:1", "cannot read");
    check_error([] { prm("subsection\n"); }, "f.prm:1", "'subsection' without a name");
    check_error([] { prm("subsection A\nend A\n"); }, "f.prm:2", "unexpected text after 'end'");
  }
  SUBCASE("set without '=' or without a key") {
    check_error([] { prm("\n\nset sigma 3\n"); }, "f.prm:3", "'set' without '='");
    check_error([] { prm("set\n"); }, "f.prm:1", "'set' without '='");
    check_error([] { prm("subsection A\n  set = 3\nend\n"); }, "f.prm:2", "'set' without a key");
    check_error([] { prm("set   # = 3\n"); }, "f.prm:1", "'set' without '='");  // '=' inside the comment
  }
  SUBCASE("duplicate key in the same section") {
    check_error([] { prm("subsection A\n  set x = 1\n  set x = 2\nend\n"); }, "f.prm:3",
                "duplicate parameter 'A/x' (already set on line 2)");
    check_error([] { prm("subsection A\n  set x = 1\nend\nsubsection A\n  set x = 2\nend\n"); }, "f.prm:5",
                "duplicate parameter 'A/x'");
    CHECK(prm("subsection A\n  set x = 1\nend\nsubsection B\n  set x = 2\nend\nset x = 3\n").size() == 3);
  }
  SUBCASE("'/' in names, continuation at the end of the file") {
    check_error([] { prm("set a/b = 1\n"); }, "f.prm:1", "contains '/'");
    check_error([] { prm("subsection a/b\nend\n"); }, "f.prm:1", "contains '/'");
    check_error([] { prm("set a = 1\nset b = 2 \\\n"); }, "f.prm:2", "ends inside a line continued");
  }
}

TEST_CASE("JSON: values rendered as text, arrays as lists, comments") {
  const ParamTree t = json(
      "// a comment\n"
      "{\n"
      "  \"top\": 3,\n"
      "  \"Outer Name\": {\n"
      "    \"flag\": true, \"off\": false,\n"
      "    /* block */ \"big\": 12345678901234567890,\n"
      "    \"neg\": -42,\n"
      "    \"precise\": 0.1000000000000000055511151231257827,\n"
      "    \"small\": 1e-3,\n"
      "    \"text\": \"a b = c\",\n"
      "    \"list\": [1, 2.5, \"x\", true],\n"
      "    \"Inner\": {\"deep\": \"d\"},\n"
      "    \"empty obj\": {}\n"
      "  }\n"
      "}\n");
  CHECK(t.size() == 10);
  CHECK(value(t, "top") == "3");
  CHECK(value(t, "Outer Name/flag") == "true");
  CHECK(value(t, "Outer Name/off") == "false");
  CHECK(value(t, "Outer Name/big") == "12345678901234567890");
  CHECK(value(t, "Outer Name/neg") == "-42");
  CHECK(value(t, "Outer Name/precise") == "0.1000000000000000055511151231257827");
  CHECK(value(t, "Outer Name/small") == "1e-3");
  CHECK(value(t, "Outer Name/text") == "a b = c");
  CHECK(value(t, "Outer Name/list") == "1, 2.5, x, true");
  CHECK(value(t, "Outer Name/Inner/deep") == "d");
  CHECK(t.at("top").source.describe() == "f.json:3");
  CHECK(t.at("Outer Name/off").source.line == 5);
  CHECK(t.at("Outer Name/big").source.line == 6);
  CHECK(t.at("Outer Name/Inner/deep").source.line == 12);
}

TEST_CASE("JSON: malformed files name the file and line") {
  check_error([] { json("{\n  \"a\": 1,\n  \"b\" 2\n}\n"); }, "f.json:3", "invalid JSON");
  check_error([] { json("{\n  \"a\": 1,\n}\n"); }, "f.json:3", "invalid JSON");
  check_error([] { json("{\n  \"a\": tru\n}\n"); }, "f.json:2", "invalid JSON");
  check_error([] { json(""); }, "f.json:1", "invalid JSON");
  check_error([] { json("{\n  \"s\": {\n    \"a\": 1,\n    \"a\": 2\n  }\n}\n"); }, "f.json:4",
              "duplicate key 'a' (already set on line 3)");
  check_error([] { json("[1, 2]"); }, "f.json:1", "top level must be an object");
  check_error([] { json("3"); }, "f.json:1", "top level must be an object");
  check_error([] { json("{\n\"a\": [[1]]}"); }, "f.json:2", "an array may hold only");
  check_error([] { json("{\n\"a\": [{\"b\": 1}]}"); }, "f.json:2", "an array may hold only");
  check_error([] { json("{\n\"a\": [\"x,y\"]}"); }, "f.json:2", "may not contain ','");
  check_error([] { json("{\n\n\"a\": null}"); }, "f.json:3", "'a' is null");
  check_error([] { json("{\"a/b\": 1}"); }, "f.json:1", "contains '/'");
}

TEST_CASE("load_param_file: format by extension or content; missing files") {
  test::TempDir dir;
  test::write_file(dir / "p.json", "{\"seed\": 9}");
  test::write_file(dir / "json_no_ext.txt", "\n  {\"seed\": 10}");
  test::write_file(dir / "p.prm", "set seed = 11\n");
  const Schema s = test_schema();
  CHECK(s.resolve(load_param_file((dir / "p.json").string())).get_int("seed") == 9);
  CHECK(s.resolve(load_param_file((dir / "json_no_ext.txt").string())).get_int("seed") == 10);
  CHECK(s.resolve(load_param_file((dir / "p.prm").string())).get_int("seed") == 11);
  const std::string missing = (dir / "missing.prm").string();
  check_error([&] { load_param_file(missing); }, missing, "not found");
  check_error([&] { load_param_file(dir.path().string()); }, dir.path().string(), "is a directory");
  // Errors inside a loaded file name that file.
  test::write_file(dir / "bad.prm", "set seed = 1\nsubsection X\n");
  check_error([&] { load_param_file((dir / "bad.prm").string()); }, (dir / "bad.prm").string() + ":2", "never closed");
}

TEST_CASE("unknown parameters: file:line and the closest valid key") {
  const Schema s = smre_schema();
  SUBCASE("a typo in the key") {
    const UsageError e = expect_error<UsageError>([&] { s.resolve(prm("subsection input data\n  set sgma = 3\nend\n")); });
    CHECK(e.message() == "f.prm:2: unknown parameter 'input data/sgma' (did you mean 'input data/sigma'?)");
  }
  SUBCASE("a key in the wrong subsection, a misspelt subsection, wrong case") {
    check_error([&] { s.resolve(prm("subsection output\n  set sigma = 3\nend\n")); }, "f.prm:2",
                "did you mean 'input data/sigma'?");
    check_error([&] { s.resolve(prm("subsection outptu\n  set control = true\nend\n")); }, "f.prm:2",
                "did you mean 'output/control'?");
    check_error([&] { s.resolve(prm("subsection program flow control\n  set mrdepth = 3\nend\n")); }, "f.prm:2",
                "did you mean 'program flow control/MRdepth'? names are case-sensitive");
    check_error([&] { s.resolve(json("{\"program flow control\": {\n \"maximum iteration\": 3}}")); }, "f.json:2",
                "did you mean 'program flow control/maximum iterations'?");
  }
  SUBCASE("nothing close: no suggestion; a subsection used as a key") {
    const UsageError e = expect_error<UsageError>([&] { s.resolve(prm("\nset qqqqqqqq = 3\n")); });
    CHECK(e.where() == "f.prm:2");
    CHECK(std::string(e.what()).find("did you mean") == std::string::npos);
    check_error([&] { s.resolve(json("{\"output\": 3}")); }, "f.json:1", "'output' is a subsection, not a parameter");
  }
  SUBCASE("the first problem in file order is reported") {
    check_error([&] { s.resolve(prm("subsection output\n  set zzz = 1\nend\nset aaa = 2\n")); }, "f.prm:2", "zzz");
  }
  CHECK(s.closest("input data/sgma") == "input data/sigma");
  CHECK(s.closest("tolerence") == "program flow control/tolerance");
  CHECK(s.closest("input data/rho3") == "input data/rho1");
  CHECK(s.closest("completely unrelated") == "");
}

TEST_CASE("type and range errors") {
  const Schema s = smre_schema();
  auto in_section = [&](const std::string& key, const std::string& v) {
    s.resolve(prm("subsection input data\n  set " + key + " = " + v + "\nend\n"));
  };
  {
    const UsageError e = expect_error<UsageError>([&] { in_section("sigma", "abc"); });
    CHECK(e.message() ==
          "f.prm:2: 'abc' is not a valid real for 'input data/sigma' (expected a finite number in (0, inf))");
  }
  check_error([&] { in_section("sigma", "0"); }, "f.prm:2", "in (0, inf)");  // exclusive bound
  check_error([&] { in_section("sigma", "-1"); }, "f.prm:2", "not a valid real");
  check_error([&] { in_section("sigma", "inf"); }, "f.prm:2", "not a valid real");
  check_error([&] { in_section("sigma", "nan"); }, "f.prm:2", "not a valid real");
  check_error([&] { in_section("sigma", "1e999"); }, "f.prm:2", "not a valid real");
  check_error([&] { in_section("sigma", "3 px"); }, "f.prm:2", "not a valid real");
  check_error([&] { in_section("sigma", "+-3"); }, "f.prm:2", "not a valid real");
  check_error([&] { in_section("gaussian noise", "-0.5"); }, "f.prm:2", "expected a finite number in [0, inf)");
  CHECK(s.resolve(prm("subsection input data\nset gaussian noise = 0\nset sigma = +2.5e0\nend\n"))
            .get_real("input data/sigma") == 2.5);
  CHECK(s.resolve(prm("subsection input data\nset sigma = .5\nend\n")).get_real("input data/sigma") == 0.5);

  auto flow = [&](const std::string& key, const std::string& v) {
    return s.resolve(prm("subsection program flow control\n  set " + key + " = " + v + "\nend\n"));
  };
  check_error([&] { flow("MRdepth", "15.5"); }, "f.prm:2",
              "'15.5' is not a valid integer for 'program flow control/MRdepth' (expected an integer in [1, inf))");
  check_error([&] { flow("MRdepth", "1e3"); }, "f.prm:2", "not a valid integer");
  check_error([&] { flow("MRdepth", "0"); }, "f.prm:2", "in [1, inf)");
  check_error([&] { flow("MRdepth", "99999999999999999999"); }, "f.prm:2", "not a valid integer");
  CHECK(flow("MRdepth", "+7").get_int("program flow control/MRdepth") == 7);
  check_error([&] { flow("approx", "maybe"); }, "f.prm:2",
              "'maybe' is not a valid boolean for 'program flow control/approx' (expected true/false, yes/no, on/off "
              "or 1/0)");
  for (const auto* yes : {"true", "TRUE", "Yes", "on", "1"})
    CHECK(flow("approx", yes).get_bool("program flow control/approx"));
  for (const auto* no : {"false", "False", "NO", "Off", "0"})
    CHECK(!flow("approx", no).get_bool("program flow control/approx"));

  const Schema t = test_schema();
  CHECK(t.resolve(prm("subsection Fit\nset min step = 0\nend\n")).get_real("Fit/min step") == 0.0);  // inclusive
  CHECK(t.resolve(prm("subsection Fit\nset min step = 1\nend\n")).get_real("Fit/min step") == 1.0);
  check_error([&] { t.resolve(prm("subsection Fit\nset min step = 1.0000001\nend\n")); }, "f.prm:2", "in [0, 1]");
  check_error([&] { t.resolve(prm("subsection Other\nset count = -11\nend\n")); }, "f.prm:2", "in [-10, 10]");
  check_error([&] { t.resolve(prm("subsection Fit\nset model = gauss\nend\n")); }, "f.prm:2",
              "'gauss' is not a valid choice for 'Fit/model' (expected one of: sampled, integrated)");
  CHECK(t.resolve(prm("subsection Fit\nset model = Integrated\nend\n")).get_string("Fit/model") == "integrated");
  // Strings must survive a .prm round trip: no '#', no surrounding spaces.
  check_error([&] { t.resolve(json("{\"label\": \"a#b\"}")); }, "f.json:1", "not a valid string for 'label'");
  check_error([&] { t.resolve(json("{\"label\": \" padded\"}")); }, "f.json:1", "not a valid string");
  check_error([&] { t.resolve(json("{\"label\": \"two\\nlines\"}")); }, "f.json:1", "not a valid string");
  // JSON values go through the same validators.
  CHECK(t.resolve(json("{\"Fit\": {\"Deep nest\": {\"enabled\": false}}}")).get_bool("Fit/Deep nest/enabled") == false);
  check_error([&] { t.resolve(json("{\n\"seed\": 1.5}")); }, "f.json:2", "not a valid integer for 'seed'");
  check_error([&] { t.resolve(json("{\n\"seed\": \"x\"}")); }, "f.json:2", "not a valid integer");
}

TEST_CASE("precedence: default < file < set() from the command line") {
  const Schema s = smre_schema();
  Params p = s.defaults();
  CHECK(p.get_real("input data/sigma") == 3.0);
  CHECK(p.source("input data/sigma").describe() == "default");

  p = s.resolve(prm("subsection input data\n  set sigma = 4\nend\n"));
  CHECK(p.get_real("input data/sigma") == 4.0);
  CHECK(p.source("input data/sigma").describe() == "f.prm:2");
  CHECK(p.get_real("input data/rho1") == 6.192);  // not in the file: default

  p.set("input data/sigma", "5", ParamSource{"command line --sigma", 0});
  CHECK(p.get_real("input data/sigma") == 5.0);
  CHECK(p.source("input data/sigma").describe() == "command line --sigma");

  // Overrides are validated like file values and leave the old value on failure.
  check_error(
      [&] {
        p.set("input data/sigma", "-1", ParamSource{"command line --sigma", 0});
      },
      "command line --sigma", "'-1' is not a valid real for 'input data/sigma'");
  check_error(
      [&] {
        p.set("input data/sgma", "1", ParamSource{"command line --sgma", 0});
      },
      "command line --sgma", "did you mean 'input data/sigma'?");
  CHECK(p.get_real("input data/sigma") == 5.0);
}

TEST_CASE("typed getters and schema declarations are checked") {
  const Params p = test_schema().defaults();
  CHECK(p.get_int("seed") == 7);
  CHECK(p.get_real("seed") == 7.0);  // integers read as reals
  CHECK(p.get_string("label") == "a name with spaces");
  CHECK(p.get_real("Fit/Deep nest/width") == 1.5);
  CHECK_THROWS_AS(p.get_int("Fit/min step"), std::logic_error);
  CHECK_THROWS_AS(p.get_bool("seed"), std::logic_error);
  CHECK_THROWS_AS(p.get_real("no such"), std::logic_error);

  Schema s("bad");
  s.real("A/x", 1, 0, 2, "x");
  CHECK_THROWS_AS(s.real("A/x", 1, 0, 2, "again"), std::logic_error);
  CHECK_THROWS_AS(s.real("A/y", 3, 0, 2, "default out of range"), std::logic_error);
  CHECK_THROWS_AS(s.real("A/x/z", 1, {}, {}, "x is a key, not a subsection"), std::logic_error);
  CHECK_THROWS_AS(s.real("A", 1, {}, {}, "A is a subsection"), std::logic_error);
  CHECK_THROWS_AS(s.choice("A/c", "d", {"a", "b"}, "default not a choice"), std::logic_error);
  CHECK_THROWS_AS(s.string("A/s", "x", "two\nlines"), std::logic_error);
  CHECK_THROWS_AS(s.boolean("A//b", true, "empty component"), std::logic_error);
  CHECK_THROWS_AS(s.boolean("A/b = c", true, "'=' cannot be written in a .prm key"), std::logic_error);

  const nlohmann::json j = test_schema().defaults().to_json();
  CHECK(j["seed"] == 7);
  CHECK(j["Fit"]["min step"] == 1e-4);
  CHECK(j["Fit"]["Deep nest"]["enabled"] == true);
  CHECK(j["Fit"]["model"] == "sampled");
}

TEST_CASE("Schema::print: documented listings that parse back to the defaults (prm and json)") {
  for (const Schema& schema : {smre_schema(), test_schema()}) {
    for (const std::string format : {"prm", "json"}) {
      CAPTURE(schema.tool());
      CAPTURE(format);
      std::ostringstream out;
      schema.print(out, format);
      const std::string text = out.str();
      const Params back = reparse(schema, text, format);
      check_same_values(back, schema.defaults());
      // Every parameter is set by the listing, right after its documenting comment.
      const ParamTree tree = format == "prm" ? parse_prm(text, "p") : parse_json(text, "p");
      CHECK(tree.size() == schema.specs().size());
      std::istringstream lines(text);
      std::vector<std::string> all;
      for (std::string line; std::getline(lines, line);) all.push_back(line);
      for (const auto& spec : schema.specs()) {
        const int line = tree.at(spec.path).source.line;
        REQUIRE(line >= 2);
        const std::string& comment = all[static_cast<std::size_t>(line - 2)];
        CAPTURE(comment);
        CHECK(comment.find(format == "prm" ? "# " + spec.doc : "// " + spec.doc) != std::string::npos);
        CHECK(comment.find(describe_type(spec)) != std::string::npos);
        CHECK(comment.find("default: ") != std::string::npos);
      }
    }
  }
  std::ostringstream prm_out;
  smre_schema().print(prm_out, "prm");
  CHECK(prm_out.str().find("subsection program flow control\n") != std::string::npos);
  CHECK(prm_out.str().find("# largest patch edge length in pixels if not using small dykstra in approximation "
                           "[integer in [1, inf); default: 15]\n") != std::string::npos);
  std::ostringstream nested;
  test_schema().print(nested, "prm");
  CHECK(nested.str().find("  subsection Deep nest\n    # a nested switch") != std::string::npos);
  std::ostringstream bad;
  CHECK_THROWS_AS(test_schema().print(bad, "yaml"), std::invalid_argument);
}

TEST_CASE("Params::print: the values in effect, with their sources, parse back (prm and json)") {
  const Schema schema = test_schema();
  Params p =
      schema.resolve(prm("set seed = 42\nset label = other label\n"
                         "subsection Fit\n  set min step = 1e-3\n  set model = INTEGRATED\n"
                         "  subsection Deep nest\n    set enabled = off\n    set empty = x.tif\n  end\nend\n"));
  p.set("Other/count", "+9", ParamSource{"command line --count", 0});
  for (const std::string format : {"prm", "json"}) {
    CAPTURE(format);
    std::ostringstream out;
    p.print(out, format);
    const Params back = reparse(schema, out.str(), format);
    check_same_values(back, p);
    CHECK(back.get_int("seed") == 42);
    CHECK(back.get_string("Fit/model") == "integrated");
    CHECK(back.get_int("Other/count") == 9);
    CHECK(out.str().find("from f.prm:1]") != std::string::npos);
    CHECK(out.str().find("from command line --count]") != std::string::npos);
  }
  std::ostringstream out;
  p.print(out, "prm");
  CHECK(out.str().find("set min step = 1e-3\n") != std::string::npos);  // reals as written
}

TEST_CASE("every file in params/ parses; the smre ones resolve with the smre schema") {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source_dir + "/params")) {
    const auto ext = entry.path().extension();
    if (ext != ".prm" && ext != ".json") continue;
    CAPTURE(entry.path().string());
    ++files;
    const ParamTree tree = load_param_file(entry.path().string());
    CHECK(!tree.empty());
    const std::string stem = entry.path().stem().string();
    if (stem.find("smre") != std::string::npos) CHECK_NOTHROW(smre_schema().resolve(tree));
    if (stem == "sofi" || stem == "sofi-esrrf") CHECK_NOTHROW(sofi_schema().resolve(tree));
    if (stem == "frc") CHECK_NOTHROW(frc_schema().resolve(tree));
  }
  CHECK(files >= 2);
}

TEST_CASE("hostile parameter files: deep nesting refused at once, huge values quoted by their head") {
  const Schema s = smre_schema();
  SUBCASE("JSON objects 100,000 deep: a UsageError naming the file, in milliseconds, on a short line") {
    std::string deep;
    for (int i = 0; i < 100000; ++i) deep += "{\"a\":";
    deep += "1";
    deep += std::string(100000, '}');
    const auto start = std::chrono::steady_clock::now();
    const UsageError e = expect_error<UsageError>([&] { json(deep); });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < 2.0);  // 48 s before the depth bound
    CHECK(e.where() == "f.json:1");
    CHECK(contains(e.what(), "nested deeper than 32 levels"));
    CHECK(e.message().size() < 300);
    // 32 levels below the top are still read.
    std::string ok;
    for (int i = 0; i < 33; ++i) ok += "{\"a\":";
    ok += "1" + std::string(33, '}');
    CHECK(json(ok).size() == 1);
  }
  SUBCASE(".prm subsections 1,000 deep") {
    std::string deep;
    for (int i = 0; i < 1000; ++i) deep += "subsection a\n";
    check_error([&] { prm(deep); }, "f.prm:33", "nested deeper than 32 levels");
  }
  SUBCASE("a 30 MB value, key or line is quoted by its first 200 characters and an ellipsis") {
    const std::string huge(30'000'000, '7');
    const UsageError value = expect_error<UsageError>([&] {
      s.resolve(prm("subsection input data\n  set sigma = x" + huge + "\nend\n"));
    });
    CHECK(value.message().size() < 400);
    CHECK(contains(value.what(), "'x" + std::string(199, '7') + "\u2026'"));
    CHECK(contains(value.what(), "is not a valid real for 'input data/sigma'"));
    const UsageError key = expect_error<UsageError>([&] { s.resolve(prm("set k" + huge + " = 1\n")); });
    CHECK(key.message().size() < 400);
    CHECK(contains(key.what(), "unknown parameter 'k777"));
    const UsageError line = expect_error<UsageError>([&] { prm("nonsense" + huge + "\n"); });
    CHECK(line.message().size() < 400);
    const UsageError item = expect_error<UsageError>([&] { json("{\"a\": [\"1," + huge + "\"]}"); });
    CHECK(item.message().size() < 400);
    const UsageError duplicate =
        expect_error<UsageError>([&] { json("{\"k" + huge + "\": 1, \"k" + huge + "\": 2}"); });
    CHECK(duplicate.message().size() < 400);
  }
}
