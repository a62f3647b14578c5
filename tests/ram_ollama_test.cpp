// System RAM under --runtime ollama (--ram): Ollama places the layers itself, what it cannot put
// on the GPUs runs from system RAM, and the core counts that part against the declared RAM.
// Figures by hand in the comments; the placement is the E3 buildLayout of ollama_profile_test.cpp.

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "kvplan/plan.h"
#include "kvplan/units.h"
#include "support/run_binary.h"

using kvplan::GiB;
using kvplan::MiB;

namespace {

/// 8 qwen3 blocks of 8 KV heads x 128, 9 GiB without a tensor list: llama.cpp's n_layer + 1 = 9
/// offloadable layers take 1 GiB each (the even split). At num_ctx 1,024 a layer's f16 cache is
/// 1,024 x 8 x 128 x 2 B x 2 (K, V) = 4 MiB.
kvplan::ModelSpec ram_ollama_model() {
  kvplan::ModelSpec m;
  m.id = m.name = "hand-built";
  m.architecture = "qwen3";
  m.attention_heads = 8;
  m.params = 1;
  m.weight_dtype = &kvplan::parse_weight_dtype("bf16");
  m.weights_bytes = 9 * GiB;
  m.max_context = 4096;
  for (int i = 0; i < 8; ++i) m.layers.push_back({kvplan::LayerKind::full, 8, 128, 128});
  return m;
}

/// Ollama v0.20.0 (E3) on one 6 GiB card of 1,000 GB/s at num_ctx 1,024; `ram` declared ("" = none).
kvplan::Plan ram_ollama_plan(const std::string& ram) {
  kvplan::PlanRequest request;
  request.runtime = "ollama";
  request.contexts = {1024};
  request.engine_options.push_back({"ollama-version", "0.20.0", "--ollama-version"});
  if (!ram.empty()) request.engine_options.push_back({"ram", ram, "--ram"});
  kvplan::GpuSpec gpu;
  gpu.id = gpu.name = "6GiB";
  gpu.memory_bytes = 6 * GiB;
  gpu.memory_basis = "given";
  gpu.bandwidth_gbps = 1000;
  return kvplan::make_plan(ram_ollama_model(), gpu, request);
}

const kvplan::Finding* ram_ollama_finding(const kvplan::Row& row, const std::string& code) {
  for (const kvplan::Finding& f : row.findings)
    if (f.code == code) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("ram ollama: without --ram a row partly on the CPU does not fit, as before", "[ram][ollama]") {
  const kvplan::Row row = ram_ollama_plan("").rows.front();
  CHECK_FALSE(row.fits);
  REQUIRE(ram_ollama_finding(row, "partly_on_cpu"));
  CHECK(ram_ollama_finding(row, "partly_on_cpu")->blocking);
  CHECK_FALSE(row.host);  // no RAM declared: none counted
}

TEST_CASE("ram ollama: with --ram the GPU part and the RAM part are decided apart", "[ram][ollama]") {
  // E3 places 4 of 9 layers (ollama_profile_test: 6 GiB free - blk.0 + kv[0] (1 GiB + 4 MiB) -
  // 457 MiB - the graph 5,592,405 B leaves 4.547 GiB: blocks 7 to 4). llama.cpp -ngl 4 puts the
  // output layer and blocks 5 to 7 on the GPU: 4 GiB of weights and 3 x 4 MiB = 12 MiB of cache.
  // Ollama's reserve on the GPU: the layer buffer 1 GiB + 4 MiB + MinimumMemory 457 MiB + the
  // graph 5,592,405 B = 1,073,741,824 + 4,194,304 + 479,199,232 + 5,592,405 = 1,562,727,765 B.
  // GPU: 4,294,967,296 + 12,582,912 + 1,562,727,765 = 5,870,277,973 B <= 6 GiB (6,442,450,944).
  // RAM: blocks 0 to 4, 5 GiB of weights, and their cache 5 x 4 MiB = 20 MiB (no vocabulary: no
  // logits buffer) = 5,389,680,640 B <= 6 GiB declared.
  const kvplan::Plan plan = ram_ollama_plan("6GiB");
  const kvplan::Row& row = plan.rows.front();
  CHECK(row.weights_bytes == 4 * GiB);
  CHECK(row.kv_bytes == 12 * MiB);
  CHECK(row.overhead_bytes == 1'562'727'765);
  CHECK(row.total_bytes == 5'870'277'973);
  CHECK(row.fits);
  const kvplan::Finding* cpu = ram_ollama_finding(row, "partly_on_cpu");
  REQUIRE(cpu);
  CHECK_FALSE(cpu->blocking);
  CHECK_THAT(cpu->text, Catch::Contains("Ollama puts 4 of 9 layers on the GPU and runs the rest from system RAM: 5.02 GiB there "
                                        "(5.00 GiB weights, 0.02 GiB cache, 0.00 GiB logits)"));
  REQUIRE(row.host);
  CHECK(row.host->host_bytes == 5'389'680'640);
  CHECK(row.host->ram_bytes == 6 * GiB);
  // The decode bound: (4 GiB + 12 MiB) / 1,000 GB/s + (5 GiB + 20 MiB) / 89.6 GB/s
  //   = 4,307,550,208 / 1e12 + 5,389,680,640 / 89.6e9 = 0.0043076 + 0.0601527 s = 0.0644602 s: 15.513 tok/s.
  REQUIRE(row.decode_bound);
  CHECK(row.decode_bound->tokens_per_s_per_sequence == Approx(15.5134).epsilon(1e-4));
  CHECK_THAT(row.decode_bound->rule, Catch::Contains("+ 5.02 GiB read from system RAM / 89.6 GB/s"));
}

TEST_CASE("ram ollama: less RAM than the layers left there need does not fit (over_ram)", "[ram][ollama]") {
  // The same 5,389,680,640 B in RAM; 5 GiB = 5,368,709,120 B declared.
  const kvplan::Row row = ram_ollama_plan("5GiB").rows.front();
  CHECK_FALSE(row.fits);
  const kvplan::Finding* over = ram_ollama_finding(row, "over_ram");
  REQUIRE(over);
  CHECK(over->blocking);
  CHECK(over->text == "the engine keeps 5.02 GiB in system RAM; 5.00 GiB was declared");
  REQUIRE(row.host);
  CHECK(row.host->host_bytes == 5'389'680'640);
}

TEST_CASE("ram ollama: kvplan --runtime ollama --ram through the command line, and its era's rule", "[ram][ollama][cli]") {
  using kvplan::testing::run_kvplan;
  const auto e3 = run_kvplan("--model llama3.1:70b --gpu 4090 --runtime ollama --ctx 8k --ram 64GiB --ollama-version 0.13.5");
  CHECK(e3.exit_code == 0);
  CHECK_THAT(e3.out, Catch::Contains("llmServer.verifyLayout"));
  const auto e4 = run_kvplan("--model llama3.1:70b --gpu 4090 --runtime ollama --ctx 8k --ram 64GiB --check");
  CHECK(e4.exit_code == 0);
  CHECK_THAT(e4.out, Catch::Contains("llamaServerRunner.Load"));
  CHECK_THAT(e4.out, Catch::Contains("partly_on_cpu: partly on CPU: Ollama puts 44 of 81 layers"));
  const auto tight = run_kvplan("--model llama3.1:70b --gpu 4090 --runtime ollama --ctx 8k --ram 8GiB --check");
  CHECK(tight.exit_code == 1);
  CHECK_THAT(tight.out, Catch::Contains("over_ram"));
  const auto bandwidth_alone = run_kvplan("--model llama3.1:70b --gpu 4090 --runtime ollama --ram-bandwidth 50");
  CHECK(bandwidth_alone.exit_code == 2);
}
