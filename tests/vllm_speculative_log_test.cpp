// kvplan explain and a vLLM run with speculative decoding: the engine's config line prints
// SpeculativeConfig's __repr__ (vllm/config/speculative.py: "SpeculativeConfig({method=},
// {model=}, {num_spec_tokens=})"), and the plan must take it (the draft's layers are cached too),
// or say it could not, never compare a plan without it.

#include <string>

#include <catch2/catch.hpp>

#include "explain/explanation.h"
#include "loaders/logs/engine_log.h"
#include "support/log_fixtures.h"
#include "support/run_binary.h"

using namespace kvplan;

namespace {

/// The real vLLM 0.19 log (Llama 3.1 8B on an H100) with its config line's
/// "speculative_config=None" replaced by `repr`: no real log of a speculative run was found, so
/// vLLM's own __repr__ is filled in.
std::string speculative_log_text(const std::string& repr) {
  std::string text = kvplan::testing::read_file(kvplan::testing::log_fixture_path("vllm-0.19-llama3.1-8b-h100.log"));
  const std::string none = "speculative_config=None";
  const std::size_t at = text.find(none);
  REQUIRE(at != std::string::npos);
  return text.replace(at, none.size(), "speculative_config=" + repr);
}

Explanation speculative_explain(const std::string& repr) {
  ExplainInputs inputs;
  inputs.gpu = "h100";
  return explain_log(logs::read_engine_log(speculative_log_text(repr)), inputs);
}

}  // namespace

TEST_CASE("a vLLM log's speculative_config is read from its config line", "[explain][vllm][speculative]") {
  // The real log says None: nothing is recorded.
  const logs::EngineLog plain = kvplan::testing::read_log_fixture("vllm-0.19-llama3.1-8b-h100.log");
  CHECK(plain.setting("speculative_method") == nullptr);
  CHECK(plain.setting("speculative_config") == nullptr);

  const logs::EngineLog mtp = logs::read_engine_log(
      speculative_log_text("SpeculativeConfig(method='mtp', model='meta-llama/Llama-3.1-8B-Instruct', num_spec_tokens=2)"));
  CHECK(kvplan::testing::setting_at(mtp, "speculative_method") == "mtp@18");
  CHECK(kvplan::testing::setting_at(mtp, "num_speculative_tokens") == "2@18");
  // The draft's model= inside the repr is not the run's model.
  CHECK(kvplan::testing::setting_at(mtp, "model") == "meta-llama/Llama-3.1-8B-Instruct@7");

  // A repr cut short (a wrapped line) is recorded as unreadable, not dropped.
  const logs::EngineLog cut = logs::read_engine_log(speculative_log_text("SpeculativeConfig(method="));
  CHECK(kvplan::testing::setting_at(cut, "speculative_config") == "unreadable@18");
}

TEST_CASE("kvplan explain plans a speculative vLLM run with its config, or says why it cannot",
          "[explain][vllm][speculative]") {
  // ngram has no draft checkpoint: Llama 3.1 8B's plan takes it, shown in the same-plan command.
  const Explanation ngram = speculative_explain("SpeculativeConfig(method='ngram', model=None, num_spec_tokens=3)");
  CHECK(ngram.command.find(R"(--speculative-config '{"method": "ngram", "num_speculative_tokens": 3}')") !=
        std::string::npos);
  CHECK_FALSE(ngram.rows.empty());

  // EAGLE-3's draft is a checkpoint of its own, on the serving machine: explain does not read it,
  // and compares nothing rather than the target alone.
  const Explanation eagle = speculative_explain(
      "SpeculativeConfig(method='eagle3', model='yuhuili/EAGLE3-LLaMA3.1-Instruct-8B', num_spec_tokens=3)");
  bool refused = false;
  for (const std::string& note : eagle.notes)
    refused |= note.find("speculative decoding (eagle3) loads a draft checkpoint kvplan explain does not read") !=
               std::string::npos;
  CHECK(refused);
  for (const Reconciled& row : eagle.rows) CHECK(row.agreement == Agreement::engine_only);

  // Unreadable: no plan either.
  const Explanation cut = speculative_explain("SpeculativeConfig(method=");
  bool said = false;
  for (const std::string& note : cut.notes) said |= note.find("speculative_config could not be read") != std::string::npos;
  CHECK(said);
  for (const Reconciled& row : cut.rows) CHECK(row.agreement == Agreement::engine_only);
}
