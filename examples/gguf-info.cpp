// gguf-info [--json] MODEL [--ctx N] [--cache-type T] (MODEL: a file, or any shard of a split model)
//
// What a model is, on one screen: name, architecture, size label, parameters, quantization mix and census,
// context length, vocabulary and tokenizer, chat templates, and the memory llama.cpp needs for it at a
// context length. `--json` prints the same as one JSON object (documented in docs/FACTS.md).
#include <gguf/gguf.hpp>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "remote.hpp"
#include "gguf_json.hpp"

namespace {

constexpr cli::tool tool{
    "gguf-info", "gguf-info [--json] MODEL [--ctx N] [--cache-type T]",
    "Prints what the model MODEL is: its name, architecture, size label, parameter count (as llama.cpp\n"
    "counts it), file type (the quantization mix, e.g. Q4_K_M: general.file_type, or guessed from the\n"
    "tensors' types as llama.cpp guesses it), tensor census per type with bits per weight, training\n"
    "context length, layers and heads, vocabulary size and tokenizer, the chat templates it carries (the\n"
    "default and each tokenizer.chat_template.NAME, with their sizes: gguf-chat renders them), and the\n"
    "memory llama.cpp allocates for it: the weights plus the KV cache (and recurrent states) at a\n"
    "context length. MODEL may be any shard of a split model (or the shards' name prefix), or the\n"
    "http:// or https:// URL of a model or of any of its shards: its headers are read by range requests,\n"
    "not the whole file (a bearer token from HF_TOKEN; GGUF_HTTP_TIMEOUT: how many seconds a server may\n"
    "stay silent, 30).\n"
    "\n"
    "  --json              one JSON object instead (keys: see docs/FACTS.md); always has architecture,\n"
    "                      n_params, size_label, file_type, context_length, n_vocab, memory.weights and\n"
    "                      memory.kv_cache (bytes; null, with memory.error, when it cannot be estimated)\n"
    "  --ctx N             the context length for the memory estimate (default: the model's own)\n"
    "  --cache-type T      the KV cache type for K and V: f16 (default), bf16, f32, q8_0, q4_0, ...\n"
    "  --cache-type-k T    the K cache type alone\n"
    "  --cache-type-v T    the V cache type alone\n"
    "  --swa-full          sliding-window layers cache the whole context (llama.cpp's --swa-full)\n"
    "  --ubatch N          the physical batch size llama.cpp adds to a sliding window (default 512)\n"
    "  --help              this text\n"
    "  --version           the tool's version\n"
    "\n"
    "Exit status: 0 success; 1 a file that cannot be read, is not valid GGUF, or whose standard keys have\n"
    "the wrong types (one line on stderr starting with 'error:'); 2 usage errors.\n"};

std::string mib(std::uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

// 1234567 as "1,234,567" (appending, not inserting: GCC 12 warns falsely on string::insert, -Wrestrict).
std::string grouped(std::uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string s;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return s;
}

template <class T>
void json_opt(std::string& out, const char* key, const std::optional<T>& v) {
  out += ",\"";
  out += key;
  out += "\":";
  if (!v) {
    out += "null";
    return;
  }
  if constexpr (std::is_same_v<T, std::string_view>) {
    gguf_json::append_string(out, *v);
  } else if constexpr (std::is_floating_point_v<T>) {
    gguf_json::append_float(out, *v);
  } else {
    out += std::to_string(*v);
  }
}

void json_num(std::string& out, const char* key, std::uint64_t v) {
  out += ",\"";
  out += key;
  out += "\":" + std::to_string(v);
}

std::optional<gguf::ggml_type> cache_type(const std::string& name) {
  auto t = gguf::type_from_name(name);
  if (!t || *t == gguf::ggml_type::q8_1 || *t == gguf::ggml_type::q8_K) return std::nullopt;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const cli::parse_result cmd = cli::parse(argc, argv, tool,
                                           {{"--json"},
                                            {"--ctx", true},
                                            {"--cache-type", true},
                                            {"--cache-type-k", true},
                                            {"--cache-type-v", true},
                                            {"--swa-full"},
                                            {"--ubatch", true}},
                                           1, 1);
  if (cmd.exit) return *cmd.exit;
  const cli::args& a = cmd.args;
  const std::string& path = a.positional[0];

  gguf::memory_options opt;
  opt.swa_full = a.has("--swa-full");
  for (const char* o : {"--ctx", "--ubatch"}) {
    if (!a.has(o)) continue;
    const std::string v = a.value(o);
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || v[0] == '-' || n == 0 || n > (1ull << 31)) {
      return cli::usage_error(tool, std::string(o) + " wants a number from 1 to 2^31, not '" + v + "'");
    }
    (std::string_view(o) == "--ctx" ? opt.context : opt.ubatch) = static_cast<std::uint32_t>(n);
  }
  for (const char* o : {"--cache-type", "--cache-type-k", "--cache-type-v"}) {
    if (!a.has(o)) continue;
    const auto t = cache_type(a.value(o));
    if (!t) return cli::usage_error(tool, "unknown cache type '" + a.value(o) + "' (f16, bf16, f32, q8_0, q4_0, ...)");
    if (std::string_view(o) != "--cache-type-v") opt.cache_type_k = *t;
    if (std::string_view(o) != "--cache-type-k") opt.cache_type_v = *t;
  }

  // A local model is mapped; a URL's is read as headers (its tensors' data is not needed here).
  std::optional<gguf::model> local;
#if GGUF_TOOLS_HTTP
  std::optional<gguf::model_header> remote_model;
  if (remote::is_url(path)) {
    remote_model = remote::open_model(path);
    if (!remote_model) return 1;
  } else
#else
  if (remote::is_url(path)) return remote::unsupported(path);
#endif
  {
    local = cli::open_model(path);
    if (!local) return 1;
  }
#if GGUF_TOOLS_HTTP
  const gguf::metadata_table& md = local ? local->metadata() : remote_model->metadata();
  const std::span<const gguf::tensor_info> tensors = local ? local->tensors() : remote_model->tensors();
  const std::size_t n_shards = local ? local->n_shards() : remote_model->n_shards();
#else
  const gguf::metadata_table& md = local->metadata();
  const std::span<const gguf::tensor_info> tensors = local->tensors();
  const std::size_t n_shards = local->n_shards();
#endif
  const auto f = gguf::facts(md, tensors);
  if (!f) return cli::fail("%s: %s", path.c_str(), gguf::to_string(f.error()).c_str());
  const gguf::hparams& h = f->hp;
  const auto mem = gguf::estimate_memory(h, tensors, opt);
  const gguf::size_notation label = f->label(), computed = gguf::size_label(f->params);
  const std::string_view ftype = f->file_type.ftype ? f->file_type.ftype->name : std::string_view("unknown");
  const std::uint32_t n_layer = h.block_count.value_or(0);
  const std::uint64_t context = opt.context ? opt.context : h.context_length.value_or(0);
  const std::vector<gguf::chat_template_entry> templates = gguf::chat_template_entries(md);

  if (a.has("--json")) {
    std::string out = "{\"file\":";
    gguf_json::append_string(out, path);
    json_num(out, "shards", n_shards);
    out += ",\"architecture\":";
    gguf_json::append_string(out, h.architecture);
    json_opt(out, "name", h.name);
    json_num(out, "n_params", f->params.total);
    json_num(out, "n_params_shared", f->params.shared);
    json_num(out, "n_params_experts", f->params.experts);
    json_num(out, "expert_count", f->params.expert_count);
    json_opt(out, "expert_used_count", h.expert_used_count);
    out += ",\"size_label\":";
    gguf_json::append_string(out, label.view());
    out += ",\"size_label_computed\":";
    gguf_json::append_string(out, computed.view());
    out += ",\"file_type\":";
    gguf_json::append_string(out, ftype);
    out += ",\"file_type_id\":";
    out += f->file_type.ftype ? std::to_string(f->file_type.ftype->id) : "null";
    out += ",\"file_type_source\":";
    out += f->file_type.declared ? "\"general.file_type\"" : "\"guessed\"";
    json_opt(out, "context_length", h.context_length);
    json_opt(out, "n_vocab", h.n_vocab());
    json_opt(out, "tokenizer", h.tokenizer_model);
    json_opt(out, "tokenizer_pre", h.tokenizer_pre);
    out += std::string(",\"chat_template\":") + (h.has_chat_template ? "true" : "false");
    out += ",\"chat_templates\":[";
    for (std::size_t i = 0; i < templates.size(); ++i) {
      out += i ? ",{\"name\":" : "{\"name\":";
      gguf_json::append_string(out, templates[i].name);
      const auto text = templates[i].entry->value.get<std::string_view>();
      out += ",\"bytes\":" + (text ? std::to_string(text->size()) : std::string("null")) + "}";
    }
    out += "]";
    json_opt(out, "n_layer", h.block_count);
    json_opt(out, "n_embd", h.embedding_length);
    out += ",\"n_head\":";
    out += h.head_count ? std::to_string(h.head_count->max(n_layer)) : "null";
    out += ",\"n_head_kv\":";
    out += h.head_count || h.head_count_kv
               ? std::to_string(h.head_count_kv ? h.head_count_kv->max(n_layer) : h.head_count->max(n_layer))
               : "null";
    json_opt(out, "expert_count_declared", h.expert_count);
    json_opt(out, "sliding_window", h.sliding_window);
    json_opt(out, "rope_freq_base", h.rope_freq_base);
    out += ",\"bits_per_weight\":";
    gguf_json::append_float(out, f->census.total.bits_per_weight());
    out += ",\"census\":[";
    bool first = true;
    for (const gguf::type_traits& t : gguf::ggml_types) {
      const gguf::type_count& c = f->census[t.type];
      if (!c.tensors) continue;
      out += first ? "{\"type\":" : ",{\"type\":";
      first = false;
      gguf_json::append_string(out, t.name);
      out += ",\"tensors\":" + std::to_string(c.tensors) + ",\"elements\":" + std::to_string(c.elements) +
             ",\"bytes\":" + std::to_string(c.bytes) + ",\"bits_per_weight\":";
      gguf_json::append_float(out, c.bits_per_weight());
      out += "}";
    }
    out += R"(],"memory":{"context":)" + (context ? std::to_string(context) : std::string("null"));
    out += ",\"cache_type_k\":";
    gguf_json::append_string(out, gguf::to_string(opt.cache_type_k));
    out += ",\"cache_type_v\":";
    gguf_json::append_string(out, gguf::to_string(opt.cache_type_v));
    json_num(out, "weights", f->census.total.bytes);  // every tensor's bytes, as the estimate counts them
    if (mem) {
      json_num(out, "kv_cache", mem->kv_cache());
      json_num(out, "k", mem->k);
      json_num(out, "v", mem->v);
      json_num(out, "recurrent", mem->recurrent);
      json_num(out, "cells", mem->cells);
      json_num(out, "swa_cells", mem->swa_cells);
      json_num(out, "total", mem->total());
    } else {
      out += R"(,"kv_cache":null,"total":null,"error":)";
      gguf_json::append_string(out, gguf::to_string(mem.error()));
    }
    out += "}}\n";
    std::fputs(out.c_str(), stdout);
    return std::fflush(stdout) == 0 ? 0 : cli::fail("cannot write to standard output");
  }

  const auto line = [](const char* key, const std::string& value) { std::printf("%-15s %s\n", key, value.c_str()); };
  const auto opt_str = [](const std::optional<std::string_view>& v) { return v ? std::string(*v) : std::string("-"); };
  line("file:", path + (n_shards > 1 ? " (" + std::to_string(n_shards) + " shards)" : ""));
  line("name:", opt_str(h.name));
  line("architecture:", h.architecture.empty() ? "-" : std::string(h.architecture));
  std::string size =
      f->params.total == 0 ? std::string("- (no weights: a vocabulary or metadata only)") : std::string(label.view());
  if (h.size_label && *h.size_label != computed.view()) size += " (counted: " + std::string(computed.view()) + ")";
  line("size label:", size);
  std::string params = grouped(f->params.total);
  if (f->params.expert_count) {
    params += " (" + grouped(f->params.shared) + " shared, " + std::to_string(f->params.expert_count) + " experts of " +
              grouped(f->params.per_expert);
    if (h.expert_used_count) {
      params += ", " + grouped(f->params.shared + f->params.per_expert * *h.expert_used_count) + " active with " +
                std::to_string(*h.expert_used_count) + " used";
    }
    params += ")";
  }
  line("parameters:", params);
  std::string ft = std::string(ftype);
  if (f->file_type.declared) {
    ft += " (general.file_type " + std::to_string(*h.file_type) + ")";
  } else if (f->file_type.inconsistent) {
    ft += " (guessed: general.file_type " + std::to_string(*h.file_type) + " does not match the tensors)";
  } else {
    ft += " (guessed from the tensors: no general.file_type)";
  }
  char bpw[64];
  std::snprintf(bpw, sizeof bpw, ", %.2f bits per weight", f->census.total.bits_per_weight());
  line("file type:", ft + bpw);
  line("context:", h.context_length ? grouped(*h.context_length) + " tokens (training)" : "-");
  if (h.block_count) {
    std::string shape = std::to_string(n_layer) + " layers";
    if (h.embedding_length) shape += ", embedding " + std::to_string(*h.embedding_length);
    if (h.head_count) {
      shape += ", " + std::to_string(h.head_count->max(n_layer)) + " heads";
      if (h.head_count_kv) shape += " (" + std::to_string(h.head_count_kv->max(n_layer)) + " KV)";
    }
    if (h.expert_count) {
      shape += ", " + std::to_string(*h.expert_count) + " experts";
      if (h.expert_used_count) shape += " (" + std::to_string(*h.expert_used_count) + " used)";
    }
    if (h.sliding_window) shape += ", sliding window " + std::to_string(*h.sliding_window);
    line("layers:", shape);
  }
  std::string vocab = h.n_vocab() ? grouped(*h.n_vocab()) + " tokens" : std::string("-");
  if (h.tokenizer_model) vocab += ", tokenizer " + std::string(*h.tokenizer_model);
  if (h.tokenizer_pre) vocab += " (pre " + std::string(*h.tokenizer_pre) + ")";
  line("vocabulary:", vocab);
  std::string chat;  // "default (3,124 bytes), tool_use (5,018 bytes)"
  for (const gguf::chat_template_entry& t : templates) {
    chat += (chat.empty() ? "" : ", ") + (t.name.empty() ? std::string("default") : std::string(t.name));
    const auto text = t.entry->value.get<std::string_view>();
    chat += text ? " (" + grouped(text->size()) + " bytes)" : std::string(" (not a string)");
  }
  line("chat templates:", chat.empty() ? "none" : chat);
  std::printf("tensors:        %" PRIu64 " (%s)\n", f->census.total.tensors, mib(f->census.total.bytes).c_str());
  for (const gguf::type_traits& t : gguf::ggml_types) {
    const gguf::type_count& c = f->census[t.type];
    if (!c.tensors) continue;
    std::printf("  %-8s %6" PRIu64 " tensors %18s weights %14s %6.2f bpw\n", std::string(t.name).c_str(), c.tensors,
                grouped(c.elements).c_str(), mib(c.bytes).c_str(), c.bits_per_weight());
  }
  if (mem) {
    std::string what = "at " + grouped(context) + " tokens, K " + std::string(gguf::to_string(opt.cache_type_k)) +
                       " V " + std::string(gguf::to_string(opt.cache_type_v));
    line("memory:", mib(mem->total()) + " " + what);
    line("  weights:", mib(mem->weights));
    if (mem->attention_layers + mem->recurrent_layers == 0) {
      line("  context:", "none (llama.cpp keeps no context for a " + std::string(h.architecture) + " model)");
      return std::fflush(stdout) == 0 ? 0 : cli::fail("cannot write to standard output");
    }
    std::string kv = mib(mem->kv_cache()) + " (K " + mib(mem->k) + ", V " + mib(mem->v);
    if (mem->recurrent_layers) kv += ", recurrent states " + mib(mem->recurrent);
    kv +=
        "; " + std::to_string(mem->attention_layers) + " attention layers of " + std::to_string(mem->cells) + " cells";
    if (mem->swa_layers) kv += ", " + std::to_string(mem->swa_layers) + " of them " + std::to_string(mem->swa_cells);
    kv += ")";
    line("  context:", kv);
  } else {
    line("memory:", "cannot estimate: " + gguf::to_string(mem.error()));
  }
  return std::fflush(stdout) == 0 ? 0 : cli::fail("cannot write to standard output");
}
