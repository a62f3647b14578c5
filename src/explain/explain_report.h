#pragma once
// `kvplan explain`'s output: a table for people, a JSON document for programs. Formats only: every
// figure and verdict was settled by explain_log.

#include <string>

#include "explain/explanation.h"

namespace kvplan {

std::string format_explanation_text(const Explanation& explanation);
/// Every recognised setting and figure with its line number and text, and the comparison.
std::string format_explanation_json(const Explanation& explanation);

}  // namespace kvplan
