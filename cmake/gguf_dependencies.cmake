# Dependencies: an installed package first (find_package), a FetchContent download only when it is
# absent (for users who are online; CI here uses the distribution's packages).
include(FetchContent)

# gguf_find_or_fetch(<package> <target> <git repository> <tag>): find_package(<package> CONFIG) unless
# <target> already exists (a parent project provided it), else fetch and add it.
macro(gguf_find_or_fetch package target repository tag)
  if(NOT TARGET ${target})
    # No version argument: xsimd 8.x's SameMajorVersion rule would reject 13.x and 14.x.
    find_package(${package} CONFIG QUIET)
    if(NOT ${package}_FOUND)
      message(STATUS "gguf: ${package} not found, fetching ${tag}")
      FetchContent_Declare(${package} GIT_REPOSITORY ${repository} GIT_TAG ${tag} GIT_SHALLOW TRUE)
      FetchContent_MakeAvailable(${package})
    endif()
  endif()
endmacro()

macro(gguf_find_xsimd)
  gguf_find_or_fetch(xsimd xsimd https://github.com/xtensor-stack/xsimd.git 13.2.0)
  # Debian's libxsimd-dev 8.1.0-7 exports `xsimd` linking a bare `xtl` that it does not ship.
  if(NOT TARGET xtl)
    add_library(xtl INTERFACE IMPORTED GLOBAL)
  endif()
endmacro()

macro(gguf_find_doctest)
  set(DOCTEST_NO_INSTALL ON CACHE BOOL "")
  gguf_find_or_fetch(doctest doctest::doctest https://github.com/doctest/doctest.git v2.4.11)
  if(DEFINED doctest_SOURCE_DIR)
    list(APPEND CMAKE_MODULE_PATH "${doctest_SOURCE_DIR}/scripts/cmake")  # doctest.cmake of a fetched copy
  endif()
endmacro()

macro(gguf_find_benchmark)
  set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "")
  set(BENCHMARK_ENABLE_INSTALL OFF CACHE BOOL "")
  gguf_find_or_fetch(benchmark benchmark::benchmark https://github.com/google/benchmark.git v1.8.3)
endmacro()
