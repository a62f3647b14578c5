// `kvplan check --format junit`: one testcase per deployment, for CI systems that read JUnit XML.
// no fit (and tight under --strict) is a <failure> with the numbers; invalid and unsupported are
// an <error>; tight otherwise passes with the numbers in <system-out>. tests/junit.xsd is the
// schema it is validated against.

#include <fmt/format.h>

#include "reports/check_report.h"

namespace kvplan {

namespace {

/// Text as XML 1.0 character data or an attribute value: markup escaped, control characters (not
/// allowed in XML 1.0) replaced.
std::string xml(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += "&#10;"; break;
      case '\t': out += "&#9;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out.push_back('?');
        else out.push_back(c);
    }
  }
  return out;
}

std::string details(const CheckedDeployment& d) {
  std::vector<std::string> cells = check_row_cells(d);
  std::string text = d.reason;
  if (!cells.empty())
    text += fmt::format("\nmodel {} on {}; ctx {}, batch {}, KV dtype {}; total {} GiB of budget {} GiB, headroom {} GiB",
                        cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6], cells[7]);
  return text;
}

}  // namespace

std::string format_check_junit(const CheckRun& run) {
  std::size_t failures = 0;
  std::size_t errors = 0;
  for (const CheckedDeployment& d : run.deployments) {
    if (d.verdict == CheckVerdict::no_fit || (run.strict && d.verdict == CheckVerdict::tight)) ++failures;
    if (d.verdict == CheckVerdict::invalid || d.verdict == CheckVerdict::unsupported) ++errors;
  }
  const std::string counts = fmt::format(R"(tests="{}" failures="{}" errors="{}" skipped="0")", run.deployments.size(),
                                         failures, errors);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"kvplan check\" {} time=\"0\">\n", counts);
  out += fmt::format("  <testsuite name=\"kvplan check\" {} time=\"0\">\n", counts);
  for (const CheckedDeployment& d : run.deployments) {
    out += fmt::format(R"(    <testcase name="{}" classname="{}" file="{}")", xml(d.name), xml(d.where.file), xml(d.where.file));
    if (d.where.line) out += fmt::format(R"( line="{}")", d.where.line);
    out += " time=\"0\">\n";
    const std::string verdict(to_string(d.verdict));
    if (d.verdict == CheckVerdict::no_fit || (run.strict && d.verdict == CheckVerdict::tight)) {
      out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", xml(d.reason), verdict, xml(details(d)));
    } else if (d.verdict == CheckVerdict::invalid || d.verdict == CheckVerdict::unsupported) {
      out += fmt::format("      <error message=\"{}\" type=\"{}\">{}</error>\n", xml(d.reason), verdict, xml(details(d)));
    } else {
      out += fmt::format("      <system-out>{}: {}</system-out>\n", verdict, xml(details(d)));
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace kvplan
