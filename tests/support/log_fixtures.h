#pragma once
// What the `kvplan explain` tests share: the real logs of tests/fixtures/logs/ read, and compact
// "value unit@line" views of what was recognised, so a check reads like the log line it tests.

#include <string>

#include <catch2/catch.hpp>

#include "explain/explanation.h"
#include "loaders/logs/engine_log.h"
#include "support/run_binary.h"

namespace kvplan::testing {

inline std::string log_fixture_path(const std::string& name) { return source_path("tests/fixtures/logs/" + name); }

inline logs::EngineLog read_log_fixture(const std::string& name) {
  const std::string text = read_file(log_fixture_path(name));
  REQUIRE(!text.empty());
  return logs::read_engine_log(text);
}

/// "value@line" of the first setting of that name; "(none)" when absent.
inline std::string setting_at(const logs::EngineLog& log, const char* name) {
  const logs::LogFact* fact = log.setting(name);
  return fact ? fact->value + "@" + std::to_string(fact->line) : "(none)";
}

/// "value unit@line" of the first figure of that name (and device, when given).
inline std::string figure_at(const logs::EngineLog& log, const char* name, const char* device = "") {
  const logs::LogFact* fact = log.figure(name, device);
  return fact ? fact->value + " " + fact->unit + "@" + std::to_string(fact->line) : "(none)";
}

/// The comparison's row of that key; fails the test when there is none.
inline const Reconciled& row_of(const Explanation& e, const std::string& key) {
  for (const Reconciled& r : e.rows)
    if (r.key == key) return r;
  FAIL("no row " << key);
  return e.rows.front();
}

}  // namespace kvplan::testing
