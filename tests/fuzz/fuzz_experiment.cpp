// libFuzzer target for the Learn tab's experiment files (core/learn/experiment.h): the input as a
// file's text is read or refused with std::runtime_error naming the field and value. Run from the
// repository root, its workload and text paths reach the files under resources/.
#include <cstdint>
#include <stdexcept>

#include "core/learn/experiment.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)inferscope::Experiment::parse_text(inferscope::fuzz::text_of(data, size), "fuzz.json", "");
  } catch (const std::runtime_error&) {
  }
  return 0;
}
