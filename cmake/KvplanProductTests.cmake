# Tests of kvplan as a product, beyond the unit tests: the installed CMake package used by another
# project, the .deb, and what libkvplan.so exports.

# Sanitizer flags reach the consumer project too, or it could not link an instrumented library.
set(_kvplan_consumer_flags "")
if(KVPLAN_SANITIZERS)
  set(_kvplan_consumer_flags "-fsanitize=${KVPLAN_SANITIZERS}")
endif()

add_test(NAME install.consumer
  COMMAND "${CMAKE_COMMAND}"
          "-DBUILD_DIR=${PROJECT_BINARY_DIR}"
          "-DCONSUMER_DIR=${PROJECT_SOURCE_DIR}/tests/consumer"
          "-DWORK_DIR=${PROJECT_BINARY_DIR}/consumer-test"
          "-DGENERATOR=${CMAKE_GENERATOR}"
          "-DC_COMPILER=${CMAKE_C_COMPILER}"
          "-DCXX_COMPILER=${CMAKE_CXX_COMPILER}"
          "-DFLAGS=${_kvplan_consumer_flags}"
          "-DLINK_C_AS_CXX=${KVPLAN_LINK_C_AS_CXX}"
          -P "${PROJECT_SOURCE_DIR}/tests/consumer/check_consumer.cmake")
set_tests_properties(install.consumer PROPERTIES TIMEOUT 300 RESOURCE_LOCK install_tree)

add_test(NAME package.deb
  COMMAND "${CMAKE_COMMAND}"
          "-DBUILD_DIR=${PROJECT_BINARY_DIR}"
          "-DWORK_DIR=${PROJECT_BINARY_DIR}/deb-test"
          "-DVERSION=${PROJECT_VERSION}"
          -P "${PROJECT_SOURCE_DIR}/packaging/check_deb.cmake")
set_tests_properties(package.deb PROPERTIES TIMEOUT 300 RESOURCE_LOCK install_tree)

if(TARGET kvplan_shared)
  add_test(NAME library.exports
    COMMAND "${CMAKE_COMMAND}" "-DLIBRARY=$<TARGET_FILE:kvplan_shared>" "-DSONAME=$<TARGET_SONAME_FILE_NAME:kvplan_shared>"
            "-DMAJOR=${PROJECT_VERSION_MAJOR}" -P "${PROJECT_SOURCE_DIR}/cmake/CheckExports.cmake")
endif()

add_test(NAME packaging.docs
  COMMAND "${CMAKE_COMMAND}" "-DKVPLAN=$<TARGET_FILE:kvplan>" "-DSOURCE_DIR=${PROJECT_SOURCE_DIR}"
          "-DVERSION=${PROJECT_VERSION}" -P "${PROJECT_SOURCE_DIR}/cmake/CheckDocs.cmake")

find_program(BASH_EXECUTABLE bash)
if(BASH_EXECUTABLE)
  add_test(NAME packaging.completion
    COMMAND "${BASH_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/packaging/check_completion.sh" "$<TARGET_FILE_DIR:kvplan>")
endif()

# The web page's tests (docs/web.md), only when a wasm build is named, so the native builds never
# need emscripten: -DKVPLAN_WEB_DIR=/path/to/build-wasm/web (scripts/web-test.sh builds it and runs both).
set(KVPLAN_WEB_DIR "" CACHE PATH "build-wasm/web of a wasm-preset build: adds the web.* tests")
if(KVPLAN_WEB_DIR)
  find_program(KVPLAN_NODE node REQUIRED)
  add_test(NAME web.same_numbers
    COMMAND "${KVPLAN_NODE}" tests/web/same_numbers.mjs --web "${KVPLAN_WEB_DIR}" --kvplan "$<TARGET_FILE:kvplan>"
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
  add_test(NAME web.browser
    COMMAND "${KVPLAN_NODE}" tests/web/browser_test.mjs --web "${KVPLAN_WEB_DIR}" --kvplan "$<TARGET_FILE:kvplan>"
            --screenshot "${CMAKE_BINARY_DIR}/test-artifacts/web.png"
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
endif()
