// GGUF header reading: time and peak memory for a Qwen2.5-7B-shaped file with its real 152,064-token
// vocabulary (tokens, scores, token types and 151,387 merges in the header), once as a small file
// (tiny tensors) and once as a large one (the real tensor shapes at q8_0: ~8 GB, written sparse).
// The header is the same size in both, so the reader's time and memory must not change with the
// file size. A benchmark prints figures; it never passes or fails.
//
// Usage: kvplan_gguf_bench [--runs N] [DIR]   writes DIR/small.gguf and DIR/large.gguf (default: a
//                                             temporary directory, removed afterwards) and measures
//        kvplan_gguf_bench --write DIR        only writes the two files
//        kvplan_gguf_bench --read FILE        reads one header and exits (the child whose RSS is measured)

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "kvplan/error.h"
#include "model/ggml_type.h"
#include "loaders/gguf.h"
#include "support/gguf_writer.h"

namespace {

namespace fs = std::filesystem;
using kvplan::testing::GgufWriter;

constexpr std::uint32_t kF32 = 0;
constexpr std::uint32_t kQ8_0 = 8;
constexpr std::uint64_t kVocab = 152064;  // Qwen2.5-7B's padded vocabulary
constexpr std::uint64_t kMerges = 151387;

/// Qwen2.5-7B's header: hyper-parameters, tokenizer and tensor infos. `full_size` gives the tensors
/// their real shapes; otherwise every dimension but the vocabulary's is 32. Tensor data is not
/// written: the caller extends the file to `data_bytes` past the header (sparse).
GgufWriter qwen25_7b(bool full_size, std::uint64_t& data_bytes) {
  const std::uint64_t embd = full_size ? 3584 : 32;
  const std::uint64_t ffn = full_size ? 18944 : 32;
  const std::uint64_t kv = full_size ? 512 : 32;
  const int layers = 28;

  GgufWriter w;
  w.add_string("general.architecture", "qwen2");
  w.add_string("general.name", "Qwen2.5 7B Instruct (kvplan benchmark)");
  w.add_uint32("general.file_type", 7);  // MOSTLY_Q8_0
  w.add_uint32("qwen2.block_count", layers);
  w.add_uint32("qwen2.context_length", 32768);
  w.add_uint32("qwen2.embedding_length", static_cast<std::uint32_t>(embd));
  w.add_uint32("qwen2.feed_forward_length", static_cast<std::uint32_t>(ffn));
  w.add_uint32("qwen2.attention.head_count", 28);
  w.add_uint32("qwen2.attention.head_count_kv", 4);
  w.add_float32("qwen2.rope.freq_base", 1000000.0f);
  w.add_float32("qwen2.attention.layer_norm_rms_epsilon", 1e-6f);
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", "qwen2");
  std::vector<std::string> tokens;
  tokens.reserve(kVocab);
  for (std::uint64_t i = 0; i < kVocab; ++i) tokens.push_back("tok" + std::to_string(i * 7919 % 1000003));
  w.add_array_string("tokenizer.ggml.tokens", std::move(tokens));
  w.add_array_int32("tokenizer.ggml.token_type", std::vector<std::int32_t>(kVocab, 1));
  std::vector<std::string> merges;
  merges.reserve(kMerges);
  for (std::uint64_t i = 0; i < kMerges; ++i) merges.push_back("t" + std::to_string(i % 977) + " k" + std::to_string(i));
  w.add_array_string("tokenizer.ggml.merges", std::move(merges));
  w.add_uint32("tokenizer.ggml.eos_token_id", 151645);
  w.add_uint32("tokenizer.ggml.padding_token_id", 151643);
  w.add_string("tokenizer.chat_template", std::string(2048, 'x'));

  // Tensor infos with offsets packed as llama.cpp lays them out (each padded to 32 bytes).
  std::uint64_t offset = 0;
  const auto tensor = [&](const std::string& name, std::uint32_t type, std::vector<std::uint64_t> dims) {
    const std::uint64_t bytes = kvplan::ggml_tensor_bytes(type, dims);
    w.add_tensor_info(name, type, std::move(dims), offset);
    offset = (offset + bytes + 31) / 32 * 32;
  };
  tensor("token_embd.weight", kQ8_0, {embd, kVocab});
  for (int i = 0; i < layers; ++i) {
    const std::string blk = "blk." + std::to_string(i) + ".";
    tensor(blk + "attn_norm.weight", kF32, {embd});
    tensor(blk + "attn_q.weight", kQ8_0, {embd, embd});
    tensor(blk + "attn_q.bias", kF32, {embd});
    tensor(blk + "attn_k.weight", kQ8_0, {embd, kv});
    tensor(blk + "attn_k.bias", kF32, {kv});
    tensor(blk + "attn_v.weight", kQ8_0, {embd, kv});
    tensor(blk + "attn_v.bias", kF32, {kv});
    tensor(blk + "attn_output.weight", kQ8_0, {embd, embd});
    tensor(blk + "ffn_norm.weight", kF32, {embd});
    tensor(blk + "ffn_gate.weight", kQ8_0, {embd, ffn});
    tensor(blk + "ffn_up.weight", kQ8_0, {embd, ffn});
    tensor(blk + "ffn_down.weight", kQ8_0, {ffn, embd});
  }
  tensor("output_norm.weight", kF32, {embd});
  tensor("output.weight", kQ8_0, {embd, kVocab});
  data_bytes = offset;
  return w;
}

/// Writes the header and extends the file over the tensor data without writing it (a sparse file
/// on any ordinary file system): the reader checks the data's extent, never its contents.
void write_model(const fs::path& path, bool full_size) {
  std::uint64_t data_bytes = 0;
  const GgufWriter writer = qwen25_7b(full_size, data_bytes);
  writer.write(path.string());
  fs::resize_file(path, fs::file_size(path) + data_bytes);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct Child {
  double milliseconds = 0;
  long max_rss_kib = 0;
};

/// Runs this program again with `argument` and returns its wall time and peak RSS.
Child run_child(const char* self, const char* mode, const std::string& argument) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    execl(self, self, mode, argument.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  const auto end = std::chrono::steady_clock::now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "kvplan_gguf_bench: the child failed (status %d)\n", status);
    std::exit(2);
  }
  return {std::chrono::duration<double, std::milli>(end - start).count(), usage.ru_maxrss};
}

int measure(const char* self, const fs::path& dir, int runs) {
  std::printf("%-10s %10s %8s %9s %12s %12s %13s\n", "file", "size", "tensors", "vocab", "read median",
              "read min", "peak RSS");
  const Child baseline = run_child(self, "--read", "");
  for (const char* name : {"small.gguf", "large.gguf"}) {
    const std::string path = (dir / name).string();
    std::vector<double> times;
    kvplan::GgufHeader header;
    for (int i = 0; i < runs; ++i) {
      const auto start = std::chrono::steady_clock::now();
      header = kvplan::read_gguf_header(path);
      times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    const Child child = run_child(self, "--read", path);
    const kvplan::GgufValue* tokens = header.find("tokenizer.ggml.tokens");
    std::printf("%-10s %7.2f GB %8zu %9llu %9.2f ms %9.2f ms %9.2f MiB\n", name,
                static_cast<double>(header.file_size) / 1e9, header.tensors.size(),
                static_cast<unsigned long long>(tokens ? tokens->count : 0), median(times),
                *std::min_element(times.begin(), times.end()), static_cast<double>(child.max_rss_kib) / 1024.0);
  }
  std::printf("(peak RSS of a process that reads one header; the same process reading nothing: %.2f MiB)\n",
              static_cast<double>(baseline.max_rss_kib) / 1024.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 3 && std::strcmp(argv[1], "--read") == 0) {
      if (argv[2][0] != '\0') (void)kvplan::read_gguf_header(argv[2]);
      return 0;
    }
    if (argc == 3 && std::strcmp(argv[1], "--write") == 0) {
      fs::create_directories(argv[2]);
      write_model(fs::path(argv[2]) / "small.gguf", false);
      write_model(fs::path(argv[2]) / "large.gguf", true);
      std::printf("%s\n%s\n", (fs::path(argv[2]) / "small.gguf").c_str(), (fs::path(argv[2]) / "large.gguf").c_str());
      return 0;
    }
    int runs = 30;
    int first = 1;
    if (argc > 2 && std::strcmp(argv[1], "--runs") == 0) {
      runs = std::max(1, std::atoi(argv[2]));
      first = 3;
    }
    fs::path dir;
    bool temporary = false;
    if (first < argc) {
      dir = argv[first];
    } else {
      dir = fs::temp_directory_path() / ("kvplan-gguf-bench-" + std::to_string(getpid()));
      temporary = true;
    }
    fs::create_directories(dir);
    if (!fs::exists(dir / "small.gguf") || !fs::exists(dir / "large.gguf")) {
      write_model(dir / "small.gguf", false);
      write_model(dir / "large.gguf", true);
    }
    const int code = measure("/proc/self/exe", dir, runs);
    if (temporary) fs::remove_all(dir);
    return code;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "kvplan_gguf_bench: %s\n", error.what());
    return 2;
  }
}
