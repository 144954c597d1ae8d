#ifndef GGUF_PLATFORM_OS_HPP
#define GGUF_PLATFORM_OS_HPP

#include "gguf/version.hpp"  // its C++20 check, as every public header

/**
 * @file
 * The operating system's headers the platform layer uses, in one place: on Windows `<windows.h>` without
 * its min/max macros and rarely used parts; elsewhere the POSIX file, mapping and stat calls.
 */

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#endif  // GGUF_PLATFORM_OS_HPP
