# Whole builds (CI's) compile the library eight files to a unit: each file alone spends most of its
# time parsing the headers every file shares and instantiating the same fmt and json templates.
# Files that define a file-local name another file also defines cannot share a unit and are
# compiled alone: every architecture file (each has its own `count`, `finish_layout`) and the
# files below (each engine its own `gib`, `kGiB`, ...). A new clash is a compile error
# ("redefinition of ..."): add the file here.
set(KVPLAN_UNITY_SOLO_FILES
  src/engines/core/quality_notes.cpp
  src/engines/llamacpp/engine.cpp
  src/engines/llamacpp/section.cpp
  src/engines/ollama/e4_choices.cpp
  src/engines/ollama/rules.cpp
  src/engines/ollama/section.cpp
  src/engines/sglang/rules.cpp
  src/engines/sglang/section.cpp
  src/engines/trtllm/engine.cpp
  src/engines/trtllm/rules.cpp
  src/engines/trtllm/section.cpp
  src/engines/vllm/engine.cpp
  src/engines/vllm/rules.cpp
  src/engines/vllm/section.cpp
  src/explain/explain_ollama.cpp
  src/loaders/hf_quantization.cpp
  src/loaders/logs/sglang_log.cpp
  src/reports/chart_svg.cpp
  src/reports/fit_report.cpp
  src/reports/limits_report.cpp
)

# Compiles `target`'s sources in units of eight, the files above, the architecture files and
# any given after the target alone.
function(kvplan_unity_build target)
  set(solo ${KVPLAN_UNITY_SOLO_FILES})
  list(TRANSFORM solo PREPEND "${PROJECT_SOURCE_DIR}/")
  file(GLOB arch_files CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/src/loaders/arch/*.cpp")
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  set_source_files_properties(${solo} ${arch_files} ${ARGN} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
