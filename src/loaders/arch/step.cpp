// StepFun Step-3.5 / Step-3.7: the cache only (the parameters are not counted: no complete config
// was found to count them from).

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

const Family& family_step() {
  static const Family family{
      .name = "step",
      .types = {{"step3p5"}, {"step3p7", false, "without a text_config"}},
      .gguf = "step35",
      .fixtures = {"step-3.7-flash-full"},
      .rules = "num_attention_groups KV heads on full layers; the sliding layers' own heads in attention_other_setting "
               "(attention_type sliding_attention, num_attention_groups, head_dim); layer_types may list the "
               "num_nextn_predict_layers MTP layers after the model's own, which --mtp-layers prices.",
      .unverified = "Not counted: the parameters come from StepFun's rounded figure (an estimate).",
  };
  return family;
}

}  // namespace kvplan::arch
