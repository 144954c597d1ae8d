#ifndef GGUF_FORMAT_HPARAMS_HPP
#define GGUF_FORMAT_HPARAMS_HPP

// Moved to gguf/llama/hparams.hpp (llama.cpp's model conventions); kept so existing includes compile.
#include "gguf/llama/hparams.hpp"

#endif  // GGUF_FORMAT_HPARAMS_HPP
