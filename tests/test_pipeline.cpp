// The pipeline a quantizing writer converts through (gguf/detail/ordered_pipeline.hpp): units made ahead
// by worker threads, handed to one consumer in its order; every unit made once when asked for in order,
// the same bytes in any other order, the unit's own error at the unit, and no thread outliving it. And the
// team a tokenizer is built by (gguf/detail/thread_team.hpp): phase after phase, every item run once.
#include <doctest/doctest.h>

#include <gguf/result.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gguf/detail/ordered_pipeline.hpp"
#include "gguf/detail/thread_team.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_pipeline {

using gguf::errc;
using gguf::detail::ordered_pipeline;

namespace {

constexpr std::uint64_t bad_unit = 13;

// Unit u is u % 7 + 1 bytes, each (u * 31 + i) mod 256; unit 13 fails.
gguf::result<void> make_unit(std::uint64_t u, std::vector<std::byte>& bytes) {
  if (u == bad_unit) return gguf::error{errc::out_of_range, "unit 13 fails"};
  bytes.resize(static_cast<std::size_t>(u % 7 + 1));
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>((u * 31 + i) & 0xFF);
  return {};
}

bool holds_unit(const std::span<const std::byte>& bytes, std::uint64_t u) {
  std::vector<std::byte> want;
  REQUIRE(make_unit(u, want));
  return std::ranges::equal(bytes, want);
}

struct counted_pipeline {
  static constexpr std::uint64_t n_units = 40;
  std::unique_ptr<std::atomic<int>[]> made = std::make_unique<std::atomic<int>[]>(n_units);
  std::atomic<unsigned> highest_thread{0};
  ordered_pipeline pipeline;
  explicit counted_pipeline(unsigned n_threads)
      : pipeline(n_units, n_threads, [this](std::uint64_t u, std::vector<std::byte>& bytes, unsigned thread) {
          ++made[u];
          unsigned seen = highest_thread.load();
          while (thread > seen && !highest_thread.compare_exchange_weak(seen, thread)) {}
          return make_unit(u, bytes);
        }) {}
};

}  // namespace

TEST_CASE("ordered_pipeline: in order, every unit is made once, on the threads it was given") {
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    CAPTURE(threads);
    counted_pipeline p(threads);
    for (std::uint64_t u = 0; u < counted_pipeline::n_units; ++u) {
      CAPTURE(u);
      auto bytes = p.pipeline.acquire(u);
      if (u == bad_unit) {
        REQUIRE_FALSE(bytes);
        CHECK(bytes.error().code == errc::out_of_range);
        continue;
      }
      REQUIRE(bytes);
      CHECK(holds_unit(*bytes, u));
      CHECK(holds_unit(*p.pipeline.acquire(u), u));  // asked for again: the same bytes, not made again
    }
    for (std::uint64_t u = 0; u < counted_pipeline::n_units; ++u) CHECK(p.made[u] == 1);
    CHECK(p.highest_thread < threads);
  }
}

TEST_CASE("ordered_pipeline: any other order gives the same bytes") {
  for (unsigned threads : {1u, 2u, 4u}) {
    CAPTURE(threads);
    counted_pipeline p(threads);
    // a writer written twice starts over; a consumer may jump ahead or back
    for (const std::uint64_t u : {0, 1, 2, 3, 0, 1, 30, 31, 5, 39, 38, 12, 14, 0}) {
      CAPTURE(u);
      auto bytes = p.pipeline.acquire(u);
      REQUIRE(bytes);
      CHECK(holds_unit(*bytes, u));
    }
    CHECK(p.pipeline.acquire(counted_pipeline::n_units).error().code == errc::out_of_range);
  }
}

TEST_CASE("ordered_pipeline: destroyed at any point, its workers stop") {
  for (unsigned threads : {2u, 4u}) {
    {
      counted_pipeline never_asked(threads);  // no worker started
    }
    counted_pipeline p(threads);
    REQUIRE(p.pipeline.acquire(0));  // the workers run ahead, then wait for the consumer: destroyed waiting
    int made = 0;
    for (std::uint64_t u = 0; u < counted_pipeline::n_units; ++u) made += p.made[u];
    CHECK(made >= 1);
    CHECK(made <= static_cast<int>(2 * threads));  // never more than the slots ahead
  }
}

TEST_CASE("thread_team: each phase's items run once each, after every item of the phase before") {
  for (unsigned threads : {1u, 2u, 4u}) {
    gguf::detail::thread_team team(threads);
    CHECK(team.size() >= 1);
    CHECK(team.size() <= threads);
    // phase p adds p + 1 to every counter, once the counters all hold what the phases before gave them
    constexpr std::size_t n = 1000;
    std::vector<std::atomic<std::uint64_t>> counters(n);  // read by other items of the same phase
    std::atomic<std::size_t> out_of_order{0}, bad_thread{0};
    const unsigned phases = gguf::detail::thread_team::max_phases + 4;  // the last ones on the calling thread
    for (unsigned p = 0; p < phases; ++p) {
      const std::uint64_t before = std::uint64_t{p} * (p + 1) / 2;
      team.run(n, [&](std::size_t i, unsigned thread) {
        if (thread >= team.size()) ++bad_thread;
        if (counters[(i * 7919) % n] < before) ++out_of_order;  // another item's counter, of the phase before
        counters[i] += p + 1;
      });
    }
    team.run(0, [&](std::size_t, unsigned) { ++bad_thread; });  // no items: nothing runs
    CHECK(out_of_order == 0);
    CHECK(bad_thread == 0);
    const std::uint64_t all = std::uint64_t{phases} * (phases + 1) / 2;
    for (const std::atomic<std::uint64_t>& c : counters) CHECK(c.load() == all);
  }
}

}  // namespace test_pipeline
