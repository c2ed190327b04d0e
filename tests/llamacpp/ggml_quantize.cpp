// ggml's quantizers over raw floats, to compare ours with (test_llamacpp_kquant):
//   ggml-quantize TYPE N_PER_ROW IN OUT
// TYPE is a ggml_type id; IN holds whole rows of N_PER_ROW f32 values; OUT gets the blocks of
// ggml_quantize_chunk without an importance matrix (what llama-quantize runs without --imatrix).
// Exit 1 with the reason on stderr.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "ggml.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: ggml-quantize TYPE N_PER_ROW IN OUT\n");
    return 1;
  }
  const auto type = static_cast<ggml_type>(std::atoi(argv[1]));
  const int64_t n_per_row = std::atoll(argv[2]);
  std::ifstream in(argv[3], std::ios::binary | std::ios::ate);
  const auto size = static_cast<size_t>(std::max<std::streamoff>(0, in.tellg()));
  std::vector<float> src(size / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(src.data()), static_cast<std::streamsize>(size));
  const auto n = static_cast<int64_t>(src.size());
  if (!in || size % sizeof(float) != 0 || n_per_row <= 0 || n % n_per_row != 0 ||
      n_per_row % ggml_blck_size(type) != 0) {
    std::fprintf(stderr, "ggml-quantize: %s does not hold whole rows of %s values for type %s\n", argv[3], argv[2],
                 ggml_type_name(type));
    return 1;
  }
  const int64_t rows = n / n_per_row;
  std::vector<char> dst(ggml_row_size(type, n_per_row) * static_cast<size_t>(rows));
  const size_t written = ggml_quantize_chunk(type, src.data(), dst.data(), 0, rows, n_per_row, nullptr);
  std::ofstream out(argv[4], std::ios::binary);
  out.write(dst.data(), static_cast<std::streamsize>(written));
  if (written != dst.size() || !out) {
    std::fprintf(stderr, "ggml-quantize: could not write %s\n", argv[4]);
    return 1;
  }
  return 0;
}
