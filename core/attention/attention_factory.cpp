#include "core/attention/attention_factory.h"

#include <array>
#include <stdexcept>
#include <string>

#include "core/attention/flash_attention.h"
#include "core/attention/naive_attention.h"

namespace inferscope {
namespace {

constexpr std::array<std::string_view, 2> kNames{"naive", "flash"};

}  // namespace

std::span<const std::string_view> attention_names() { return kNames; }

std::unique_ptr<Attention> make_attention(std::string_view name) {
  if (name == "naive") return std::make_unique<NaiveAttention>();
  if (name == "flash") return std::make_unique<FlashAttention>();
  throw std::invalid_argument("unknown attention '" + std::string(name) + "' (choose naive or flash)");
}

}  // namespace inferscope
