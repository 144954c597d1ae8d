#ifndef GGUF_FORMAT_FILE_TYPE_HPP
#define GGUF_FORMAT_FILE_TYPE_HPP

// Moved to gguf/llama/file_type.hpp (llama.cpp's model conventions); kept so existing includes compile.
#include "gguf/llama/file_type.hpp"

#endif  // GGUF_FORMAT_FILE_TYPE_HPP
