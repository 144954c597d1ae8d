# Every public header, included alone in a C++17 translation unit, must stop the compiler with gguf's
# one message ("gguf requires C++20") and nothing else: no error from a C++20 construct after it.
#   cmake -DCXX=<compiler> -DINCLUDE=<include dir> -DWORK=<scratch dir> -P cxx17_check.cmake
file(GLOB_RECURSE headers RELATIVE "${INCLUDE}" "${INCLUDE}/gguf/*.hpp")
file(MAKE_DIRECTORY "${WORK}")
set(failures 0)
foreach(h IN LISTS headers)
  set(src "${WORK}/cxx17.cpp")
  file(WRITE "${src}" "#include <${h}>\nint main() { return 0; }\n")
  execute_process(COMMAND "${CXX}" -std=c++17 -fsyntax-only -I "${INCLUDE}" "${src}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REGEX MATCHALL "error" errors "${out}")
  list(LENGTH errors n_errors)
  # The #error line and the fatal missing include each say "error" (plus the message and the
  # diagnostic's echo of the #error line): anything beyond that is another error.
  if(rc EQUAL 0 OR NOT out MATCHES "gguf requires C\\+\\+20" OR n_errors GREATER 6)
    message(SEND_ERROR "${h}: in C++17, expected only gguf's C++20 message, got:\n${out}")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()
list(LENGTH headers n)
if(failures EQUAL 0)
  message(STATUS "${n} headers: each stops a C++17 build with gguf's one message")
endif()
