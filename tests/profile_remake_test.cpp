// Profile::remake: a profile built from another of the same model shares what that one read of the
// model, and is otherwise the profile make() builds (kvplan fit's searches build theirs this way).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "engines/core/profile.h"
#include "engines/llamacpp/engine.h"
#include "engines/ollama/engine.h"
#include "engines/vllm/engine.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "loaders/ollama_tags.h"

using namespace kvplan;

namespace {

PlanRequest remake_request(std::string runtime, std::optional<std::uint64_t> batch) {
  PlanRequest request;
  request.runtime = std::move(runtime);
  request.contexts = {8192};
  if (batch) {
    request.batch = *batch;
    request.batch_given = true;
  }
  return request;
}

std::string remake_error(const std::function<void()>& build) {
  try {
    build();
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("remake: an Ollama profile remade for a batch is the profile made for it", "[profile][remake][ollama]") {
  const ModelSpec model = load_ollama_tag("llama3.1:8b", builtin_models());
  const std::vector<GpuSpec> gpus = {*builtin_gpus().find("4090")};
  // Built without a batch (Ollama's own slots), as kvplan fit prices its rows.
  const std::shared_ptr<const Profile> made = ollama_engine().make(model, gpus, remake_request("ollama", std::nullopt));
  const std::shared_ptr<const Profile> remade = made->remake(gpus, remake_request("ollama", 4));
  const std::shared_ptr<const Profile> fresh = ollama_engine().make(model, gpus, remake_request("ollama", 4));
  REQUIRE(remade != nullptr);
  // The batch given makes the slots the rows' own: only the remade and the fresh profile follow it.
  CHECK(made->depends_on_batch());
  CHECK_FALSE(remade->depends_on_batch());
  RowQuery query;
  query.batch = 4;
  for (const std::uint64_t ctx : {8192u, 32768u, 131072u}) {
    query.ctx = ctx;
    const Row a = remade->price(query);
    const Row b = fresh->price(query);
    CHECK(a.batch == 4);
    CHECK(made->price(query).batch == 1);  // Ollama's default slot count, whatever the query says
    CHECK(a.kv_bytes == b.kv_bytes);
    CHECK(a.weights_bytes == b.weights_bytes);
    CHECK(a.overhead_bytes == b.overhead_bytes);
    CHECK(a.capacity_bytes == b.capacity_bytes);
    CHECK(a.findings.size() == b.findings.size());
  }
  // 4 x 8192 cells of 32 layers x 8 KV heads x 128 x 2 (K and V) x 2 B (f16) = 4 GiB.
  query.ctx = 8192;
  CHECK(remade->price(query).kv_bytes == std::uint64_t{4} * 8192u * 32u * 8u * 128u * 2u * 2u);
  // Its settings are checked as make() checks them.
  const std::string expected = remake_error([&] { ollama_engine().make(model, gpus, remake_request("ollama", 300)); });
  CHECK(expected.find("300 sequences") != std::string::npos);
  CHECK(remake_error([&] { made->remake(gpus, remake_request("ollama", 300)); }) == expected);
}

TEST_CASE("remake: a llama.cpp profile remade for two GPUs splits the layers as one made for them",
          "[profile][remake][llamacpp]") {
  const ModelSpec model = load_ollama_tag("llama3.1:8b", builtin_models());
  const GpuSpec card = *builtin_gpus().find("4090");
  const std::shared_ptr<const Profile> made = llamacpp_engine().make(model, {card}, remake_request("llama.cpp", 1));
  const std::vector<GpuSpec> two = {card, card};
  const std::shared_ptr<const Profile> remade = made->remake(two, remake_request("llama.cpp", 2));
  const std::shared_ptr<const Profile> fresh = llamacpp_engine().make(model, two, remake_request("llama.cpp", 2));
  REQUIRE(remade != nullptr);
  RowQuery query;
  query.ctx = 8192;
  query.batch = 2;
  const Row a = remade->price(query);
  const Row b = fresh->price(query);
  REQUIRE(a.per_gpu.size() == 2);
  REQUIRE(b.per_gpu.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(a.per_gpu[i].weights_bytes == b.per_gpu[i].weights_bytes);
    CHECK(a.per_gpu[i].kv_bytes == b.per_gpu[i].kv_bytes);
  }
  // 2 sequences x 8192 cells, 32 layers x 1024 K + V values x 2 B, split between the cards.
  CHECK(a.per_gpu[0].kv_bytes + a.per_gpu[1].kv_bytes == std::uint64_t{2} * 8192u * 32u * 1024u * 2u * 2u);
}

TEST_CASE("remake: an engine with nothing of the model to share says so, and the caller makes one",
          "[profile][remake][vllm]") {
  const ModelSpec& model = *builtin_models().find("llama3.1-8b");
  const std::vector<GpuSpec> gpus = {*builtin_gpus().find("h100")};
  const std::shared_ptr<const Profile> made = vllm_engine().make(model, gpus, remake_request("vllm", std::nullopt));
  CHECK(made->remake(gpus, remake_request("vllm", 4)) == nullptr);
}
