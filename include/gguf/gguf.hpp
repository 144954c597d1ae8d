#ifndef GGUF_GGUF_HPP
#define GGUF_GGUF_HPP

/**
 * @file
 * Umbrella header: everything a user of the library needs (the kernels come in through
 * gguf/dequantize.hpp).
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
#include "gguf/tokenizer.hpp"

#endif  // GGUF_GGUF_HPP
