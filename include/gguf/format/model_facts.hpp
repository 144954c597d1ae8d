#ifndef GGUF_FORMAT_MODEL_FACTS_HPP
#define GGUF_FORMAT_MODEL_FACTS_HPP

// Moved to gguf/llama/model_facts.hpp (llama.cpp's model conventions); kept so existing includes compile.
#include "gguf/llama/model_facts.hpp"

#endif  // GGUF_FORMAT_MODEL_FACTS_HPP
