// Command-line options of one subcommand: "--name value", "--flag", and short aliases ("-n").
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace inferscope::cli {

// Bad command-line input: printed to stderr, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OptionSpec {
  std::string name;    // "--top-k"
  std::string alias;   // "-n" or ""
  bool takes_value = true;
  std::string help;
};

class Args {
 public:
  // Parses argv[first..argc) against `specs`; throws UsageError for unknown options or a missing value.
  Args(const std::vector<OptionSpec>& specs, int argc, char** argv, int first);

  bool has(const std::string& name) const { return flags_.count(name) > 0 || values_.count(name) > 0; }
  std::string str(const std::string& name, const std::string& fallback) const;
  std::string required(const std::string& name) const;
  int64_t integer(const std::string& name, int64_t fallback, int64_t min_value, int64_t max_value) const;
  double real(const std::string& name, double fallback, double min_value, double max_value) const;
  // The value must be one of `choices`.
  std::string choice(const std::string& name, const std::string& fallback, const std::vector<std::string>& choices) const;

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;  // options without a value that were given
};

// The names of `specs` ("--top-k", ...).
std::vector<std::string> option_names(const std::vector<OptionSpec>& specs);

// "  --name VALUE   help" lines for a usage message.
std::string describe_options(const std::vector<OptionSpec>& specs);

// When argv holds --help or -h: prints the usage line and options to stdout and returns true.
bool print_help_if_asked(const std::string& usage, const std::vector<OptionSpec>& specs, int argc, char** argv);

}  // namespace inferscope::cli
