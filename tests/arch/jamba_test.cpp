// jamba (src/loaders/arch/jamba.cpp); sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("jamba: Jamba-1.5-Mini, Mamba (v1) mixers with their layernorms, experts every other layer") {
  // Mamba layer: in_proj 2 x 8192 x 4096 + conv 8192 x 4 + 8,192 + x_proj (256 + 32) x 8192 +
  // dt_proj 8192 x 256 + 8,192 + A_log 8192 x 16 + D 8,192 + out_proj 4096 x 8192 + dt/B/C norms
  // 288 = 105,308,448 (x 28); attention 4096^2 x 2 + 4096 x 1024 x 2 (x 4); 16 MoE FFNs of 16
  // experts x 3 x 4096 x 14336 + router, 16 dense; 2 norms per layer; 2 x 65,536 x 4,096; final.
  // = 51,570,323,328 = total_size 103,140,646,656 / 2 (bf16).
  const ModelSpec model = hf_model("jamba-1.5-mini");
  CHECK(model.params == 51'570'323'328ull);
  CHECK(model.params * 2 == *model.weights_bytes);
  // 2 of 16 experts: - 16 x 14 x 176,160,768 = 12,110,311,296 ("12B active").
  CHECK(model.active_params == 12'110'311'296ull);
  CHECK(describe_layers(model) == "28 linear + 4 full");
  CHECK(cache_bytes(model).per_token == 16'384);
  CHECK(cache_bytes(model).fixed == 28ull * 311'296);  // conv 3 x 8,192 + ssm 8,192 x 16, bf16
}
