// The texts gguf-bench tokenizes per script family (issue 49): one category per kind of text a tokenizer
// meets, each made of this file's own passages (written for it, no text is taken from elsewhere), drawn
// into sentences the way bench/tokenize_corpus.hpp draws them (words about as often as Zipf's law has
// them, one word in twelve a number or a made-up word of the script, whole passages between). A seeded
// generator: the same bytes every run and machine. `mix` interleaves paragraphs of every category.
#ifndef GGUF_BENCH_TOKENIZE_SCRIPTS_HPP
#define GGUF_BENCH_TOKENIZE_SCRIPTS_HPP

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bench {

/// One kind of text: its name in the benchmark, its passages, and how it draws made-up words.
struct script_category {
  std::string_view name;
  std::vector<std::string_view> passages;
  /// Code points a made-up word is drawn from (first, count), or {0, 0} for none.
  char32_t invent_first = 0;
  char32_t invent_count = 0;
  /// Whether words are separated by spaces (Thai, Chinese and Japanese: no).
  bool spaced = true;
};

inline const std::vector<script_category>& script_categories() {
  static const std::vector<script_category> c = {
      {"latin",
       {"Żółta łódź płynęła wolno po jeziorze, a rybacy śpiewali pieśni o dawnych czasach. ",
        "Příliš žluťoučký kůň úpěl ďábelské ódy, když večerní slunce zapadalo za kopce. ",
        "Tiếng Việt có sáu thanh điệu; người học thường thấy khó nhất là dấu hỏi và dấu ngã. ",
        "À l'été, les élèves français révisent leurs leçons près de la fenêtre ouverte. ",
        "Ärger über Straßenbahnverspätungen gehört in München zum Alltag, meinte der Fahrgast. ",
        "Kış geldiğinde dağ köylerinde yaşayanlar odunlarını önceden hazırlamış olurlar. ",
        "Ó maior açúcar não adoça a tristeza de quem perdeu o último comboio para o Porto. ",
        "Håkon og Øystein gikk på ski over vidda før de nådde hytta ved fjorden. "},
       0xC0,
       0x17F - 0xC0},
      {"cyrillic",
       {"Вечером в деревне зажглись огни, и старики рассказывали детям сказки о далёких краях. ",
        "Съешь же ещё этих мягких французских булок да выпей чаю, сказал хозяин гостю. ",
        "Україна має багату історію, а її мова звучить мелодійно й лагідно для кожного. ",
        "Българският език използва кирилица от векове и пази много стари думи. ",
        "Науковці вивчають, як мови змінюються з плином часу та під впливом сусідів. "},
       0x430,
       32},
      {"greek",
       {"Η γλώσσα μου έδωσαν ελληνική· το σπίτι φτωχικό στις αμμουδιές του Ομήρου. ",
        "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία, είπε ο ποιητής καθώς έπεφτε το σούρουπο. ",
        "Οι μαθητές διάβαζαν για τις αρχαίες πόλεις και τους φιλοσόφους που δίδαξαν εκεί. ",
        "Τὸ μὲν γὰρ ὅλον ἐστὶ πρότερον τοῦ μέρους, ἔλεγον οἱ παλαιοὶ σοφοί. "},
       0x3B1,
       25},
      {"arabic",
       {"في المساء جلس الأصدقاء في المقهى يتحدثون عن الكتب التي قرأوها هذا العام. ",
        "اللغة العربية غنية بالمفردات، وتُكتب من اليمين إلى اليسار بحروف متصلة. ",
        "تعلّمَ الطالبُ دروسَهُ بجدٍّ واجتهادٍ حتى نجحَ في الامتحانِ النهائيِّ. ",
        "زار المسافرون المدينة القديمة وشاهدوا الأسواق والمساجد والحدائق الجميلة. "},
       0x628,
       26},
      {"hebrew",
       {"בבוקר הלכו הילדים לבית הספר, והמורה סיפרה להם על ההיסטוריה של העיר העתיקה. ",
        "השפה העברית נכתבת מימין לשמאל, ולעיתים קרובות בלי ניקוד בכלל. ",
        "בְּרֵאשִׁית הָיָה הַדָּבָר, וְהַדָּבָר הָיָה טוֹב וְנָעִים לַשּׁוֹמְעִים. ",
        "החוקרים בדקו את הנתונים שוב ושוב לפני שפרסמו את המסקנות שלהם. "},
       0x5D0,
       27},
      {"indic",
       {"भारत एक विशाल देश है जहाँ अनेक भाषाएँ बोली जाती हैं और हर क्षेत्र की अपनी संस्कृति है। ",
        "विद्यार्थियों ने पुस्तकालय में बैठकर इतिहास और विज्ञान की किताबें पढ़ीं। ",
        "আমি বাংলায় গান গাই, আমার প্রাণের কথা বলি নদীর ধারে বসে। ",
        "தமிழ் மொழி மிகவும் பழமையான மொழிகளில் ஒன்றாகும், அதன் இலக்கியம் செழுமையானது. ",
        "ఆకాశంలో మేఘాలు కమ్ముకున్నాయి, వర్షం వచ్చేలా ఉంది అని రైతులు సంతోషించారు. ",
        "ಕನ್ನಡ ಸಾಹಿತ್ಯಕ್ಕೆ ಸಾವಿರ ವರ್ಷಗಳ ಇತಿಹಾಸವಿದೆ ಎಂದು ಗುರುಗಳು ಹೇಳಿದರು. "},
       0x915,
       37},
      {"thai",
       {"ภาษาไทยเป็นภาษาที่มีวรรณยุกต์และเขียนติดกันโดยไม่เว้นวรรคระหว่างคำ",
        "เมื่อวานนี้ฉันไปตลาดกับแม่เพื่อซื้อผักผลไม้และปลาสดสำหรับทำอาหารเย็น ",
        "นักเรียนทุกคนตั้งใจเรียนหนังสือเพราะอยากสอบเข้ามหาวิทยาลัยที่มีชื่อเสียง ",
        "ฝนตกหนักตลอดทั้งคืนทำให้ถนนหลายสายในกรุงเทพมหานครมีน้ำท่วมขัง "},
       0xE01,
       46,
       false},
      {"cjk",
       {"人工智能正在改变我们的生活方式，从医疗诊断到自动驾驶，新的应用层出不穷。",
        "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。",
        "東京の朝は電車が混雑していて、会社員たちは静かにスマートフォンを見ている。",
        "今日はとても良い天気なので、公園で友達とお弁当を食べました。カタカナのテキストもあります。",
        "這是一個繁體中文的句子，用來測試分詞器對不同字形的處理能力。",
        "研究者们在实验室里反复验证数据，直到结果完全一致为止。"},
       0x4E00,
       0x9FA5 - 0x4E00,
       false},
      {"hangul",
       {"한국어는 한글로 쓰며, 한글은 세종대왕이 백성을 위해 만든 글자입니다. ",
        "오늘 아침에 친구와 함께 공원에서 산책을 하고 커피를 마셨어요. ",
        "학생들은 도서관에서 시험 공부를 열심히 하고 있었습니다. ",
        "서울의 밤거리는 화려한 불빛과 사람들로 가득 차 있었다. "},
       0xAC00,
       0xD7A3 - 0xAC00},
      {"emoji",
       {"🎉🎉🎉 ", "👨‍👩‍👧‍👦 ", "👩🏽‍💻👨🏿‍🚀🧑🏻‍🍳 ", "🇺🇸🇯🇵🇫🇷🇩🇪🇧🇷 ",
        "❤️‍🔥 ", "🏳️‍🌈 ", "😀😃😄😁😆😅🤣😂 ", "👍🏽👍🏿👍🏻 ",
        "🐶🐱🐭🐹🐰🦊🐻🐼 ", "✨🌟⭐️💫 ", "🙏 ", "1️⃣2️⃣3️⃣ ", "great 🚀 launch ",
        "ok 👌 "},
       0x1F600,
       80},
      {"combining",
       {"Ṫ̈ḧë̈ q̃ũĩc̃k̃ b̌řǒw̌ň f̂ôx̂ ",  // letters with several combining marks (decomposed)
        "Z͑ͫ̓ͪ̂ͫ̽͏̴̙̤̞͉͚̯̞̠͍A̴̵̜̰͔ͫ͗͢L̠ͨͧͩ͘G̴̻͈͍͔̹̑͗̎̅͛́Ǫ̵̹̻̝̳͂̌̌͘"
        " ",  // "zalgo": long runs of marks
        "Cafe\xCC\x81 na\xCC\x88ive re\xCC\x81sume\xCC\x81 fac\xCC\xA7"
        "ade ",  // NFD Latin
        "e\xCC\x81\xCC\x81\xCC\x81 a\xCC\x8A\xCC\x8A o\xCC\x83\xCC\x84\xCC\x86 ",
        "ᄒ\xE1\x85\xA1ᆫ\xE1\x84\x80\xE1\x85\xB3ᆯ ",  // Hangul in conjoining jamo
        "क्‍ष त्र ज्ञ श्र ",  // Devanagari conjuncts with virama and ZWJ
        "\xE0\xB8\x81\xE0\xB9\x88\xE0\xB8\xB1 "},
       0x300,
       0x36F - 0x300},
      {"code",
       {"#include <vector>\n\ntemplate <typename T>\nstd::vector<T> take(const std::vector<T>& v, size_t n) {\n"
        "  return {v.begin(), v.begin() + std::min(n, v.size())};\n}\n",
        "def merge(a: list[int], b: list[int]) -> list[int]:\n    out = []\n    i = j = 0\n    while i < len(a) "
        "and j < len(b):\n        if a[i] <= b[j]:\n            out.append(a[i]); i += 1\n        else:\n"
        "            out.append(b[j]); j += 1\n    return out + a[i:] + b[j:]\n",
        "fn main() {\n    let xs: Vec<u32> = (0..10).map(|x| x * x).collect();\n    println!(\"{:?}\", xs);\n}\n",
        "const fetchJson = async (url) => {\n\tconst res = await fetch(url, { headers: { Accept: "
        "'application/json' } });\n\tif (!res.ok) throw new Error(`HTTP ${res.status}`);\n\treturn res.json();\n};\n",
        "SELECT u.id, COUNT(o.id) AS orders FROM users u LEFT JOIN orders o ON o.user_id = u.id\n"
        "WHERE u.created_at >= '2024-01-01' GROUP BY u.id HAVING COUNT(o.id) > 3;\n",
        "<div class=\"card\"><h2>{{ title }}</h2><p>{{ body | safe }}</p></div>\n",
        "{\"model\": \"llama\", \"layers\": 32, \"heads\": [8, 8, 8], \"rope\": {\"theta\": 500000.0}}\n"},
       0,
       0},
      {"numbers",
       {"3.14159265358979323846264338327950288419716939937510582097494459 ",
        "1,234,567.89 2024-11-29 12:34:56 +49 (0)30 1234567 ", "0x7FFFFFFF 0b101010 1e-9 6.022e23 -273.15 ",
        "١٢٣٤٥٦٧٨٩٠ ०१२३४५६७८९ ๑๒๓๔๕ ",  // Arabic-Indic, Devanagari and Thai digits
        "1234567890123456789012345678901234567890 ", "Order 88213 shipped 14 items at $1,299.00 on 3/7/2025. "},
       U'0',
       10},
      {"whitespace",
       {"\n\n\n\n", "        ", "\t\t\t\t", "    \n    \n", "\r\n\r\n", " \n \n \n", "\u00A0\u00A0\u3000 ",
        "                                                                \n", "a  b   c    d     e      f\n",
        "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n"},
       0,
       0,
       false},
  };
  return c;
}

namespace detail {

inline void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

struct rng {
  std::uint64_t x;
  std::uint64_t operator()() {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
  }
};

// Words of unspaced scripts: pieces of 1-6 code points cut from the passages.
inline std::vector<std::string> words_of(const script_category& c) {
  std::vector<std::string> words;
  for (std::string_view p : c.passages) {
    if (c.spaced) {
      std::string w;
      for (char ch : p) {
        if (ch == ' ' || ch == '\n' || ch == '\t') {
          if (!w.empty()) words.push_back(w);
          w.clear();
        } else {
          w += ch;
        }
      }
      if (!w.empty()) words.push_back(w);
      continue;
    }
    std::size_t i = 0, k = 0;
    std::string w;
    while (i < p.size()) {
      std::size_t len = 1;
      const auto b = static_cast<unsigned char>(p[i]);
      if (b >= 0xF0)
        len = 4;
      else if (b >= 0xE0)
        len = 3;
      else if (b >= 0xC0)
        len = 2;
      w.append(p.substr(i, len));
      i += len;
      if (++k == 1 + (i * 7 + w.size()) % 6) {
        words.push_back(w);
        w.clear();
        k = 0;
      }
    }
    if (!w.empty()) words.push_back(w);
  }
  return words;
}

inline void draw_paragraph(std::string& out, const script_category& c, const std::vector<std::string>& words,
                           rng& next) {
  if (next() % 100 < 10) {  // a whole passage
    out += c.passages[next() % c.passages.size()];
    return;
  }
  const std::size_t sentence = 4 + next() % 16;
  for (std::size_t i = 0; i < sentence; ++i) {
    const std::uint64_t k = next() % 100;
    if (k < 4 && c.invent_count) {  // a word never seen before
      const std::size_t len = 2 + next() % 6;
      for (std::size_t j = 0; j < len; ++j)
        append_utf8(out, c.invent_first + static_cast<char32_t>(next() % c.invent_count));
    } else if (k < 8) {
      out += std::to_string(next() % 100000);
    } else {
      const double u = static_cast<double>(next() % 1000) / 1000.0;
      std::size_t rank = static_cast<std::size_t>(std::pow(static_cast<double>(words.size()), u)) - 1;
      if (rank >= words.size()) rank = words.size() - 1;
      out += words[rank];
    }
    if (c.spaced || next() % 8 == 0) out += ' ';
  }
  if (next() % 4 == 0) out += '\n';
}

inline void end_on_character(std::string& out, std::size_t bytes) {
  out.resize(bytes);
  while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
  if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
}

}  // namespace detail

/// The names of the categories, `mix` last.
inline std::vector<std::string_view> script_category_names() {
  std::vector<std::string_view> n;
  for (const auto& c : script_categories()) n.push_back(c.name);
  n.push_back("mix");
  return n;
}

/// About `bytes` of the category `name` (a name of script_category_names()), ending on a whole code point;
/// empty for an unknown name.
inline std::string script_text(std::string_view name, std::size_t bytes) {
  const auto& cats = script_categories();
  std::string out;
  out.reserve(bytes + 1024);
  std::uint64_t seed = 0xcbf29ce484222325ull;  // FNV-1a of the name: the same on every standard library
  for (char ch : name) seed = (seed ^ static_cast<unsigned char>(ch)) * 0x100000001b3ull;
  detail::rng next{seed | 1};
  if (name == "mix") {
    std::vector<std::vector<std::string>> words;
    for (const auto& c : cats) words.push_back(detail::words_of(c));
    while (out.size() < bytes) {
      const std::size_t i = next() % cats.size();
      for (int p = 0; p < 3; ++p) detail::draw_paragraph(out, cats[i], words[i], next);
    }
  } else {
    for (const auto& c : cats) {
      if (c.name != name) continue;
      const auto words = detail::words_of(c);
      while (out.size() < bytes) detail::draw_paragraph(out, c, words, next);
    }
  }
  detail::end_on_character(out, bytes);
  return out;
}

}  // namespace bench

#endif  // GGUF_BENCH_TOKENIZE_SCRIPTS_HPP
