/* Uses libkvplan's C API as an installed library. */
#include <kvplan/kvplan.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  kvplan_request request;
  kvplan_result* result;
  int ok;
  memset(&request, 0, sizeof request);
  request.model = "qwen3-8b";
  request.gpu = "24GiB";
  request.ctx = "100000";
  request.kv_dtypes = "fp16";
  result = kvplan_plan(&request);
  ok = result && result->status == KVPLAN_OK && result->row_count == 1 && result->rows[0].kv_bytes == 14745600000ull;
  if (ok) printf("kvplan %s (C): qwen3-8b at 100000 tokens fp16: %llu KV bytes\n", kvplan_version(),
                 (unsigned long long)result->rows[0].kv_bytes);
  else if (result && result->error) fprintf(stderr, "consumer_c: %s\n", result->error);
  kvplan_free(result);
  return ok ? 0 : 1;
}
