// tokenize_batch MODEL TEXTS: the library's side of tests/oracle/tokenizer_agreement.py. TEXTS holds one
// text a line, hex-encoded (any bytes). For each text one JSON line: the ids for add_special and
// parse_special in the order (1,0) (0,0) (1,1) (0,1), then the hex bytes of decode() of the first list
// with (remove_special, unparse_special) = (0,0) (1,0) (0,1) (1,1). A tokenizer that cannot be built
// prints {"error": "..."} and exits 1 (the oracle's refusals are compared with these).
#include <gguf/open.hpp>
#include <gguf/tokenizer.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string unhex(const std::string& s) {
  std::string out;
  const auto nib = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  for (std::size_t i = 0; i + 1 < s.size(); i += 2) out += static_cast<char>(nib(s[i]) * 16 + nib(s[i + 1]));
  return out;
}

std::string hex(const std::string& s) {
  static constexpr char d[] = "0123456789abcdef";
  std::string out;
  for (const char c : s) {
    out += d[static_cast<unsigned char>(c) >> 4];
    out += d[static_cast<unsigned char>(c) & 15];
  }
  return out;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: tokenize_batch MODEL TEXTS\n");
    return 2;
  }
  auto f = gguf::open(argv[1]);
  if (!f) {
    std::printf("{\"error\": \"%s\"}\n", json_escape(gguf::to_string(f.error())).c_str());
    return 1;
  }
  auto tok = gguf::tokenizer::from(*f, {std::max(1u, std::thread::hardware_concurrency())});
  if (!tok) {
    std::printf("{\"error\": \"%s\"}\n", json_escape(gguf::to_string(tok.error())).c_str());
    return 1;
  }
  std::ifstream in(argv[2]);
  std::string line;
  std::string out;
  while (std::getline(in, line)) {
    const std::string text = unhex(line);
    out = "{\"t\":[";
    std::vector<gguf::token_id> first;
    const bool flags[4][2] = {{true, false}, {false, false}, {true, true}, {false, true}};
    for (int k = 0; k < 4; ++k) {
      const auto ids = tok->encode(text, {flags[k][0], flags[k][1]});
      if (!ids) {  // where llama.cpp aborts (an SPM vocabulary without a byte token): the error, quoted
        out += k ? ",\"" : "\"";
        out += json_escape(gguf::to_string(ids.error()));
        out += '"';
        continue;
      }
      if (k == 0) first = *ids;
      out += k ? ",[" : "[";
      for (std::size_t i = 0; i < ids->size(); ++i) {
        if (i) out += ',';
        out += std::to_string((*ids)[i]);
      }
      out += ']';
    }
    out += "],\"d\":[";
    const bool dflags[4][2] = {{false, false}, {true, false}, {false, true}, {true, true}};
    for (int k = 0; k < 4; ++k) {
      const auto s = tok->decode(first, {dflags[k][0], dflags[k][1]});
      out += k ? ",\"" : "\"";
      out += s ? hex(*s) : "error";
      out += '"';
    }
    out += "]}\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return 0;
}
