// Writes the llama.cpp cross-check fixtures (tests/support/llamacpp_fixtures.h) into a folder:
//
//   make_gguf_fixtures OUT_DIR          -> OUT_DIR/<name>.gguf for every fixture, one name per line on stdout
//   make_gguf_fixtures OUT_DIR NAME...  -> only those
#include <filesystem>
#include <iostream>
#include <string>

#include "support/llamacpp_fixtures.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: make_gguf_fixtures OUT_DIR [NAME...]\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  try {
    std::filesystem::create_directories(dir);
    std::vector<std::string> names;
    for (int i = 2; i < argc; ++i) names.emplace_back(argv[i]);
    if (names.empty())
      for (const auto& fixture : kvplan::testing::llamacpp_fixtures()) names.push_back(fixture.name);
    for (const std::string& name : names) {
      kvplan::testing::make_llamacpp_fixture(name).write((dir / (name + ".gguf")).string());
      std::cout << name << "\n";
    }
  } catch (const std::exception& error) {
    std::cerr << "make_gguf_fixtures: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
