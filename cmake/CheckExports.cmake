# The library.exports test (cmake -P): libkvplan.so has the right SONAME, exports the C API and the
# kvplan namespace, and nothing of fmt, nlohmann::json or CLI11.
# -D variables: LIBRARY, SONAME, MAJOR

if(NOT SONAME STREQUAL "libkvplan.so.${MAJOR}")
  message(FATAL_ERROR "SONAME is ${SONAME}, expected libkvplan.so.${MAJOR}")
endif()
execute_process(COMMAND nm -D -C --defined-only "${LIBRARY}" OUTPUT_VARIABLE symbols RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "nm failed on ${LIBRARY}")
endif()
foreach(wanted " kvplan_plan" " kvplan_free" " kvplan_version" " kvplan::plan_row(" " kvplan::make_plan("
               " kvplan::format_json" "typeinfo for kvplan::Error")
  string(FIND "${symbols}" "${wanted}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${LIBRARY} does not export '${wanted}'")
  endif()
endforeach()
string(REGEX MATCHALL "[^\n]*(fmt::|nlohmann::|CLI::)[^\n]*" leaked "${symbols}")
set(real_leaks "")
foreach(line IN LISTS leaked)
  list(APPEND real_leaks "${line}")
endforeach()
if(real_leaks)
  list(LENGTH real_leaks n)
  list(GET real_leaks 0 first)
  message(FATAL_ERROR "${LIBRARY} exports ${n} symbols of its dependencies, e.g.: ${first}")
endif()
string(REGEX MATCHALL "\n[0-9a-f]+ [TWDBVRu] " all "${symbols}")
list(LENGTH all count)
# Hidden visibility: only what the public headers declare. The internal layers (loaders' readers,
# engine rules, the CLI) must not be exported.
foreach(internal " kvplan::run_cli(" " kvplan::plan_vllm(" " kvplan::read_gguf_header(" " kvplan::count_params(")
  string(FIND "${symbols}" "${internal}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${LIBRARY} exports an internal function: '${internal}'")
  endif()
endforeach()
message(STATUS "${LIBRARY}: ${count} exported symbols, none of fmt, nlohmann or CLI11, none internal")
