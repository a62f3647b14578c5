#pragma once
// A llama.cpp fixture read back the way kvplan reads a user's file: written to a scratch directory
// and loaded from there.

#include <string>

#include "loaders/gguf_model.h"
#include "support/llamacpp_fixtures.h"
#include "support/temp_dir.h"

namespace kvplan::testing {

inline GgufModel load_llamacpp_fixture(const std::string& name) {
  TempDir dir;
  const std::string path = dir.file(name + ".gguf");
  make_llamacpp_fixture(name).write(path);
  return load_gguf_model(path);
}

}  // namespace kvplan::testing
