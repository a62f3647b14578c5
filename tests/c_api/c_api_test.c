/* The C API from C: plans by catalog name, spec file and spec JSON text; the JSON equals what
   `kvplan --format json` prints; errors come back as the CLI's exit codes with one line.
   Usage: kvplan_c_api_test <kvplan binary> <source dir> */

#define _POSIX_C_SOURCE 200809L /* popen */

#include <kvplan/kvplan.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition)                                                  \
  do {                                                                    \
    if (!(condition)) {                                                   \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #condition); \
      ++failures;                                                         \
    }                                                                     \
  } while (0)

/* The whole stdout of a command, malloc'd. */
static char* run_command(const char* command) {
  FILE* pipe = popen(command, "r");
  size_t size = 0;
  size_t capacity = 1 << 16;
  char* text = malloc(capacity);
  if (!pipe || !text) {
    free(text);
    return NULL;
  }
  for (;;) {
    size_t n;
    if (capacity - size < 4096) {
      char* bigger = realloc(text, capacity * 2);
      if (!bigger) break;
      text = bigger;
      capacity *= 2;
    }
    n = fread(text + size, 1, capacity - size - 1, pipe);
    if (n == 0) break;
    size += n;
  }
  text[size] = '\0';
  pclose(pipe);
  return text;
}

static kvplan_request headline_request(void) {
  kvplan_request request;
  memset(&request, 0, sizeof request);
  request.model = "llama3.1-8b";
  request.gpu = "4090";
  request.ctx = "128k";
  request.kv_dtypes = "fp16,fp8";
  return request;
}

static void test_catalog_model(const char* binary) {
  kvplan_request request = headline_request();
  kvplan_result* result = kvplan_plan(&request);
  char command[4096];
  char* cli_json;
  CHECK(result != NULL);
  if (!result) return;
  CHECK(result->status == KVPLAN_OK);
  CHECK(result->error == NULL);
  CHECK(result->row_count == 2);
  if (result->row_count == 2) {
    const kvplan_row* fp16 = &result->rows[0];
    const kvplan_row* fp8 = &result->rows[1];
    CHECK(fp16->ctx == 131072);
    CHECK(fp16->batch == 1);
    CHECK(strcmp(fp16->kv_dtype, "fp16") == 0);
    CHECK(strcmp(fp16->weight_dtype, "bf16") == 0);
    CHECK(fp16->kv_bytes_per_token == 131072);           /* 2 x 32 x 8 x 128 x 2 */
    CHECK(fp16->kv_bytes == 17179869184ull);             /* 131,072 x 131,072 = 16 GiB */
    CHECK(fp16->weights_bytes == 16060522496ull);
    CHECK(fp16->total_bytes == 17179869184ull + 16060522496ull + 2147483648ull);
    CHECK(fp16->capacity_bytes == 25757220864ull);       /* the 4090 as the driver reports it */
    CHECK(fp16->headroom_bytes == (int64_t)25757220864ll - (int64_t)35387875328ll);
    CHECK(fp16->fits == 0);
    CHECK(strcmp(fp8->kv_dtype, "fp8") == 0);
    CHECK(fp8->kv_bytes * 2 == fp16->kv_bytes);
  }
  /* The same document the CLI prints. */
  snprintf(command, sizeof command,
           "'%s' --model llama3.1-8b --gpu 4090 --ctx 128k --kv-dtype fp16,fp8 --format json", binary);
  cli_json = run_command(command);
  CHECK(cli_json != NULL);
  CHECK(result->json != NULL);
  if (cli_json && result->json) {
    CHECK(strcmp(cli_json, result->json) == 0);
    CHECK(strstr(result->json, "\"schema_version\": 2") != NULL);
  }
  free(cli_json);
  kvplan_free(result);
}

static void test_defaults_and_options(void) {
  kvplan_request request;
  kvplan_result* result;
  memset(&request, 0, sizeof request);
  request.model = "meta-llama/Llama-3.1-8B"; /* an alias */
  request.gpu = "24GiB";
  result = kvplan_plan(&request);
  CHECK(result && result->status == KVPLAN_OK);
  if (result) CHECK(result->row_count == 12); /* 32k,64k,128k x fp16,fp8,int8,int4 */
  kvplan_free(result);

  request.ctx = "8k";
  request.kv_dtypes = "q8_0";
  request.batch = 16;
  request.weight_dtype = "fp8";
  request.overhead = "0";
  request.utilization = "0.9";
  result = kvplan_plan(&request);
  CHECK(result && result->status == KVPLAN_OK && result->row_count == 1);
  if (result && result->row_count == 1) {
    CHECK(result->rows[0].batch == 16);
    CHECK(result->rows[0].kv_bytes == 16ull * 8192 * 32 * 8 * 128 * 2 * 34 / 32);
    CHECK(result->rows[0].weights_bytes == 8030261248ull);
    CHECK(result->rows[0].overhead_bytes == 0);
    CHECK(result->rows[0].capacity_bytes == 23192823398ull); /* floor(24 GiB x 0.9) */
  }
  kvplan_free(result);

  /* --mtp-layers: DeepSeek-V3's one MTP layer cached as a 62nd MLA layer. */
  memset(&request, 0, sizeof request);
  request.model = "deepseek-v3";
  request.gpu = "h100";
  request.ctx = "32k";
  request.kv_dtypes = "fp16";
  request.mtp_layers = "all";
  result = kvplan_plan(&request);
  CHECK(result && result->status == KVPLAN_OK && result->row_count == 1);
  if (result && result->row_count == 1) {
    CHECK(result->rows[0].kv_bytes_per_token == 71424); /* 62 x (512 + 64) x 2 B; 61 layers: 70,272 */
    CHECK(result->rows[0].kv_bytes == 71424ull * 32768);
  }
  kvplan_free(result);

  /* vLLM's draft_model: the C API loads the draft --speculative-config names, as the CLI does.
     Llama 3.2 1B's weights on each of 4 ranks: 1,235,814,400 x 2 B / 4 = 617,907,200 B, and its
     own rotary table of 131,072 x 64 x 2 B = 16,777,216 B. */
  {
    static const char* const options[] = {
        "tensor-parallel-size=4",
        "speculative-config={\"method\": \"draft_model\", \"model\": \"llama3.2-1b\", \"num_speculative_tokens\": 4}",
        NULL};
    memset(&request, 0, sizeof request);
    request.model = "llama3.1-70b";
    request.gpu = "4xh100";
    request.ctx = "32k";
    request.runtime = "vllm";
    request.engine_options = options;
    result = kvplan_plan(&request);
    CHECK(result && result->status == KVPLAN_OK);
    if (result && result->json) CHECK(strstr(result->json, "\"draft_weights_bytes\": 634684416") != NULL);
    kvplan_free(result);
  }
}

static void test_spec_file_and_json(const char* source_dir) {
  char path[4096];
  kvplan_request request;
  kvplan_result* result;
  memset(&request, 0, sizeof request);
  snprintf(path, sizeof path, "%s/tests/fixtures/specs/my-model.json", source_dir);
  request.model = path;
  request.gpu = "h100";
  request.ctx = "8k";
  request.kv_dtypes = "fp16";
  result = kvplan_plan(&request);
  CHECK(result && result->status == KVPLAN_OK && result->row_count == 1);
  if (result && result->row_count == 1) CHECK(result->rows[0].kv_bytes == 8192ull * 131072);
  kvplan_free(result);

  request.model = NULL;
  request.model_json =
      "{\"name\": \"tiny\", \"params\": 1000000, \"weight_dtype\": \"bf16\", \"layers\": 2,"
      " \"attention_heads\": 4, \"kv_heads\": 2, \"head_dim\": 64}";
  request.ctx = "1k";
  result = kvplan_plan(&request);
  CHECK(result && result->status == KVPLAN_OK && result->row_count == 1);
  if (result && result->row_count == 1) {
    CHECK(result->rows[0].kv_bytes_per_token == 2 * 2 * 2 * 64 * 2);
    CHECK(result->rows[0].kv_bytes == 1024ull * 1024);
    CHECK(result->rows[0].weights_bytes == 2000000);
    CHECK(strstr(result->json, "\"id\": \"model_json\"") != NULL);
  }
  kvplan_free(result);
}

static void check_error(const kvplan_request* request, kvplan_status status, const char* expected) {
  kvplan_result* result = kvplan_plan(request);
  CHECK(result != NULL);
  if (!result) return;
  CHECK(result->status == status);
  CHECK(result->json == NULL);
  CHECK(result->rows == NULL && result->row_count == 0);
  CHECK(result->error != NULL);
  if (result->error) {
    if (!strstr(result->error, expected)) fprintf(stderr, "error was: %s\n", result->error);
    CHECK(strstr(result->error, expected) != NULL);
    CHECK(strchr(result->error, '\n') == NULL);
  }
  kvplan_free(result);
}

static void test_errors(void) {
  kvplan_request request = headline_request();
  request.model = "llama3.1-8bb";
  check_error(&request, KVPLAN_INVALID_INPUT, "unknown model 'llama3.1-8bb' (did you mean: llama3.1-8b");
  request = headline_request();
  request.gpu = NULL;
  check_error(&request, KVPLAN_INVALID_INPUT, "gpu is required");
  request = headline_request();
  request.ctx = "32k,,64k";
  check_error(&request, KVPLAN_INVALID_INPUT, "ctx: '' is not a token count");
  request = headline_request();
  request.utilization = "1.5";
  check_error(&request, KVPLAN_INVALID_INPUT, "utilization: must be more than 0 and at most 1");
  request = headline_request();
  request.model_json = "{\"name\": \"x\"}";
  check_error(&request, KVPLAN_INVALID_INPUT, "exactly one of model");
  request.model = NULL;
  request.model_json = "{\"name\": \"x\", \"layers\": 3x}";
  check_error(&request, KVPLAN_INVALID_INPUT, "model_json:1:");
  request.model_json =
      "{\"name\":\"x\",\"params\":1,\"weight_dtype\":\"bf16\",\"layers\":1,\"attention_heads\":1,"
      "\"head_dim\":8,\"layer_types\":[\"hyena\"]}";
  check_error(&request, KVPLAN_UNSUPPORTED_ARCHITECTURE, "unsupported architecture: model_json: layer_types[0] = hyena");
  request = headline_request();
  request.ctx = "4000000000000M";
  check_error(&request, KVPLAN_INVALID_INPUT, "overflows 64 bits");
  request = headline_request();
  request.overhead = "-1GiB";
  check_error(&request, KVPLAN_INVALID_INPUT, "overhead: '-1GiB' is not a memory size");
  request.overhead = NULL;
  request.mtp_layers = "1";
  check_error(&request, KVPLAN_INVALID_INPUT, "mtp_layers 1: llama3.1-8b declares 0 MTP layers");
  check_error(NULL, KVPLAN_INVALID_INPUT, "request is NULL");
  kvplan_free(NULL);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: kvplan_c_api_test <kvplan binary> <source dir>\n");
    return 2;
  }
  CHECK(strcmp(kvplan_version(), KVPLAN_EXPECTED_VERSION) == 0);
  test_catalog_model(argv[1]);
  test_defaults_and_options();
  test_spec_file_and_json(argv[2]);
  test_errors();
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  else printf("C API: all checks passed\n");
  return failures ? 1 : 0;
}
