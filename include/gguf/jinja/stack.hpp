#ifndef GGUF_JINJA_STACK_HPP
#define GGUF_JINJA_STACK_HPP

/**
 * @file
 * A bound on the stack a recursive pass may use. Templates nest (parentheses, blocks, macros calling
 * macros) and the parser, the compiler's checks and the renderer recurse with them; Python stops Jinja2
 * at its recursion limit, this stops them at a number of bytes of the thread's stack, measured from
 * where the pass began, so that no template overflows the stack whatever a frame costs under the
 * compiler and the sanitizers it was built with.
 */

#include <cstddef>
#include <cstdint>

#include "gguf/version.hpp"

GGUF_BEGIN_NAMESPACE
namespace jinja {

/// The stack a pass may use from where it began.
class stack_budget {
 public:
  /// A budget of `bytes` from the caller's frame.
  explicit stack_budget(std::size_t bytes) noexcept : start_(here()), bytes_(bytes) {}

  /// True when the calling frame lies more than the budget away from the first one.
  bool exceeded() const noexcept {
    const std::uintptr_t h = here();
    return (start_ > h ? start_ - h : h - start_) > bytes_;
  }

 private:
  std::uintptr_t start_;
  std::size_t bytes_;

  // The frame's address; the stack grows down on every platform gguf builds for, but the distance is
  // taken either way.
  static std::uintptr_t here() noexcept {
#if defined(__GNUC__) || defined(__clang__)
    return reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
#else
    volatile char c = 0;
    return reinterpret_cast<std::uintptr_t>(&c);
#endif
  }
};

}  // namespace jinja
GGUF_END_NAMESPACE

#endif  // GGUF_JINJA_STACK_HPP
