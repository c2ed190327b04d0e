// libFuzzer target for the GGUF reader: any input must parse or throw GgufError, never crash,
// hang, or read outside the buffer. scripts/fuzz.sh runs it from tests/fuzz/corpus/fuzz_gguf_reader
// (small files GgufWriter wrote: every metadata type, nested arrays, tensors of four types, an alignment).
#include <cstddef>
#include <cstdint>

#include "core/gguf/gguf_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto f = inferscope::GgufFile::open_bytes(data, size, "fuzz.gguf");
    // Touch the first and last byte of every tensor and render every value, so a wrong pointer
    // or a broken value shows up under ASan.
    volatile uint8_t sink = 0;
    for (const auto& t : f->tensors())
      if (t.n_bytes > 0) sink = sink ^ t.data[0] ^ t.data[t.n_bytes - 1];
    for (const auto& kv : f->metadata()) (void)kv.second.to_display_string();
  } catch (const inferscope::GgufError&) {
    // Expected for malformed input.
  }
  return 0;
}
