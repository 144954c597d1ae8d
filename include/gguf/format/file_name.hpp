#ifndef GGUF_FORMAT_FILE_NAME_HPP
#define GGUF_FORMAT_FILE_NAME_HPP

// Moved to gguf/llama/file_name.hpp (llama.cpp's model conventions); kept so existing includes compile.
#include "gguf/llama/file_name.hpp"

#endif  // GGUF_FORMAT_FILE_NAME_HPP
