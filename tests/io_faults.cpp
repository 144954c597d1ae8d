// The hooks output_file calls in gguf-tests (GGUF_TEST_IO_FAULTS): the faults io_faults.hpp describes.
#include "io_faults.hpp"

#include <gguf/platform/output_file.hpp>

#include <cerrno>
#include <cstdlib>

namespace test {

io_faults& injected_io_faults() noexcept {
  static thread_local io_faults f;
  return f;
}

}  // namespace test

GGUF_BEGIN_NAMESPACE
namespace detail {

std::size_t io_fault_allowance(std::size_t n) noexcept {
  test::io_faults& f = test::injected_io_faults();
  if (f.budget < 0) return n;
  const auto allowed =
      static_cast<std::size_t>(static_cast<std::uint64_t>(f.budget) < n ? f.budget : static_cast<std::int64_t>(n));
  f.budget -= static_cast<std::int64_t>(allowed);
  return allowed;
}

result<void> io_fault() noexcept {
  if (test::injected_io_faults().crash) std::_Exit(86);
  test::injected_io_faults().budget = -1;
  return error{errc::io_error, "cannot write the file (injected fault)"}.os(EIO);
}

}  // namespace detail
GGUF_END_NAMESPACE
