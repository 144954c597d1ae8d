// gguf::chat: the chat template engine compiled once. A program that links it gets
// GGUF_CHAT_TEMPLATE_LIBRARY=1, and its files that include <gguf/chat_template.hpp> compile the API only
// (see that header); this file defines the entry points they call.
#ifndef GGUF_CHAT_TEMPLATE_LIBRARY
#define GGUF_CHAT_TEMPLATE_LIBRARY 1
#endif
#include <gguf/chat_template.hpp>
#include <gguf/jinja/engine.hpp>
