# The install.consumer test (cmake -P): installs the build into a temporary prefix, configures and
# builds tests/consumer against it with find_package(kvplan), and runs what it built.
# -D variables: BUILD_DIR, CONSUMER_DIR, WORK_DIR, GENERATOR, C_COMPILER, CXX_COMPILER, and for
# sanitizer builds FLAGS (compile and link flags) and LINK_C_AS_CXX

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "failed (${code}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")

foreach(file bin/kvplan include/kvplan/kvplan.h include/kvplan/plan.h share/man/man1/kvplan.1
             share/bash-completion/completions/kvplan share/zsh/vendor-completions/_kvplan)
  if(NOT EXISTS "${prefix}/${file}")
    message(FATAL_ERROR "the install has no ${file}")
  endif()
endforeach()
file(GLOB_RECURSE config "${prefix}/*/kvplanConfig.cmake")
if(NOT config)
  message(FATAL_ERROR "the install has no kvplanConfig.cmake")
endif()

run("${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DCMAKE_C_FLAGS=${FLAGS}" "-DCMAKE_CXX_FLAGS=${FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${FLAGS}"
    "-DCONSUMER_LINK_C_AS_CXX=${LINK_C_AS_CXX}")
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
foreach(program consumer_cpp consumer_c consumer_static)
  run("${WORK_DIR}/build/${program}")
endforeach()
run("${prefix}/bin/kvplan" --version)
