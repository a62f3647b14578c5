// The verdict a user acts on, and the confident wrong answers it gave before the planning core
// (issue #10): each test names the defect it pins. Figures are computed by hand in the comments.

#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run_binary.h"
#include "support/temp_dir.h"

using kvplan::testing::check_refused;
using kvplan::testing::ProcessResult;
using kvplan::testing::run_kvplan;
using kvplan::testing::TempDir;

namespace {

void refused(const std::string& arguments, const std::string& expected, int code = 2) {
  INFO("kvplan " << arguments);
  check_refused(run_kvplan(arguments), expected, code);
}

nlohmann::json json_of(const std::string& arguments, int expected_code = 0) {
  const ProcessResult result = run_kvplan(arguments + " --format json");
  INFO("kvplan " << arguments << "\n" << result.err);
  REQUIRE(result.exit_code == expected_code);
  return nlohmann::json::parse(result.out);
}

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

/// A config.json of a model_type no counter knows, with plain attention kvplan can size, and the
/// checkpoint's size beside it: 64 GB of bf16 weights.
void write_unknown_type(const TempDir& dir) {
  write(dir.file("config.json"), R"({"model_type": "mystery", "num_hidden_layers": 32, "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 32768,
    "vocab_size": 32000, "torch_dtype": "bfloat16"})");
  write(dir.file("model.safetensors.index.json"), R"({"metadata": {"total_size": 64000000000}, "weight_map": {}})");
}

}  // namespace

TEST_CASE("defect 1: a memory size without a unit is an error, never bytes", "[verdict]") {
  // Before: --gpu 24 was a 24-byte card (so --check said "no fit"), --overhead 2 two bytes.
  refused("--model llama3.1-8b --gpu 24 --check", "'24' is a number without a unit");
  refused("--model llama3.1-8b --gpu 4090 --overhead 2", "--overhead: '2' has no unit");
  refused("--runtime vllm --model llama3.1-8b --gpu h100 --kv-cache-memory 20", "--kv-cache-memory: '20' has no unit");
  // A bare number that looks like a card names the closest cards.
  refused("--model llama3.1-8b --gpu 5050", "not a GPU in the catalog (did you mean: rtx5090, rtx5080, rtx5070?)");
  // A card the catalog lacks: the way forward is its memory.
  refused("--model llama3.1-8b --gpu 4080ti", "or give its memory, e.g. 16GiB");
  // "all" is not a typo of l4 or a10.
  const ProcessResult all = run_kvplan("--model llama3.1-8b --gpu all");
  CHECK(all.exit_code == 2);
  CHECK_THAT(all.err, !Catch::Contains("l4") && !Catch::Contains("a10") && Catch::Contains("not in the catalog"));
  // 0 is 0 in every unit.
  CHECK(run_kvplan("--model llama3.1-8b --gpu 4090 --overhead 0").exit_code == 0);
}

TEST_CASE("defect 1: an ambiguous card name plans for the smallest card it can mean, and says so", "[verdict]") {
  // a100 is the 40 GB and the 80 GB card; planning for 80 would promise memory a 40 GB user lacks.
  const nlohmann::json doc = json_of("--model llama3.1-8b --gpu a100 --ctx 8k --kv-dtype fp16");
  CHECK(doc["gpu"]["id"] == "a100-40g");
  CHECK(doc["gpu"]["memory_bytes"] == 42'949'672'960ull);  // 40,960 MiB
  REQUIRE(doc["settings"]["notes"].size() == 1);
  CHECK_THAT(doc["settings"]["notes"][0].get<std::string>(),
             Catch::Contains("a100-40g (40.00 GiB)") && Catch::Contains("a100-80g (80.00 GiB)"));
  CHECK(doc["rows"][0]["warnings"][0]["code"] == "gpu_ambiguous");
  // A card's own id is not ambiguous.
  CHECK(json_of("--model llama3.1-8b --gpu a100-80g --ctx 8k")["settings"]["notes"].empty());
  CHECK(json_of("--model llama3.1-8b --gpu h100 --ctx 8k")["settings"]["notes"].empty());
}

TEST_CASE("defect 2: unknown parameters are never priced as zero", "[verdict]") {
  TempDir dir;
  write_unknown_type(dir);
  const std::string model = "--model " + dir.file("config.json") + " --gpu h100 --ctx 8k --kv-dtype fp16";
  // Its own dtype: the checkpoint's exact size.
  const nlohmann::json own = json_of(model);
  CHECK(own["rows"][0]["weights_bytes"] == 64'000'000'000ull);
  // fp8: the checkpoint scaled by 1 B / 2 B, labelled an estimate (before: 0 bytes and "fits").
  const nlohmann::json fp8 = json_of(model + " --weight-dtype fp8");
  CHECK(fp8["rows"][0]["weights_bytes"] == 32'000'000'000ull);
  CHECK_THAT(fp8["rows"][0]["weights_rule"].get<std::string>(), Catch::StartsWith("estimate: "));
  CHECK(fp8["rows"][0]["warnings"][0]["code"] == "estimate");
  // The table says the count is unknown, not "0 params".
  CHECK_THAT(run_kvplan(model).out, Catch::Contains("unknown (not counted) params"));
  // The way out of a row that does not fit is the scaled checkpoint, not 4.75 GiB.
  const nlohmann::json tight = json_of("--model " + dir.file("config.json") + " --gpu 48GiB --ctx 8k --kv-dtype fp16");
  CHECK(tight["ways_out"][0]["fp8_weights"]["weights_bytes"] == 32'000'000'000ull);
  // Neither a count nor a size: exit 3 naming the three ways forward.
  std::remove(dir.file("model.safetensors.index.json").c_str());
  refused(model, "model_type = mystery", 3);
  // --params and --weights are two of them.
  const nlohmann::json given = json_of(model + " --params 7.5B");
  CHECK(given["rows"][0]["weights_bytes"] == 15'000'000'000ull);  // 7.5e9 x 2 B
  CHECK_THAT(given["rows"][0]["weights_rule"].get<std::string>(), Catch::Contains("--params 7.5B, given"));
  const nlohmann::json sized = json_of(model + " --weights 60GB");
  CHECK(sized["rows"][0]["weights_bytes"] == 60'000'000'000ull);
  CHECK_THAT(sized["rows"][0]["weights_rule"].get<std::string>(), Catch::Contains("given"));
}

TEST_CASE("a quantization format kvplan does not price leaves the weights to --weights", "[verdict]") {
  // A bitsandbytes 4-bit checkpoint of a known architecture: the cache is understood, the bytes
  // per parameter are not. Before: exit 3 naming quant_method even with --weights given.
  TempDir dir;
  write(dir.file("config.json"), R"({"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "max_position_embeddings": 131072,
    "vocab_size": 128256, "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "nf4",
                            "bnb_4bit_use_double_quant": true}})");
  // An index beside it is what the files hold, not what vLLM makes of them: not a way forward.
  write(dir.file("model.safetensors.index.json"), R"({"metadata": {"total_size": 5700000000}, "weight_map": {}})");
  const std::string model = "--model " + dir.file("config.json") + " --gpu 4090 --ctx 8k --kv-dtype fp16";
  refused(model, "8.03B params counted, in a format kvplan does not price (quantization_config.quant_method = "
                 "bitsandbytes)); give their size (--weights SIZE", 3);
  CHECK_THAT(run_kvplan(model + " --weights 6GB").out, Catch::Contains("unknown (not priced) params"));
  const nlohmann::json sized = json_of(model + " --weights 6GB");
  CHECK(sized["rows"][0]["weights_bytes"] == 6'000'000'000ull);
  CHECK(sized["rows"][0]["kv_bytes_per_token"] == 131'072ull);  // 2 x 32 x 8 x 128 x 2 B
  CHECK(sized["rows"][0]["verdict"] == "fits");
}

TEST_CASE("defect 3: vLLM's --kv-cache-memory pool is memory too", "[verdict][vllm]") {
  // Llama 3.1 8B on a 4090: 14.96 GiB of weights + a 30 GiB pool > 23.99 GiB. Before: "fits", exit 0.
  const std::string args = "--runtime vllm --model llama3.1-8b --gpu 4090 --max-model-len 8k --kv-cache-memory 30GiB";
  const ProcessResult check = run_kvplan(args + " --check");
  CHECK(check.exit_code == 1);
  const nlohmann::json doc = json_of(args);
  const nlohmann::json& row = doc["rows"][0];
  CHECK(row["kv_pool_bytes"] == 30 * 1024ull * 1024 * 1024);
  CHECK(row["verdict"] == "does_not_fit");
  // total = weights + the pool (it is allocated whole) + vLLM's own memory, against the card.
  CHECK(row["total_bytes"].get<std::uint64_t>() ==
        row["weights_bytes"].get<std::uint64_t>() + 30 * 1024ull * 1024 * 1024 + row["overhead_bytes"].get<std::uint64_t>());
  CHECK(row["capacity_bytes"] == 25'757'220'864ull);
  // A pool that holds the requests and leaves the card room fits: 4 GiB.
  CHECK(run_kvplan("--runtime vllm --model llama3.1-8b --gpu 4090 --max-model-len 8k --kv-cache-memory 4GiB --check")
            .exit_code == 0);
}

TEST_CASE("defect 4: vLLM refuses a max_model_len beyond the trained context, and every format says so", "[verdict][vllm]") {
  // Qwen3-8B is trained for 40,960 tokens; vLLM refuses 131,072 without VLLM_ALLOW_LONG_MAX_MODEL_LEN.
  const std::string args = "--runtime vllm --model qwen3-8b --gpu h100 --max-model-len 128k";
  CHECK(run_kvplan(args + " --check").exit_code == 1);
  const nlohmann::json doc = json_of(args);
  const nlohmann::json& row = doc["rows"][0];
  CHECK(row["verdict"] == "engine_refuses");
  CHECK_FALSE(row["fits"].get<bool>());
  CHECK(row["warnings"][0]["code"] == "beyond_trained_context");
  CHECK(row["warnings"][0]["blocking"] == true);
  CHECK(row["warnings"][1]["code"] == "engine_refuses_start");
  const ProcessResult csv = run_kvplan(args + " --format csv");
  CHECK_THAT(csv.out, Catch::Contains("engine_refuses") && Catch::Contains("beyond_trained_context;engine_refuses_start"));
  // The environment variable (or the flag) makes it a warning: vLLM then starts, and 131,072
  // tokens of 144 KiB (18 GiB) fit an H100 beside 15.26 GiB of weights.
  const ProcessResult allowed = run_kvplan(args + " --format json --check", "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1");
  INFO(allowed.err);
  CHECK(allowed.exit_code == 0);
  const nlohmann::json warned = nlohmann::json::parse(allowed.out)["rows"][0];
  CHECK(warned["verdict"] == "fits");
  CHECK(warned["warnings"][0]["code"] == "beyond_trained_context");
  CHECK(warned["warnings"][0]["blocking"] == false);
  CHECK(json_of(args + " --allow-long-max-model-len")["rows"][0]["verdict"] == "fits");
  // The generic profile warns but does not block: it describes no engine's refusal.
  const nlohmann::json generic = json_of("--model qwen3-8b --gpu h100 --ctx 128k --kv-dtype fp16");
  CHECK(generic["rows"][0]["warnings"][0]["code"] == "beyond_trained_context");
  CHECK(generic["rows"][0]["warnings"][0]["blocking"] == false);
}

TEST_CASE("defect 5: llama.cpp's output buffer uses the catalog's vocabulary", "[verdict][llamacpp]") {
  // Qwen3-8B: 151,936 logits x 4 B x 1 sequence = 607,744 B = 0.58 MiB. Before: "unknown".
  const ProcessResult text = run_kvplan("--runtime llama.cpp --model qwen3-8b --gpu 4090 -c 8192");
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("output buffer: 0.58 MiB (host)"));
  const nlohmann::json doc = json_of("--runtime llama.cpp --model qwen3-8b --gpu 4090 -c 8192");
  CHECK(doc["llamacpp"]["rows"][0]["output_buffer_bytes"] == 607'744);
}

TEST_CASE("usage: no arguments, unknown flags, bad formats, subcommand help", "[verdict][cli]") {
  const ProcessResult none = run_kvplan("");
  CHECK(none.exit_code == 2);
  CHECK(none.out.empty());
  CHECK_THAT(none.err, Catch::StartsWith("usage: kvplan --model"));
  // The first unknown flag, in the order typed, with the closest one.
  refused("--model llama3.1-8b --kv-dtpye fp8 --gpuu 4090", "--kv-dtpye: unknown flag (did you mean --kv-dtype?)");
  refused("--model llama3.1-8b --gpu 4090 --format yaml", "(one of table, json, csv, markdown)");
  // A subcommand's --help shows its own examples only.
  const ProcessResult models_help = run_kvplan("models --help");
  CHECK(models_help.exit_code == 0);
  CHECK_THAT(models_help.out, Catch::Contains("kvplan models qwen") && !Catch::Contains("--runtime vllm"));
  // kvplan models WORD filters the catalog.
  const ProcessResult qwen = run_kvplan("models qwen3-8");
  CHECK(qwen.exit_code == 0);
  CHECK_THAT(qwen.out, Catch::Contains("qwen3-8b") && !Catch::Contains("llama3.1-8b"));
  refused("models nosuchmodel", "no catalog model mentions 'nosuchmodel'");
}

TEST_CASE("the table fits a 100-column terminal", "[verdict][cli]") {
  // Piped, the table rows alone must fit; every longer line is a header or rule line, which the
  // terminal run (tests/cli_color_test.cpp) wraps.
  for (const std::string args : {"--model llama3.1-8b --ctx 32k,64k,128k --gpu 4090",
                                 "--model gemma3-27b --ctx 128k --gpu h100 --kv-dtype fp8_e5m2,q4_0",
                                 "--runtime vllm --model qwen3-8b --gpu h100"}) {
    const ProcessResult result = run_kvplan(args);
    REQUIRE(result.exit_code == 0);
    std::size_t start = result.out.find("ctx  KV dtype");
    REQUIRE(start != std::string::npos);
    start = result.out.rfind('\n', start);
    const std::size_t end = result.out.find("\n\n", start + 1);
    const std::string table = result.out.substr(start + 1, end - start - 1);
    std::size_t line_start = 0;
    while (line_start < table.size()) {
      const std::size_t line_end = std::min(table.find('\n', line_start), table.size());
      const std::string line = table.substr(line_start, line_end - line_start);
      // Bytes, less two for each emoji (three bytes, two columns) and each box glyph.
      std::size_t columns = 0;
      for (std::size_t i = 0; i < line.size(); ++i)
        if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) ++columns;
      INFO(line);
      CHECK(columns <= 100);
      line_start = line_end + 1;
    }
  }
}
