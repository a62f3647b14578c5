#include "cli/hf_hub_cache.h"

#include <cstdlib>

namespace kvplan {

namespace {

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

}  // namespace

std::string hf_hub_cache_from_environment() {
  // huggingface_hub: HF_HUB_CACHE = $HF_HUB_CACHE or $HF_HOME/hub, HF_HOME = $HF_HOME or
  // $XDG_CACHE_HOME/huggingface or ~/.cache/huggingface.
  if (std::string hub = variable("HF_HUB_CACHE"); !hub.empty()) return hub;
  if (std::string home = variable("HF_HOME"); !home.empty()) return home + "/hub";
  if (std::string xdg = variable("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/huggingface/hub";
  if (std::string user = variable("HOME"); !user.empty()) return user + "/.cache/huggingface/hub";
  return "";
}

}  // namespace kvplan
