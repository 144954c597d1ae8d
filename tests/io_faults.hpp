// Fault injection for the file-safety tests: gguf-tests is built with GGUF_TEST_IO_FAULTS, so that
// output_file's writes ask this file's hooks (io_faults.cpp) how many bytes they may write.
#ifndef GGUF_TESTS_IO_FAULTS_HPP
#define GGUF_TESTS_IO_FAULTS_HPP

#include <cstdint>

namespace test {

/**
 * When `budget` is non-negative, the `output_file` write that passes that many more bytes in this thread
 * writes the bytes up to the limit and fails with EIO, once (the budget is then off again, so that the
 * error's own recovery can write); with `crash` the process exits there instead (`std::_Exit(86)`), as if
 * killed. Off (-1) unless a test sets it.
 */
struct io_faults {
  std::int64_t budget = -1;
  bool crash = false;
};

/// This thread's fault, to set: `test::injected_io_faults() = {bytes, crash}`.
io_faults& injected_io_faults() noexcept;

}  // namespace test

#endif  // GGUF_TESTS_IO_FAULTS_HPP
