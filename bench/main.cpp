// gguf-bench's main: --help and --version as every gguf tool answers them, then google-benchmark.
#include <benchmark/benchmark.h>
#include <gguf/version.hpp>

#include <cstdio>
#include <cstring>

namespace {

constexpr const char* help =
    "usage: gguf-bench [google-benchmark options: --benchmark_filter=REGEX --benchmark_repetitions=N\n"
    "                  --benchmark_min_time=S --benchmark_format=json --benchmark_out=FILE ...]\n"
    "\n"
    "Times the library against anchors measured in the same run, single-threaded unless a name says\n"
    "otherwise (this machine's absolute speed moves from day to day: compare ratios, not times).\n"
    "\n"
    "  parse, parse_mapped, parse_prefix, read_header, open_split/<n>\n"
    "                          gguf::open and the parsers on GGUF_BENCH_PARSE_FILE\n"
    "  dequant/<type>/<n>      n weights of a ggml type (ggml's lower-case names: q4_K, iq2_xs, bf16) to\n"
    "                          float; dequant_f16/, dequant_bf16/ to half outputs\n"
    "  quantize/<type>/<n>     n floats to blocks (quantize_imatrix/ with importance weights)\n"
    "  memset/<n>, memcpy/<n>, fill_nt/<n>, traffic/<type>/<n>\n"
    "                          the ceilings: the same 4n output bytes written by memset, copied, streamed,\n"
    "                          or the type's own input read and output written with nothing computed\n"
    "  ggml/<type>/<n>, ggml_quantize/<type>/<n>\n"
    "                          ggml's own code on the same input (when a ggml library is found)\n"
    "  edit/...                gguf::save and save_in_place against cp\n"
    "  tokenize/<vocab>, tokenize/<vocab>/llama.cpp, tokenizer_build/<vocab>[/threads:2]\n"
    "                          gguf::tokenizer::encode of 1 MiB of mixed text, llama.cpp's llama_tokenize\n"
    "                          of the same text (when the oracle's libllama is found), building a tokenizer\n"
    "                          on one thread (on two)\n"
    "\n"
    "Environment:\n"
    "  GGUF_BENCH_PARSE_FILE   the file the parse benchmarks read (default: a reduced vocabulary of\n"
    "                          tests/data, labelled as such)\n"
    "  GGUF_BENCH_GGML         a ggml shared library for the ggml/ anchors (default: the oracle's, under\n"
    "                          GGUF_ORACLE_HOME or ~/.cache/gguf-oracle; bench/build_ggml_native.sh builds one)\n"
    "  GGUF_BENCH_EDIT_DIR     where edit/ writes its files (default: the current directory)\n"
    "  GGUF_BENCH_VOCAB_DIR    the vocabularies tokenize/ reads (default: ../shared/data/vocab beside the\n"
    "                          checkout, else the reduced copies in tests/data/vocab, labelled as such)\n"
    "\n"
    "Every google-benchmark option: gguf-bench --benchmark_help. Reports: bench/report.py.\n"
    "\n"
    "Exit status: 0 success; 1 a benchmark that could not run; 2 usage errors.\n";

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(help, stdout);
      return 0;
    }
    if (std::strcmp(argv[i], "--version") == 0) {
      std::printf("gguf-bench %d.%d.%d (gguf library %d.%d.%d)\n", GGUF_VERSION_MAJOR, GGUF_VERSION_MINOR,
                  GGUF_VERSION_PATCH, GGUF_VERSION_MAJOR, GGUF_VERSION_MINOR, GGUF_VERSION_PATCH);
      return 0;
    }
    if (std::strcmp(argv[i], "--benchmark_help") == 0) argv[i] = const_cast<char*>("--help");
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    std::fputs("(gguf-bench --help for more)\n", stderr);
    return 2;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
