// libFuzzer target for the data files of dry runs (core/common/data_file.h): the input as a file's
// text, read as a device profile (resources/devices) and as a model shape (resources/model-shapes),
// each read or refused with std::runtime_error naming the field and value.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/common/data_file.h"
#include "core/servesim/device_profile.h"
#include "core/servesim/model_shape.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json j;
  try {
    j = inferscope::parse_json_object(inferscope::fuzz::text_of(data, size), "fuzz.json");
  } catch (const std::runtime_error&) {
    return 0;
  }
  try {
    (void)inferscope::device_profile_from_json(j, "fuzz.json");
  } catch (const std::runtime_error&) {
  }
  try {
    (void)inferscope::model_shape_from_json(j, "fuzz.json");
  } catch (const std::runtime_error&) {
  }
  return 0;
}
