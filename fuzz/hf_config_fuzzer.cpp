// Hugging Face model folders (load_hf_model): config.json and, after the first NUL byte of the
// input, model.safetensors.index.json (also read for its tensor names, and written as a
// safetensors file whose header is read: safetensors_tensor_names). Both are written into a private directory and loaded the
// way `--model <folder>` loads them. A config that loads gives a spec that plans; a bad one is a
// one-line kvplan::Error.

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "kvplan/plan.h"
#include "kvplan/error.h"
#include "loaders/hf_config.h"
#include "loaders/safetensors_names.h"
#include "loaders/spec_json.h"

using namespace kvplan;

namespace {

std::string make_directory() {
  std::string pattern = std::filesystem::exists("/dev/shm") ? "/dev/shm/kvplan-fuzz-hf-XXXXXX" : "/tmp/kvplan-fuzz-hf-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) fuzz::finding("cannot make a directory for the model folder");
  return pattern;
}

void write(const std::string& path, std::string_view text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!file.flush()) fuzz::finding("cannot write " + path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string directory = make_directory();
  static const std::string config_path = directory + "/config.json";
  static const std::string index_path = directory + "/model.safetensors.index.json";

  const std::string_view input = fuzz::as_text(data, size);
  const std::size_t split = input.find('\0');
  write(config_path, input.substr(0, split));
  if (split == std::string_view::npos) std::filesystem::remove(index_path);
  else write(index_path, input.substr(split + 1));

  // The same bytes as a draft head's tensor names: the index's weight_map, and a safetensors
  // file's header (loaders/safetensors_names).
  static const std::string headers = [] {
    std::filesystem::create_directories(directory + "/headers");
    return directory + "/headers";
  }();
  write(headers + "/model.safetensors", split == std::string_view::npos ? input : input.substr(split + 1));
  for (const std::string& folder : {directory, headers}) {
    try {
      (void)safetensors_tensor_names(folder);
    } catch (const Error& error) {
      fuzz::require_message(error.what(), "safetensors_tensor_names");
    }
  }

  ModelSpec spec;
  try {
    spec = load_hf_model(directory);
  } catch (const Error& error) {
    fuzz::require_message(error.what(), "load_hf_model");
    return 0;
  }
  // What loads is a valid spec: it survives kvplan's own format and plans. Weights kvplan cannot
  // count (a layer it has no rule for, Step-3.7-Flash) load as unknown, and a spec file must
  // state them: that spec is refused by design, and planning it asks for --weights (exit 3).
  const bool weights_unknown = spec.params == 0 && !spec.weights_bytes;
  try {
    (void)model_spec_from_json(to_spec_json(spec), "round trip");
    if (weights_unknown) fuzz::finding("a spec without params or weights_bytes parsed");
  } catch (const Error& error) {
    if (!weights_unknown) fuzz::finding(std::string("a loaded config's spec does not parse back: ") + error.what());
  }
  fuzz::require_plans(spec, 32768);
  return 0;
}
