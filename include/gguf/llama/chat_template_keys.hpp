#ifndef GGUF_LLAMA_CHAT_TEMPLATE_KEYS_HPP
#define GGUF_LLAMA_CHAT_TEMPLATE_KEYS_HPP

// Which chat templates a model carries, without the template engine (<gguf/chat_template.hpp> compiles
// and renders them): gguf-info and model facts list them from here.

#include <string_view>
#include <vector>

#include "gguf/format/metadata.hpp"

GGUF_BEGIN_NAMESPACE

/// The key of a model's default chat template; a named one is `tokenizer.chat_template.NAME`.
inline constexpr std::string_view chat_template_key = "tokenizer.chat_template";

/// One chat template in a model's metadata: a view into the metadata table.
struct chat_template_entry {
  std::string_view name;                  ///< "" for `tokenizer.chat_template`, else NAME
  const metadata_entry* entry = nullptr;  ///< its metadata entry (whose value may not be a string)
};

/**
 * The chat templates in `md`: `tokenizer.chat_template` first (when present), then each
 * `tokenizer.chat_template.NAME` in the file's order (llama.cpp and transformers keep that order).
 * @param md a model's metadata; the entries view it and live as long as it
 */
inline std::vector<chat_template_entry> chat_template_entries(const metadata_table& md) {
  std::vector<chat_template_entry> out;
  for (const metadata_entry& e : md) {
    const std::string_view k = e.key;
    if (k == chat_template_key) {
      out.insert(out.begin(), chat_template_entry{{}, &e});
    } else if (k.size() > chat_template_key.size() + 1 && k.substr(0, chat_template_key.size()) == chat_template_key &&
               k[chat_template_key.size()] == '.') {
      out.push_back(chat_template_entry{k.substr(chat_template_key.size() + 1), &e});
    }
  }
  return out;
}

GGUF_END_NAMESPACE

#endif  // GGUF_LLAMA_CHAT_TEMPLATE_KEYS_HPP
