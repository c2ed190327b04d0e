// The attention implementations by name: what --attention and the GUI's selector offer.
#pragma once
#include <memory>
#include <span>
#include <string_view>

#include "core/attention/attention.h"

namespace inferscope {

// "naive", "flash".
std::span<const std::string_view> attention_names();

// A new implementation; throws std::invalid_argument (naming the choices) for an unknown name.
std::unique_ptr<Attention> make_attention(std::string_view name);

}  // namespace inferscope
