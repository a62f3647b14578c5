#pragma once
// A catalog model's ModelSpec from the fields the build read out of its models/<id>.json
// (embedded::ModelFacts: the flat fields and layer_types): `--model llama3.1-8b` then parses no
// JSON, which was a quarter of the headline command's start-up (issue #10), and `kvplan fit` parses
// only the files with blocks the facts do not carry (MLA, state, parts, shapes by kind). Those are
// parsed as before; tests/model_facts_test.cpp checks every file with facts against the parser,
// field by field.

#include <optional>

#include "kvplan/model_spec.h"
#include "loaders/embedded_files.h"

namespace kvplan {

/// The ModelSpec parse_model_spec reads from the same file; nullopt when the file has no facts or
/// holds a value the parser refuses (the caller then parses it, and the parser says why).
std::optional<ModelSpec> model_from_facts(const embedded::ModelFacts& facts);

}  // namespace kvplan
