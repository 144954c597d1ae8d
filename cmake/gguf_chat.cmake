# gguf::chat: the chat template engine compiled once.
#
# <gguf/chat_template.hpp> is header-only: a file that includes it compiles the whole Jinja engine (about
# 8 s of g++ -O2). A program that links gguf::chat gets GGUF_CHAT_TEMPLATE_LIBRARY=1 instead: its files
# compile the API alone and call the engine compiled once in this library (src/chat/chat_template.cpp).
# This file and that source are also installed (the source in chat/ beside this file, next to
# ggufConfig.cmake, which includes it): an installed package's users call gguf_add_chat_library() the
# same way.

#   gguf_add_chat_library([NAME target] [OPTIONS flags...])
# NAME defaults to gguf_chat (with the alias gguf::chat); OPTIONS are added to its source.
function(gguf_add_chat_library)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME" "OPTIONS")
  if(NOT arg_NAME)
    set(arg_NAME gguf_chat)
  endif()
  set(dir "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/chat")  # installed: beside this file
  if(NOT EXISTS "${dir}/chat_template.cpp")
    set(dir "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../src/chat")  # the source tree
  endif()
  # Built only when something links it: a parent project that never asks for it compiles nothing.
  add_library(${arg_NAME} STATIC EXCLUDE_FROM_ALL "${dir}/chat_template.cpp")
  if(arg_NAME STREQUAL "gguf_chat")
    add_library(gguf::chat ALIAS gguf_chat)
  endif()
  target_link_libraries(${arg_NAME} PUBLIC gguf::gguf)
  target_compile_definitions(${arg_NAME} PUBLIC GGUF_CHAT_TEMPLATE_LIBRARY=1)
  target_compile_options(${arg_NAME} PRIVATE ${arg_OPTIONS})
  set_target_properties(${arg_NAME} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
