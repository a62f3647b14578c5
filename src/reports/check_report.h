#pragma once
// `kvplan check`'s outputs, one file each: the table, JSON (the plan's row schema plus the
// deployment's name and place), Markdown for $GITHUB_STEP_SUMMARY, JUnit XML and GitHub
// annotations. They format the CheckRun; every figure is a field of a deployment's plan.

#include <string>
#include <string_view>

#include "check/check_result.h"

namespace kvplan {

enum class CheckFormat { table, json, markdown, junit };

/// "table", "json", "markdown" (or "md"), "junit"; an Error naming `setting` otherwise.
CheckFormat parse_check_format(std::string_view text, std::string_view setting);

std::string format_check_table(const CheckRun& run);
std::string format_check_json(const CheckRun& run);
std::string format_check_markdown(const CheckRun& run);
std::string format_check_junit(const CheckRun& run);
/// GitHub workflow commands, one per deployment that is not a plain fit:
/// "::error file=deploy.yaml,line=12,title=kvplan check: chat (no fit)::ctx 65,536 x 1: needs ...".
std::string format_check_annotations(const CheckRun& run);

// Shared cells.
/// "✅ fits", "⚠️ tight", "❌ no fit", "⛔ invalid", "❓ unsupported".
std::string check_verdict_label(CheckVerdict verdict);
/// "2 deployments: 1 fits, 1 no fit; exit 1".
std::string check_summary(const CheckRun& run);
/// The cells of a deployment's worst row, empty when it has no plan: model, GPUs, ctx, batch, KV
/// dtype, total, budget, headroom (GiB, two places).
std::vector<std::string> check_row_cells(const CheckedDeployment& d);

}  // namespace kvplan
