// Build-time generator of the Unicode tables in unicode.cpp.
// Usage: gen_unicode_table UnicodeData.txt PropList.txt OUT.inc
// Writes kCategoryRanges (maximal runs of code points with one general category; gaps are Cn)
// and kWhitespaceRanges (the White_Space property).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Range {
  uint32_t first, last;
  std::string value;
};

const std::set<std::string> kCategories = {"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl",
                                           "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc",
                                           "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn"};

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "gen_unicode_table: " << what << "\n";
  std::exit(1);
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, sep)) fields.push_back(field);
  return fields;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

uint32_t parse_hex(const std::string& s, const std::string& where) {
  try {
    return static_cast<uint32_t>(std::stoul(s, nullptr, 16));
  } catch (const std::exception&) {
    fail(where + ": bad code point '" + s + "'");
  }
}

// Appends [first, last] with `value`, joining it to the previous range when they touch.
void add_range(std::vector<Range>& ranges, uint32_t first, uint32_t last, const std::string& value) {
  if (!ranges.empty() && ranges.back().last + 1 == first && ranges.back().value == value) {
    ranges.back().last = last;
  } else {
    ranges.push_back({first, last, value});
  }
}

// UnicodeData.txt lists one code point per line, except large blocks given as a
// "<Name, First>" line followed by a "<Name, Last>" line.
std::vector<Range> read_categories(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot open " + path);
  std::vector<Range> ranges;
  std::string line;
  uint32_t pending_first = 0;
  bool in_block = false;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    const auto f = split(line, ';');
    const std::string where = path + ":" + std::to_string(line_no);
    if (f.size() < 3) fail(where + ": too few fields");
    const uint32_t cp = parse_hex(f[0], where);
    const std::string& name = f[1];
    const std::string& cat = f[2];
    if (!kCategories.count(cat)) fail(where + ": unknown category " + cat);
    if (name.size() > 8 && name.compare(name.size() - 8, 8, ", First>") == 0) {
      pending_first = cp;
      in_block = true;
      continue;
    }
    uint32_t first = cp;
    if (name.size() > 7 && name.compare(name.size() - 7, 7, ", Last>") == 0) {
      if (!in_block) fail(where + ": Last without First");
      first = pending_first;
      in_block = false;
    }
    const uint32_t next_free = ranges.empty() ? 0 : ranges.back().last + 1;
    if (first < next_free) fail(where + ": code points out of order");
    if (first > next_free) add_range(ranges, next_free, first - 1, "Cn");  // unassigned gap
    add_range(ranges, first, cp, cat);
  }
  if (ranges.empty()) fail(path + ": no code points");
  if (ranges.back().last < 0x10FFFF) add_range(ranges, ranges.back().last + 1, 0x10FFFF, "Cn");
  return ranges;
}

// PropList.txt lines: "0009..000D    ; White_Space # comment".
std::vector<Range> read_whitespace(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot open " + path);
  std::vector<Range> ranges;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    line = line.substr(0, line.find('#'));
    const auto f = split(line, ';');
    if (f.size() != 2 || trim(f[1]) != "White_Space") continue;
    const std::string where = path + ":" + std::to_string(line_no);
    const std::string cps = trim(f[0]);
    const auto dots = cps.find("..");
    const uint32_t first = parse_hex(cps.substr(0, dots), where);
    const uint32_t last = dots == std::string::npos ? first : parse_hex(cps.substr(dots + 2), where);
    add_range(ranges, first, last, "");
  }
  if (ranges.empty()) fail(path + ": no White_Space entries");
  return ranges;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) fail("usage: gen_unicode_table UnicodeData.txt PropList.txt OUT.inc");
  const auto categories = read_categories(argv[1]);
  const auto whitespace = read_whitespace(argv[2]);
  std::ofstream out(argv[3]);
  if (!out) fail(std::string("cannot write ") + argv[3]);
  out << "// Generated at build time by gen_unicode_table from " << argv[1] << " and " << argv[2]
      << ". Do not edit.\n";
  out << "static constexpr CategoryRange kCategoryRanges[] = {\n";
  char buf[96];
  for (const auto& r : categories) {
    std::snprintf(buf, sizeof buf, "  {0x%05X, 0x%05X, UnicodeCategory::%s},\n", r.first, r.last, r.value.c_str());
    out << buf;
  }
  out << "};\n";
  out << "static constexpr CodePointRange kWhitespaceRanges[] = {\n";
  for (const auto& r : whitespace) {
    std::snprintf(buf, sizeof buf, "  {0x%05X, 0x%05X},\n", r.first, r.last);
    out << buf;
  }
  out << "};\n";
  return out ? 0 : 1;
}
