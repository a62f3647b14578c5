#ifndef KVPLAN_KVPLAN_H
#define KVPLAN_KVPLAN_H
/*
 * kvplan's C API: one call plans a model on a GPU, as `kvplan --model M --gpu G ...` does, and
 * returns the `--format json` document and one struct per row. Every text field takes what the
 * matching CLI flag takes ("32k,64k", "fp16,fp8", "24GiB", "0.9").
 *
 * Nothing here throws or aborts: a failure is a status (the CLI's exit codes: 2 invalid input,
 * 3 unsupported architecture) with a one-line message. Every result is freed with kvplan_free.
 * The functions are safe to call from several threads at once.
 *
 *   kvplan_request request = {0};
 *   request.model = "llama3.1-8b";
 *   request.gpu = "4090";
 *   request.ctx = "128k";
 *   kvplan_result* result = kvplan_plan(&request);
 *   if (result && result->status == KVPLAN_OK) puts(result->json);
 *   else if (result) fprintf(stderr, "kvplan: %s\n", result->error);
 *   kvplan_free(result);
 */

#include <stddef.h>
#include <stdint.h>

#include "kvplan/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The CLI's exit codes (README "Exit codes"), plus one for what no input causes. */
typedef enum kvplan_status {
  KVPLAN_OK = 0,
  KVPLAN_INVALID_INPUT = 2,            /**< unknown name, malformed file or JSON, bad value */
  KVPLAN_UNSUPPORTED_ARCHITECTURE = 3, /**< a layer kind or field kvplan does not understand */
  KVPLAN_INTERNAL_ERROR = 4            /**< out of memory, or a bug in kvplan */
} kvplan_status;

/** What to plan. Zero-initialise it and set what you need; NULL (or 0) means the CLI's default. */
typedef struct kvplan_request {
  /** A catalog id or alias ("llama3.1-8b", "meta-llama/Llama-3.1-8B") or a path to a model file
      (a kvplan spec, or any file `kvplan --model` reads). Exactly one of model and model_json. */
  const char* model;
  /** Instead of `model`: a model-spec JSON document as text (README "Model spec files"). */
  const char* model_json;
  /** Required: a GPU catalog name ("4090", "h100") or a capacity ("24GiB", "24GB", "80G"). */
  const char* gpu;
  /** Tokens per sequence, comma-separated ("32768", "32k", "1M"); NULL: "32k,64k,128k". */
  const char* ctx;
  /** Cache dtypes, comma-separated ("fp16,fp8,q8_0"); NULL: "fp16,fp8,int8,int4". */
  const char* kv_dtypes;
  /** Weight dtype ("fp8"); NULL: the model's own. */
  const char* weight_dtype;
  /** Concurrent sequences; 0 means 1. */
  uint64_t batch;
  /** Runtime memory besides weights and cache ("2GiB", "0"); NULL: "2GiB". */
  const char* overhead;
  /** Fraction of the GPU's memory the budget may use ("0.9"); NULL: "1.0". */
  const char* utilization;
  /** MTP layers counted as cached for speculative decoding ("1", "all"); NULL: none (--mtp-layers). */
  const char* mtp_layers;
  /** The engine profile: "generic" (NULL), "llama.cpp", "vllm" or "ollama" (kvplan --runtime). The C API reads
      no environment: give Ollama's settings as engine options ("num-parallel=2"). */
  const char* runtime;
  /** The engine's own settings, a NULL-terminated array of "name=value" (a switch: "name"), named
      as the engine's long flags without dashes: {"tensor-parallel-size=4", "max-num-seqs=64", NULL}. */
  const char* const* engine_options;
  /** The checkpoint's size ("60GB"), for a model whose weights kvplan cannot count; NULL: its own. */
  const char* weights;
  /** The parameter count ("32.5B"), overriding the model's; NULL: its own. */
  const char* params;
  /* New fields are only ever appended, so a zero-initialised request keeps its meaning. */
} kvplan_request;

/** One (ctx, cache dtype) row: the same figures as the JSON document's rows[], in bytes. */
typedef struct kvplan_row {
  uint64_t ctx;                /**< tokens per sequence */
  uint64_t batch;              /**< sequences */
  char kv_dtype[32];           /**< "fp16", or "q8_0/q4_0" when K and V differ */
  char weight_dtype[32];       /**< the weights' dtype used for this row */
  uint64_t kv_bytes_per_token; /**< K+V bytes one token adds across all token-holding layers */
  uint64_t kv_bytes;           /**< all cache bytes, all sequences, fixed state included */
  uint64_t state_bytes;        /**< the fixed recurrent state within kv_bytes */
  uint64_t weights_bytes;
  uint64_t overhead_bytes;
  uint64_t total_bytes;        /**< weights + kv + overhead */
  uint64_t capacity_bytes;     /**< floor(gpu memory x utilization) */
  int64_t headroom_bytes;      /**< capacity - total; negative when it does not fit */
  int fits;                    /**< 1 when the row fits: total <= capacity and the engine would start */
} kvplan_row;

typedef struct kvplan_result {
  kvplan_status status;
  /** status != KVPLAN_OK: one line saying what was wrong (what the CLI prints after
      "kvplan: error: "); NULL otherwise. */
  char* error;
  /** status == KVPLAN_OK: the document `kvplan --format json` prints, NUL-terminated; NULL otherwise. */
  char* json;
  size_t row_count;
  kvplan_row* rows; /**< row_count rows: contexts outer, cache dtypes inner; NULL when none */
} kvplan_result;

/** Plans `request`. Returns NULL only when not even the result could be allocated; otherwise a
    result to free with kvplan_free, whose status says whether it succeeded. A NULL request is
    an invalid input. */
KVPLAN_API kvplan_result* kvplan_plan(const kvplan_request* request);

/** Frees a result and everything in it. NULL is allowed. */
KVPLAN_API void kvplan_free(kvplan_result* result);

/** The library's version, "0.1.0"; static storage. */
KVPLAN_API const char* kvplan_version(void);

#ifdef __cplusplus
}
#endif

#endif /* KVPLAN_KVPLAN_H */
