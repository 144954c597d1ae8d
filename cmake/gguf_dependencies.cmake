# Dependencies: an installed package first (find_package), a FetchContent download only when it is
# absent (for users who are online; CI here uses the distribution's packages).
include(FetchContent)

macro(gguf_find_xsimd)
  if(NOT TARGET xsimd)
    # No version argument: xsimd 8.x's SameMajorVersion rule would reject 13.x and 14.x.
    find_package(xsimd CONFIG QUIET)
    if(NOT xsimd_FOUND)
      message(STATUS "gguf: xsimd not found, fetching it")
      FetchContent_Declare(xsimd GIT_REPOSITORY https://github.com/xtensor-stack/xsimd.git GIT_TAG 13.2.0
                           GIT_SHALLOW TRUE)
      FetchContent_MakeAvailable(xsimd)
    endif()
  endif()
  # Debian's libxsimd-dev 8.1.0-7 exports `xsimd` linking a bare `xtl` that it does not ship.
  if(NOT TARGET xtl)
    add_library(xtl INTERFACE IMPORTED GLOBAL)
  endif()
endmacro()

macro(gguf_find_doctest)
  if(NOT TARGET doctest::doctest)
    find_package(doctest CONFIG QUIET)
    if(NOT doctest_FOUND)
      message(STATUS "gguf: doctest not found, fetching it")
      FetchContent_Declare(doctest GIT_REPOSITORY https://github.com/doctest/doctest.git GIT_TAG v2.4.11
                           GIT_SHALLOW TRUE)
      set(DOCTEST_NO_INSTALL ON CACHE BOOL "" FORCE)
      FetchContent_MakeAvailable(doctest)
      list(APPEND CMAKE_MODULE_PATH "${doctest_SOURCE_DIR}/scripts/cmake")
    endif()
  endif()
endmacro()

macro(gguf_find_benchmark)
  if(NOT TARGET benchmark::benchmark)
    find_package(benchmark CONFIG QUIET)
    if(NOT benchmark_FOUND)
      message(STATUS "gguf: google-benchmark not found, fetching it")
      set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
      set(BENCHMARK_ENABLE_INSTALL OFF CACHE BOOL "" FORCE)
      FetchContent_Declare(benchmark GIT_REPOSITORY https://github.com/google/benchmark.git GIT_TAG v1.8.3
                           GIT_SHALLOW TRUE)
      FetchContent_MakeAvailable(benchmark)
    endif()
  endif()
endmacro()
