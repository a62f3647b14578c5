#pragma once
// A deployment as a file describes it: kvplan's deployments file, a Kubernetes manifest, a
// docker-compose file or a bare engine command line, reduced to the same plain struct with the
// place it came from. Nothing here is parsed as a number or resolved against a catalog: the check
// layer (src/check/) does that, so that every value is read by the parsers `kvplan` itself uses.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kvplan {

/// Where a deployment was written: a file (or "-" for stdin, "--cmd" for a flag) and a line
/// (1-based; 0 when the format gives none, as JSON does not), and the entry's index in its file.
struct SourceLocation {
  std::string file;
  std::uint64_t line = 0;
  std::uint64_t index = 0;  ///< 1-based: the deployment's place in its file

  /// "deploy.yaml:12", or "deploy.json (deployment 3)" when there is no line; "--cmd 2".
  std::string text() const;
};

/// An engine as a deployment starts it: the program's words, its environment, and the container
/// image (which names the entrypoint when a manifest gives only the arguments).
struct EngineCommand {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string image;
};

struct Deployment {
  std::string name;
  SourceLocation where;
  /// kvplan's own settings as written; empty when not given.
  std::string model;
  std::vector<std::string> gpus;  ///< the card ("h100", "2xh100"); several: a node selector's choices
  std::string gpu_count;          ///< how many the deployment gets (nvidia.com/gpu, count:)
  std::string runtime;
  std::string ctx;
  std::string batch;
  std::string kv_dtype;
  std::string weight_dtype;
  std::string utilization;
  std::string margin;
  std::map<std::string, std::string> options;  ///< engine options by kvplan's long name ("max-num-seqs")
  std::vector<EngineCommand> commands;         ///< at most one engine command; none for a plain entry
  /// Set when the entry itself is malformed: the deployment is invalid (exit 2) with this reason.
  std::string problem;
  /// Set when the entry uses a GPU but kvplan cannot tell how: unsupported (exit 3) with this reason.
  std::string unsupported;
};

}  // namespace kvplan
