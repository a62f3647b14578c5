#include "cli/exit_for.h"

#include <new>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/arguments.h"
#include "kvplan/error.h"

namespace kvplan {

int exit_for_parse_error(const std::exception_ptr& thrown, const CLI::App& app, std::ostream& out, std::ostream& err,
                         std::string_view help_command) {
  try {
    std::rethrow_exception(thrown);
  } catch (const CLI::Success& success) {
    std::ostringstream text;
    std::ostringstream ignored;
    const int code = app.exit(success, text, ignored);
    try {
      write_output(out, text.str());
    } catch (const OutputError& error) {
      if (!error.quiet()) err << "kvplan: error: " << one_line(error.what()) << "\n";
      return static_cast<int>(ExitCode::write_failed);
    }
    return code;
  } catch (const CLI::ParseError& error) {
    err << "kvplan: error: " << one_line(error.what()) << " (see " << help_command << ")\n";
    return static_cast<int>(ExitCode::invalid_input);
  } catch (const Error& error) {
    err << "kvplan: error: " << one_line(error.what()) << "\n";
    return static_cast<int>(error.code());
  }
}

int exit_for_run_error(const std::exception_ptr& thrown, std::ostream& err) {
  try {
    std::rethrow_exception(thrown);
  } catch (const OutputError& error) {
    if (!error.quiet()) err << "kvplan: error: " << one_line(error.what()) << "\n";
    return static_cast<int>(ExitCode::write_failed);
  } catch (const Error& error) {
    err << "kvplan: error: " << one_line(error.what()) << "\n";
    return static_cast<int>(error.code());
  } catch (const std::bad_alloc&) {
    err << "kvplan: error: out of memory\n";
    return static_cast<int>(ExitCode::internal_error);
  } catch (const std::exception& error) {
    err << "kvplan: error: " << one_line(error.what()) << "\n";
    return static_cast<int>(ExitCode::invalid_input);
  }
}

}  // namespace kvplan
