#ifndef GGUF_DETAIL_ORDERED_PIPELINE_HPP
#define GGUF_DETAIL_ORDERED_PIPELINE_HPP

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <new>
#include <span>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "gguf/result.hpp"

/**
 * @file
 * Work units made ahead by worker threads and handed to one consumer in its order: the consumer (a
 * writer's thread) copies and writes one unit while the workers make the next ones, and makes units
 * itself when it would otherwise wait.
 */

GGUF_BEGIN_NAMESPACE

/// @cond INTERNAL
namespace detail {

/**
 * Units `0 .. n_units - 1`, each a byte buffer that `work(unit, bytes, thread)` fills, made by
 * `n_threads - 1` workers plus the consumer, at most `2 * n_threads` units ahead of the unit the consumer
 * last asked for (the memory is that many buffers). `acquire(u)` for the next unit in order, or the one
 * after it, is the fast path; any other unit is made from there on after the units in flight finish, so
 * that a consumer that starts over (a writer written twice) or jumps gets the same bytes, only later.
 * The workers start at the first `acquire` and stop when the pipeline is destroyed. One consumer thread.
 */
class ordered_pipeline {
 public:
  /// Fills `bytes` (its old content is garbage; resize it) with unit `unit`, on thread `thread` (0 is the
  /// consumer's, then the workers': an index for per-thread scratch).
  using work_fn = std::function<result<void>(std::uint64_t unit, std::vector<std::byte>& bytes, unsigned thread)>;

  /// A pipeline of `n_units` units made by `work` on `n_threads` threads (at least 1), the consumer's included.
  ordered_pipeline(std::uint64_t n_units, unsigned n_threads, work_fn work)
      : n_units_(n_units),
        n_threads_(n_threads < 1 ? 1 : n_threads),
        work_(std::move(work)),
        slots_(std::size_t{2} * n_threads_) {}
  ordered_pipeline(const ordered_pipeline&) = delete;
  ordered_pipeline& operator=(const ordered_pipeline&) = delete;
  ordered_pipeline(ordered_pipeline&&) = delete;
  ordered_pipeline& operator=(ordered_pipeline&&) = delete;
  /// Stops the workers after the units they are making.
  ~ordered_pipeline() {
    {
      const std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    wake_workers_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  /**
   * The bytes of unit `u`, valid until the next `acquire`; the units before `u` are given up (their
   * buffers are reused). Makes units on the calling thread while `u` is not ready.
   * @return the bytes, or the error `work` returned for `u`
   */
  result<std::span<const std::byte>> acquire(std::uint64_t u) {
    if (u >= n_units_) return error{errc::out_of_range, "no such unit"};
    start_workers();
    std::unique_lock<std::mutex> lock(m_);
    const bool restart = u < head_ || u > next_;
    if (restart) restart_at(u, lock);
    if (restart || u != head_) {  // asked again for the same unit (a chunk at a time), nothing is freed
      head_ = u;
      wake_workers_.notify_all();  // the units before u are given up: their slots are free for the next ones
    }
    for (;;) {
      slot& s = slots_[u % slots_.size()];
      if (s.unit == u && s.done) {
        if (!s.r) return s.r.error();
        return std::span<const std::byte>(s.bytes);
      }
      if (claimable()) {
        make_next(lock, 0);  // the consumer helps rather than waits
      } else {
        unit_done_.wait(lock);
      }
    }
  }

 private:
  static constexpr std::uint64_t none = ~std::uint64_t{0};
  struct slot {
    std::uint64_t unit = none;
    bool busy = false;  // being made (its bytes belong to the thread making it)
    bool done = false;
    result<void> r;
    std::vector<std::byte> bytes;
  };

  // Unit next_ may be made: it exists, it is within the window, and its slot's old unit is finished.
  [[nodiscard]] bool claimable() const noexcept {
    return next_ < n_units_ && next_ < head_ + slots_.size() && !slots_[next_ % slots_.size()].busy;
  }

  // Makes unit next_ on `thread`, the lock released while it works.
  void make_next(std::unique_lock<std::mutex>& lock, unsigned thread) {
    const std::uint64_t u = next_++;
    slot& s = slots_[u % slots_.size()];
    s.unit = u;
    s.busy = true;
    s.done = false;
    lock.unlock();
    result<void> r;
#if GGUF_EXCEPTIONS
    try {
      r = work_(u, s.bytes, thread);
    } catch (const std::bad_alloc&) {  // on a worker it would end the process
      r = error{errc::limit_exceeded, "out of memory for a unit of work"};
    }
#else
    r = work_(u, s.bytes, thread);
#endif
    lock.lock();
    s.r = r;
    s.busy = false;
    s.done = true;
    unit_done_.notify_all();
    wake_workers_.notify_all();  // a finished slot may be the one the next claim waits for
  }

  // The consumer asked for a unit out of order: wait for the units in flight, forget the rest, go on from u.
  void restart_at(std::uint64_t u, std::unique_lock<std::mutex>& lock) {
    const auto busy = [this] { return std::ranges::any_of(slots_, [](const slot& s) { return s.busy; }); };
    while (busy()) unit_done_.wait(lock);
    for (slot& s : slots_) {
      s.unit = none;
      s.done = false;
    }
    head_ = next_ = u;
  }

  void start_workers() {
    if (started_) return;
    started_ = true;
    for (unsigned k = 1; k < n_threads_; ++k) {
#if GGUF_EXCEPTIONS
      try {
        workers_.emplace_back([this, k] { run(k); });
      } catch (const std::system_error&) {
        break;  // fewer threads: the consumer makes what they would have
      }
#else
      workers_.emplace_back([this, k] { run(k); });
#endif
    }
  }

  void run(unsigned thread) {
    std::unique_lock<std::mutex> lock(m_);
    while (!stop_) {
      if (claimable()) {
        make_next(lock, thread);
      } else {
        wake_workers_.wait(lock);
      }
    }
  }

  const std::uint64_t n_units_;
  const unsigned n_threads_;
  const work_fn work_;
  std::vector<slot> slots_;  // unit u lives in slots_[u % size]
  std::mutex m_;
  std::condition_variable wake_workers_, unit_done_;
  std::uint64_t head_ = 0;  // the unit the consumer asked for last; units before it are given up
  std::uint64_t next_ = 0;  // the next unit to make
  bool stop_ = false;
  bool started_ = false;  // the consumer's alone
  std::vector<std::thread> workers_;
};

}  // namespace detail
/// @endcond

GGUF_END_NAMESPACE

#endif  // GGUF_DETAIL_ORDERED_PIPELINE_HPP
