// Uses libkvplan's C++ API as an installed library: the catalog, the engine and the formatter.
#include <kvplan/plan.h>
#include <kvplan/catalog.h>
#include <kvplan/error.h>
#include <kvplan/version.h>

#include <cstdio>

int main() {
  const kvplan::ModelSpec* model = kvplan::builtin_models().find("llama3.1-8b");
  if (model == nullptr) return 1;
  const kvplan::Dtype& fp16 = kvplan::parse_kv_dtype("fp16", *model->weight_dtype);
  kvplan::RowSettings settings;
  settings.ctx = 131072;
  settings.cache = {&fp16, &fp16};
  settings.gpu_memory_bytes = kvplan::builtin_gpus().find("4090")->memory_bytes;
  const kvplan::Row row = kvplan::plan_row(*model, settings);
  try {
    kvplan::parse_kv_dtype("fp9", *model->weight_dtype);
    return 1;
  } catch (const kvplan::Error& error) {  // kvplan::Error crosses the library boundary
    if (error.code() != kvplan::ExitCode::invalid_input) return 1;
  }
  std::printf("kvplan %s: llama3.1-8b at 128k fp16: %llu KV bytes per token, %llu KV bytes, fits %d\n",
              kvplan::kVersion, static_cast<unsigned long long>(row.kv_bytes_per_token),
              static_cast<unsigned long long>(row.kv_bytes), row.fits ? 1 : 0);
  return row.kv_bytes_per_token == 131072 ? 0 : 1;
}
