#ifndef GGUF_GGUF_HPP
#define GGUF_GGUF_HPP

/**
 * @file
 * Umbrella header: reading, writing, editing, splitting, dequantizing and quantizing files and
 * models, and what llama.cpp reads from them (the kernels come in through gguf/dequantize.hpp).
 * Two jobs keep headers of their own, so that a program that does not do them does not compile them:
 * text to token ids, <gguf/tokenizer.hpp> (it would cost the umbrella a third more), and reading
 * over HTTP, <gguf/net/http.hpp> (it needs libcurl).
 */
#include "gguf/version.hpp"
#include "gguf/result.hpp"
#include "gguf/format/byte_reader.hpp"
#include "gguf/format/ggml_types.hpp"
#include "gguf/format/half.hpp"
#include "gguf/format/value.hpp"
#include "gguf/format/metadata.hpp"
#include "gguf/format/tensor_info.hpp"
#include "gguf/format/file.hpp"
#include "gguf/format/parser.hpp"
#include "gguf/format/byte_order.hpp"
#include "gguf/format/owned_value.hpp"
#include "gguf/format/sink.hpp"
#include "gguf/format/writer.hpp"
#include "gguf/format/shards.hpp"
#include "gguf/llama/chat_template_keys.hpp"
#include "gguf/llama/hparams.hpp"
#include "gguf/llama/file_type.hpp"
#include "gguf/llama/file_name.hpp"
#include "gguf/llama/model_facts.hpp"
#include "gguf/format/check_finite.hpp"
#include "gguf/platform/mapped_file.hpp"
#include "gguf/platform/output_file.hpp"
#include "gguf/platform/file_identity.hpp"
#include "gguf/platform/temporary_files.hpp"
#include "gguf/platform/paths.hpp"
#include "gguf/open.hpp"
#include "gguf/model.hpp"
#include "gguf/shard_set.hpp"
#include "gguf/read_header.hpp"
#include "gguf/save.hpp"
#include "gguf/split.hpp"
#include "gguf/split_journal.hpp"
#include "gguf/diagnose.hpp"
#include "gguf/compare.hpp"
#include "gguf/dequantize.hpp"
#include "gguf/quantize.hpp"
#include "gguf/parallel.hpp"
#include "gguf/print.hpp"
#include "gguf/llama/quantize_plan.hpp"
#include "gguf/imatrix.hpp"
#include "gguf/quantize_model.hpp"

#endif  // GGUF_GGUF_HPP
