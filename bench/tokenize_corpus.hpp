// The text gguf-bench tokenizes: 1 MiB of prose (English, German, French, Russian), code, JSON, Chinese,
// Japanese, Korean, emoji, numbers and runs of whitespace: sentences of the passages' words drawn about
// as often as Zipf's law has them, with numbers and made-up names (about one word in ten never seen
// before), and whole passages between them. A seeded generator: the same bytes every run and machine.
#ifndef GGUF_BENCH_TOKENIZE_CORPUS_HPP
#define GGUF_BENCH_TOKENIZE_CORPUS_HPP

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace bench {

inline std::string tokenize_corpus(std::size_t bytes = std::size_t{1} << 20) {
  static const char* const passages[] = {
      "The quick brown fox jumps over the lazy dog. It wasn't the first time; they'd seen it before, and "
      "they'll see it again. ",
      "In 1969, 3 astronauts flew 384,400 km to the Moon and back in 8 days, 3 hours and 18 minutes. ",
      "Machine learning models are trained on large datasets. Tokenizers split text into pieces that the "
      "model maps to vectors; a good tokenizer keeps common words whole and rare words in parts. ",
      "Die Würde des Menschen ist unantastbar. Sie zu achten und zu schützen ist Verpflichtung aller "
      "staatlichen Gewalt. ",
      "Le cœur a ses raisons que la raison ne connaît point. Où êtes-vous allé cet été ? ",
      "Все счастливые семьи похожи друг на друга, каждая несчастливая семья несчастлива по-своему. ",
      "人工智能是计算机科学的一个分支，它企图了解智能的实质，并生产出一种新的能以人类智能相似的方式做出反应的智能机器"
      "。",
      "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。カタカナもひらがなも。",
      "대한민국은 민주공화국이다. 대한민국의 주권은 국민에게 있고, 모든 권력은 국민으로부터 나온다. ",
      "Great job! 🎉🎉 Let's celebrate 🥳👍🏽 — see you at 🍕 tonight ❤️ 👨‍👩‍👧 ",
      "\n\n    def tokenize(self, text: str) -> list[int]:\n        ids = []\n        for word in "
      "self.split(text):\n            ids.extend(self.cache.get(word) or self.bpe(word))\n        return ids\n",
      "for (int i = 0; i < n; ++i) {\n\tif (a[i] != b[i]) return -1;  // differ\n}\n",
      "{\"name\": \"gguf\", \"version\": \"0.2.0\", \"tags\": [\"llm\", \"tokenizer\"], \"size\": 12345}\n",
      "                                        \n\n\n\t\t\t   ",
      "3.14159265358979323846264338327950288419716939937510 2.71828182845904523536 1,000,000,000 ",
      "Yes.  No!  Maybe?  (Well...)  \"Quoted\" 'single' [brackets] {braces} <angles> #hash @at $5 %20 ^_^ ",
  };
  constexpr std::size_t n = sizeof(passages) / sizeof(passages[0]);
  // Words of the passages, the first ones most often (about Zipf's law), mixed with what makes real text
  // varied: numbers, made-up names, mixed case, whole passages of code and of Asian scripts, emoji.
  std::vector<std::string> words;
  for (const char* p : passages) {
    std::string w;
    for (const char* c = p; *c; ++c) {
      if (*c == ' ' || *c == '\n' || *c == '\t') {
        if (!w.empty()) words.push_back(w);
        w.clear();
      } else {
        w += *c;
      }
    }
    if (!w.empty()) words.push_back(w);
  }
  std::string out;
  out.reserve(bytes + 512);
  std::uint64_t x = 0x243F6A8885A308D3ull;
  const auto next = [&x] {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
  };
  while (out.size() < bytes) {
    const std::uint64_t r = next() % 100;
    if (r < 8) {  // a whole passage: code, JSON, CJK, whitespace runs
      out += passages[next() % n];
      continue;
    }
    const std::size_t sentence = 4 + next() % 16;
    for (std::size_t i = 0; i < sentence; ++i) {
      const std::uint64_t k = next() % 100;
      if (k < 5) {
        out += std::to_string(next() % 10000000);
      } else if (k < 10) {
        const std::size_t len = 3 + next() % 8;
        for (std::size_t j = 0; j < len; ++j)
          out += static_cast<char>((j == 0 && next() % 2 ? 'A' : 'a') + next() % 26);
      } else {
        // rank ~ words.size()^u: the first words far more often than the last
        const double u = static_cast<double>(next() % 1000) / 1000.0;
        std::size_t rank = static_cast<std::size_t>(std::pow(static_cast<double>(words.size()), u)) - 1;
        if (rank >= words.size()) rank = words.size() - 1;
        std::string w = words[rank];
        if (k < 13 && !w.empty() && w[0] >= 'a' && w[0] <= 'z') w[0] = static_cast<char>(w[0] - 'a' + 'A');
        out += w;
      }
      out += ' ';
    }
    if (next() % 4 == 0) out += '\n';
  }
  // end on a whole character
  out.resize(bytes);
  while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
  if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
  return out;
}

}  // namespace bench

#endif  // GGUF_BENCH_TOKENIZE_CORPUS_HPP
