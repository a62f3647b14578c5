# The package.deb test (cmake -P): `cpack -G DEB` in the build directory makes a .deb; unpacked
# with dpkg-deb -x, it holds usr/bin/kvplan, which runs from PATH, with its man page and completions.
# -D variables: BUILD_DIR, WORK_DIR, VERSION

function(run out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "failed (${code}): ${ARGN}\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

find_program(DPKG_DEB dpkg-deb)
if(NOT DPKG_DEB)
  message(FATAL_ERROR "dpkg-deb not found (Debian's dpkg package)")
endif()
get_filename_component(cmake_bin_dir "${CMAKE_COMMAND}" DIRECTORY)
find_program(CPACK cpack HINTS "${cmake_bin_dir}" REQUIRED)

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
run(out "${CPACK}" -G DEB --config "${BUILD_DIR}/CPackConfig.cmake" -B "${WORK_DIR}")
file(GLOB debs "${WORK_DIR}/kvplan_${VERSION}*.deb")
list(LENGTH debs n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one kvplan_${VERSION}_*.deb in ${WORK_DIR}, found: ${debs}")
endif()
message(STATUS "built ${debs}")

run(info "${DPKG_DEB}" --info "${debs}")
foreach(field "Package: kvplan" "Version: ${VERSION}" "Depends: ")
  string(FIND "${info}" "${field}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the .deb's control has no '${field}':\n${info}")
  endif()
endforeach()

run(contents "${DPKG_DEB}" -x "${debs}" "${WORK_DIR}/root")
foreach(file usr/bin/kvplan usr/share/man/man1/kvplan.1 usr/share/bash-completion/completions/kvplan
             usr/share/zsh/vendor-completions/_kvplan usr/include/kvplan/kvplan.h)
  if(NOT EXISTS "${WORK_DIR}/root/${file}")
    message(FATAL_ERROR "the .deb does not install /${file}")
  endif()
endforeach()

# Installed, kvplan is found on PATH: run it by name with only the package's bin directory there.
run(version "${CMAKE_COMMAND}" -E env "PATH=${WORK_DIR}/root/usr/bin" kvplan --version)
if(NOT version MATCHES "^kvplan ${VERSION}")
  message(FATAL_ERROR "kvplan --version from the .deb printed: ${version}")
endif()
run(table "${CMAKE_COMMAND}" -E env "PATH=${WORK_DIR}/root/usr/bin" kvplan --model llama3.1-8b --ctx 128k --gpu 4090)
string(FIND "${table}" "131,072  fp16" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the packaged kvplan printed an unexpected table:\n${table}")
endif()
message(STATUS "${version}")
