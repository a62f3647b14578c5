#pragma once
// Where the Hugging Face hub cache is on this machine, as huggingface_hub finds it.

#include <string>

namespace kvplan {

/// HF_HUB_CACHE, else $HF_HOME/hub, else $HOME/.cache/huggingface/hub (huggingface_hub's
/// constants.py); empty when none of them is set.
std::string hf_hub_cache_from_environment();

}  // namespace kvplan
