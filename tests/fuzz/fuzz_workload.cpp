// libFuzzer target for serve-sim's workload files (core/workload/workload.h): the input as a file's text
// is read into requests or refused with a WorkloadError naming the request and field.
#include <cstdint>

#include "core/workload/workload.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)inferscope::parse_workload_text(inferscope::fuzz::text_of(data, size), "fuzz.json");
  } catch (const inferscope::WorkloadError&) {
  }
  return 0;
}
