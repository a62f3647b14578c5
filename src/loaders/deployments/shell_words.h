#pragma once
// Command lines as they are written in scripts, Dockerfiles and manifests, split into the words a
// POSIX shell would pass to the program: quotes, backslashes and backslash-newline continuations.
// No expansion: `$VAR` stays as typed (a value kvplan cannot read is then refused by its parser).

#include <string>
#include <string_view>
#include <vector>

namespace kvplan {

/// "vllm serve m --max-model-len=8k \\\n  -tp 2" -> {"vllm", "serve", "m", "--max-model-len=8k", "-tp", "2"}.
/// Single quotes keep everything; double quotes keep everything but \" \\ \$ \` and a
/// backslash-newline; outside quotes a backslash keeps the next character and a backslash-newline
/// joins lines. A `#` that starts a word begins a comment to the end of the line. Throws Error for
/// an unterminated quote and for more than 10,000 words or 1 MiB.
std::vector<std::string> split_shell_words(std::string_view text);

/// A script (`sh -c "..."`) cut into its commands at unquoted newlines, `;`, `&&` and `||`, each
/// split into words. Pipes and redirections end the command's words.
std::vector<std::vector<std::string>> split_shell_commands(std::string_view text);

}  // namespace kvplan
