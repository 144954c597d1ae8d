# gguf::dispatch: opt-in runtime CPU dispatch for the dequantization kernels.
#
# xsimd's batch<T, avx2> exists only in a translation unit compiled with -mavx2, so the kernels are
# compiled once per instruction set, each in its own translation unit (generated from
# src/dispatch/isa_table.cpp.in) with its own flags, plus one selector (src/dispatch/select.cpp) compiled
# with the project's baseline flags that detects the CPU and picks a table. Flags are set on those source
# files only: never on gguf::gguf, never globally.
# This file and the sources are also installed (the sources in dispatch/ beside this file, next to
# ggufConfig.cmake, which includes it): an installed package's users call gguf_add_dispatch_library()
# the same way.

#   gguf_add_dispatch_library([NAME target] [OPTIONS flags...])
# NAME defaults to gguf_dispatch (with the alias gguf::dispatch); OPTIONS are added to every source
# (the fuzzer builds its own instrumented copy this way).
function(gguf_add_dispatch_library)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME" "OPTIONS")
  if(NOT arg_NAME)
    set(arg_NAME gguf_dispatch)
  endif()
  set(dir "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/dispatch")  # installed: beside this file
  if(NOT EXISTS "${dir}/select.cpp")
    set(dir "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../src/dispatch")  # the source tree
  endif()
  set(sources "${dir}/select.cpp")
  set(definitions "")
  string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" cpu)
  if(cpu MATCHES "^(x86_64|amd64|x64)$")
    list(APPEND definitions GGUF_DISPATCH_X86)
    if(MSVC)
      set(flags_avx2 /arch:AVX2)
      set(flags_avx512bw /arch:AVX512)
    else()
      set(flags_avx2 -mavx2 -mfma -mf16c -mbmi -mbmi2)
      set(flags_avx512bw -mavx512f -mavx512cd -mavx512bw -mavx512dq -mavx512vl -mavx2 -mfma -mf16c -mbmi -mbmi2)
    endif()
    set(isas avx2 avx512bw)
    set(table_avx2 "best_kernel_table()")
    set(table_avx512bw "best_kernel_table()")
    # AVX512-BF16 (Zen 4, Sapphire Rapids) rounds to bf16 in one instruction: only the bf16 outputs'
    # kernels are compiled again with it, and replace the avx512bw ones on a CPU that has it.
    include(CheckCXXCompilerFlag)
    if(NOT MSVC)
      check_cxx_compiler_flag(-mavx512bf16 GGUF_HAVE_AVX512BF16_FLAG)
      if(GGUF_HAVE_AVX512BF16_FLAG)
        list(APPEND isas avx512bf16)
        set(flags_avx512bf16 ${flags_avx512bw} -mavx512bf16)
        set(table_avx512bf16 "best_kernel_table_to<bf16>()")
      endif()
    endif()
    foreach(isa ${isas})
      set(GGUF_ISA ${isa})
      set(GGUF_ISA_TABLE "${table_${isa}}")
      string(REPLACE ";" " " GGUF_ISA_FLAGS_TEXT "${flags_${isa}}")
      set(out "${CMAKE_CURRENT_BINARY_DIR}/${arg_NAME}/isa_${isa}.cpp")
      configure_file("${dir}/isa_table.cpp.in" "${out}" @ONLY)
      set_source_files_properties("${out}" PROPERTIES COMPILE_OPTIONS "${flags_${isa}}")
      list(APPEND sources "${out}")
      string(TOUPPER ${isa} upper)
      list(APPEND definitions GGUF_DISPATCH_${upper})
    endforeach()
  elseif(cpu MATCHES "^(aarch64|arm64)$")
    list(APPEND definitions GGUF_DISPATCH_NEON64)
  endif()

  # Built only when something links it: a parent project that never asks for it compiles nothing.
  add_library(${arg_NAME} STATIC EXCLUDE_FROM_ALL ${sources})
  if(arg_NAME STREQUAL "gguf_dispatch")
    add_library(gguf::dispatch ALIAS gguf_dispatch)
  endif()
  target_link_libraries(${arg_NAME} PUBLIC gguf::gguf)
  target_compile_definitions(${arg_NAME} PRIVATE ${definitions} INTERFACE GGUF_RUNTIME_DISPATCH=1)
  target_compile_options(${arg_NAME} PRIVATE ${arg_OPTIONS})
  set_target_properties(${arg_NAME} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
