#include "core/cli/args.h"

#include <cerrno>
#include <cstdlib>
#include <iostream>

namespace inferscope::cli {

Args::Args(const std::vector<OptionSpec>& specs, int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : specs) {
      if (arg == s.name || (!s.alias.empty() && arg == s.alias)) spec = &s;
    }
    if (spec == nullptr) throw UsageError("unknown option '" + arg + "'");
    if (!spec->takes_value) {
      flags_.insert(spec->name);
      continue;
    }
    if (i + 1 >= argc) throw UsageError("option " + spec->name + " needs a value");
    values_[spec->name] = argv[++i];
  }
}

std::string Args::str(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

std::string Args::required(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw UsageError("option " + name + " is required");
  return it->second;
}

int64_t Args::integer(const std::string& name, int64_t fallback, int64_t min_value, int64_t max_value) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || errno == ERANGE) {
    throw UsageError(name + ": '" + it->second + "' is not an integer");
  }
  if (v < min_value || v > max_value) {
    throw UsageError(name + ": " + it->second + " is out of range (" + std::to_string(min_value) + ".." +
                     std::to_string(max_value) + ")");
  }
  return v;
}

double Args::real(const std::string& name, double fallback, double min_value, double max_value) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0' || errno == ERANGE || v != v) {
    throw UsageError(name + ": '" + it->second + "' is not a number");
  }
  if (v < min_value || v > max_value) {
    throw UsageError(name + ": " + it->second + " is out of range (" + std::to_string(min_value) + ".." +
                     std::to_string(max_value) + ")");
  }
  return v;
}

std::string Args::choice(const std::string& name, const std::string& fallback,
                         const std::vector<std::string>& choices) const {
  const std::string v = str(name, fallback);
  for (const std::string& c : choices) {
    if (v == c) return v;
  }
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : "|") + c;
  throw UsageError(name + ": '" + v + "' is not one of " + list);
}

std::vector<std::string> option_names(const std::vector<OptionSpec>& specs) {
  std::vector<std::string> names;
  for (const OptionSpec& s : specs) names.push_back(s.name);
  return names;
}

std::string describe_options(const std::vector<OptionSpec>& specs) {
  std::string out;
  for (const OptionSpec& s : specs) {
    std::string left = "  " + s.name + (s.alias.empty() ? "" : ", " + s.alias) + (s.takes_value ? " VALUE" : "");
    if (left.size() < 28) left.resize(28, ' ');
    out += left + " " + s.help + "\n";
  }
  return out;
}

}  // namespace inferscope::cli

namespace inferscope::cli {

bool print_help_if_asked(const std::string& usage, const std::vector<OptionSpec>& specs, int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << "usage: inferscope-cli " << usage << "\n\noptions:\n" << describe_options(specs);
      return true;
    }
  }
  return false;
}

}  // namespace inferscope::cli
