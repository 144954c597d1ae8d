#ifndef GGUF_FORMAT_SINK_HPP
#define GGUF_FORMAT_SINK_HPP

#include "gguf/version.hpp"

#include <cstddef>
#include <span>
#include <vector>

#include "gguf/result.hpp"

GGUF_BEGIN_NAMESPACE

/** Where a writer's bytes go: a file, a buffer, a socket. */
class sink {
 public:
  sink() = default;           ///< a sink
  virtual ~sink() = default;  ///< a sink
  /**
   * Appends `bytes`.
   * @return nothing, or the error that stops the write (an I/O error with the OS's reason)
   */
  virtual result<void> write(std::span<const std::byte> bytes) = 0;

 protected:
  // Copied and moved only as part of a concrete sink, never sliced out of one.
  sink(const sink&) = default;             ///< for concrete sinks
  sink(sink&&) = default;                  ///< for concrete sinks
  sink& operator=(const sink&) = default;  ///< for concrete sinks
  sink& operator=(sink&&) = default;       ///< for concrete sinks
};

/** A sink that appends to a `std::vector<std::byte>` (for small files and tests). */
class vector_sink final : public sink {
 public:
  /** Appends to `out`, which must outlive the sink. */
  explicit vector_sink(std::vector<std::byte>& out) noexcept : out_(&out) {}
  /** Appends `bytes` to the vector. */
  result<void> write(std::span<const std::byte> bytes) override {
    out_->insert(out_->end(), bytes.begin(), bytes.end());
    return {};
  }

 private:
  std::vector<std::byte>* out_;
};

GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_SINK_HPP
