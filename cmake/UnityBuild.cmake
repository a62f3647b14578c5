# Whole builds (CI's) compile the library eight files to a unit: each file alone spends most of its
# time parsing the headers every file shares and instantiating the same fmt and json templates.
# Files that define a file-local name another file also defines cannot share a unit and are
# compiled alone: the folders whose files are parallel by design (every architecture file has its
# own `count`, every engine profile its own `kOptions`, every log reader and explainer its own
# helpers) and the files below. A new clash is a compile error ("redefinition of ..."): add the
# file here, or give the name its file's topic.
#
# The command line, `kvplan check` and the deployment readers stay alone for another reason: a
# program linking libkvplan.a takes whole objects, and a unit holding one file it needs and one of
# these would pull in `kvplan check`'s YAML reader, which needs yaml-cpp (tests/consumer links none).
set(KVPLAN_UNITY_SOLO_FILES
  src/engines/core/quality_notes.cpp
  src/loaders/hf_quantization.cpp
  src/reports/chart_svg.cpp
  src/reports/fit_report.cpp
  src/reports/limits_report.cpp
)
set(KVPLAN_UNITY_SOLO_GLOBS
  src/cli/*.cpp
  src/check/*.cpp
  src/loaders/deployments/*.cpp
  src/loaders/arch/*.cpp
  src/engines/*/*.cpp
  src/loaders/logs/*.cpp
  src/explain/*.cpp
)

# Compiles `target`'s sources in units of eight; the files above and any given after the target
# alone.
function(kvplan_unity_build target)
  set(solo ${KVPLAN_UNITY_SOLO_FILES})
  list(TRANSFORM solo PREPEND "${PROJECT_SOURCE_DIR}/")
  foreach(pattern IN LISTS KVPLAN_UNITY_SOLO_GLOBS)
    file(GLOB matched CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/${pattern}")
    list(APPEND solo ${matched})
  endforeach()
  # The planning core is one engine-neutral folder: its files share a unit.
  list(FILTER solo EXCLUDE REGEX "/src/engines/core/")
  list(APPEND solo "${PROJECT_SOURCE_DIR}/src/engines/core/quality_notes.cpp")
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  set_source_files_properties(${solo} ${ARGN} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
