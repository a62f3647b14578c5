#pragma once
/// The one error type kvplan throws. It carries the exit code the CLI returns and a message that
/// fits on one line and names what was wrong (a flag, a field, a file position).

#include <stdexcept>
#include <string>

#include "kvplan/export.h"

namespace kvplan {

/// Exit codes are part of the CLI contract (see README, "Exit codes").
enum class ExitCode : int {
  ok = 0,
  does_not_fit = 1,  ///< only with --check: some row does not fit
  invalid_input = 2,
  unsupported_architecture = 3,  ///< also: weights or a field that changes the cache are unknown
  internal_error = 4,            ///< out of memory (the C API's KVPLAN_INTERNAL_ERROR)
  write_failed = 5,              ///< the output could not be written (a full disk, a closed stdout)
};

class KVPLAN_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ExitCode code = ExitCode::invalid_input)
      : std::runtime_error(message), code_(code) {}

  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

/// A size past 64 bits. Never swallowed by a fallback: it means the input is absurd or hostile.
class KVPLAN_API OverflowError : public Error {
 public:
  using Error::Error;
};

/// An architecture or layer field kvplan does not understand. Never guessed around.
inline Error unsupported_architecture(const std::string& field, const std::string& value) {
  return Error("unsupported architecture: " + field + " = " + value,
               ExitCode::unsupported_architecture);
}

}  // namespace kvplan
