#ifndef GGUF_QUANTIZE_PLAN_HPP
#define GGUF_QUANTIZE_PLAN_HPP

// Moved to gguf/llama/quantize_plan.hpp (llama.cpp's model conventions); kept so existing includes compile.
#include "gguf/llama/quantize_plan.hpp"

#endif  // GGUF_QUANTIZE_PLAN_HPP
