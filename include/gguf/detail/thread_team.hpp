#ifndef GGUF_DETAIL_THREAD_TEAM_HPP
#define GGUF_DETAIL_THREAD_TEAM_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#include "gguf/version.hpp"

/**
 * @file
 * A few threads that live for one job of short phases (a tokenizer's build: some milliseconds), and
 * take the items of each phase in turn.
 */

GGUF_BEGIN_NAMESPACE

/// @cond INTERNAL
namespace detail {

/// A pause in a loop that waits for another thread (the processor's hint, where it has one).
inline void spin_pause() noexcept {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __builtin_ia32_pause();
#elif defined(__GNUC__) && defined(__aarch64__)
  asm volatile("yield");
#endif
}

/**
 * The calling thread and up to `threads - 1` helpers, which run the items of one phase after another
 * (`run`). The calling thread runs serial work between phases and takes items too, so a helper that
 * starts late, or never, only leaves more for the others: a job never takes longer than on the calling
 * thread alone, less the cost of a few atomic counters.
 *
 * Between phases the helpers wait by spinning, then by yielding, but never sleep: waking a sleeping
 * thread takes up to a fifth of a millisecond on some virtual machines, as long as a whole phase.
 * A team is for jobs of milliseconds, not for waiting on input.
 */
class thread_team {
 public:
  /** The calling thread alone. */
  thread_team() = default;

  /**
   * The calling thread and up to `threads - 1` helpers, started now: no more than the processors the
   * system has (helpers that wait by spinning must not outnumber them), and fewer when it refuses them.
   * @param threads the most threads, the calling thread included
   */
  explicit thread_team(unsigned threads) {
    if (const unsigned cores = std::thread::hardware_concurrency(); cores > 0 && threads > cores) threads = cores;
    if (threads <= 1) return;
    helpers_.reserve(threads - 1);
    for (unsigned k = 1; k < threads; ++k) {
#if GGUF_EXCEPTIONS
      try {
        helpers_.emplace_back([this, k] { help(k); });
      } catch (const std::system_error&) {
        break;
      }
#else
      helpers_.emplace_back([this, k] { help(k); });
#endif
    }
  }

  thread_team(const thread_team&) = delete;
  thread_team& operator=(const thread_team&) = delete;
  thread_team(thread_team&&) = delete;  // the helpers hold its address
  thread_team& operator=(thread_team&&) = delete;

  /** Ends the helpers. */
  ~thread_team() {
    stop_.store(true, std::memory_order_release);
    for (std::thread& t : helpers_) t.join();
  }

  /** The most threads that may run an item (their `thread` indices are below it). */
  unsigned size() const noexcept { return static_cast<unsigned>(helpers_.size()) + 1; }

  /**
   * Runs `item(i, thread)` for every `i` below `n` and returns when all have ended: the calling thread
   * and the helpers take the items in turn. `thread` is the index of the thread running it, below
   * `size()`, for per-thread scratch (0 is the calling thread's). A team runs up to `max_phases` phases
   * with its helpers, and any after them on the calling thread alone.
   * @param item must not throw, and must not call `run`
   */
  template <class Item>
  void run(std::size_t n, Item&& item) {
    if (n == 0) return;
    if (helpers_.empty() || published_ == max_phases) {
      for (std::size_t i = 0; i < n; ++i) item(i, 0u);
      return;
    }
    using item_type = std::remove_reference_t<Item>;
    phase& p = phases_[published_];
    p.job = &item;
    p.call = [](void* f, std::size_t i, unsigned thread) { (*static_cast<item_type*>(f))(i, thread); };
    p.n = n;
    published_ += 1;
    published_at_.store(published_, std::memory_order_release);
    take(p, 0);
    for (unsigned spins = 0; p.done.load(std::memory_order_acquire) < n; ++spins) wait_a_little(spins);
  }

  /// The most phases a team runs with its helpers.
  static constexpr unsigned max_phases = 16;

 private:
  // One phase, written once before it is published and never again: a helper that looks at a phase
  // late finds its items all taken, and calls nothing.
  struct phase {
    alignas(64) std::atomic<std::size_t> next{0};  // the next item to take
    void* job = nullptr;
    void (*call)(void*, std::size_t, unsigned) = nullptr;
    std::size_t n = 0;
    alignas(64) std::atomic<std::size_t> done{0};  // the items that have ended
  };

  static void take(phase& p, unsigned thread) {
    std::size_t taken = 0;
    for (std::size_t i; (i = p.next.fetch_add(1, std::memory_order_relaxed)) < p.n; ++taken) p.call(p.job, i, thread);
    if (taken) p.done.fetch_add(taken, std::memory_order_acq_rel);
  }

  void help(unsigned thread) {
    unsigned seen = 0;
    for (unsigned spins = 0;; ++spins) {
      if (stop_.load(std::memory_order_acquire)) return;
      const unsigned now = published_at_.load(std::memory_order_acquire);
      if (now == seen) {
        wait_a_little(spins);
        continue;
      }
      seen = now;
      spins = 0;
      take(phases_[now - 1], thread);  // the phases before it have ended
    }
  }

  static void wait_a_little(unsigned spins) noexcept {
    if (spins < 256) {  // some microseconds: a pause takes up to 140 cycles
      spin_pause();
    } else {
      std::this_thread::yield();  // the thread waited for may share this processor
    }
  }

  alignas(64) std::atomic<unsigned> published_at_{0};  // the phases published
  std::atomic<bool> stop_{false};
  unsigned published_ = 0;  // the same, the calling thread's own count
  std::vector<std::thread> helpers_;
  phase phases_[max_phases];
};

}  // namespace detail
/// @endcond

GGUF_END_NAMESPACE

#endif  // GGUF_DETAIL_THREAD_TEAM_HPP
