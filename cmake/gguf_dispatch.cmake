# gguf::dispatch: opt-in runtime CPU dispatch for the dequantization kernels.
#
# xsimd's batch<T, avx2> exists only in a translation unit compiled with -mavx2, so the kernels are
# compiled once per instruction set, each in its own translation unit (generated from
# dispatch/isa_table.cpp.in) with its own flags, plus one selector (dispatch/select.cpp) compiled with
# the project's baseline flags that detects the CPU and picks a table. Flags are set on those source
# files only: never on gguf::gguf, never globally.
set(GGUF_DISPATCH_DIR "${CMAKE_CURRENT_LIST_DIR}/dispatch")

function(gguf_add_dispatch_library)
  set(sources "${GGUF_DISPATCH_DIR}/select.cpp")
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
    foreach(isa avx2 avx512bw)
      set(GGUF_ISA ${isa})
      string(REPLACE ";" " " GGUF_ISA_FLAGS_TEXT "${flags_${isa}}")
      set(out "${CMAKE_CURRENT_BINARY_DIR}/gguf_dispatch/isa_${isa}.cpp")
      configure_file("${GGUF_DISPATCH_DIR}/isa_table.cpp.in" "${out}" @ONLY)
      set_source_files_properties("${out}" PROPERTIES COMPILE_OPTIONS "${flags_${isa}}")
      list(APPEND sources "${out}")
      string(TOUPPER ${isa} upper)
      list(APPEND definitions GGUF_DISPATCH_${upper})
    endforeach()
  elseif(cpu MATCHES "^(aarch64|arm64)$")
    list(APPEND definitions GGUF_DISPATCH_NEON64)
  endif()

  add_library(gguf_dispatch STATIC ${sources})
  add_library(gguf::dispatch ALIAS gguf_dispatch)
  target_link_libraries(gguf_dispatch PUBLIC gguf::gguf)
  target_compile_definitions(gguf_dispatch PRIVATE ${definitions} INTERFACE GGUF_RUNTIME_DISPATCH=1)
  set_target_properties(gguf_dispatch PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
