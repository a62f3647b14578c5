# `cmake --install`: the binary, the public headers under include/kvplan/, libkvplan.a and .so,
# a CMake package (find_package(kvplan) gives kvplan::kvplan), the man page and shell completions.
# `cpack -G DEB` turns the same install into a .deb that puts kvplan in /usr/bin.

include(CMakePackageConfigHelpers)

set(KVPLAN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/kvplan" CACHE STRING
    "Where kvplanConfig.cmake is installed, relative to the prefix")
set(KVPLAN_BASH_COMPLETION_DIR "${CMAKE_INSTALL_DATADIR}/bash-completion/completions" CACHE STRING
    "Where the bash completion is installed, relative to the prefix")
# Debian's zsh looks in vendor-completions; other systems use site-functions.
set(KVPLAN_ZSH_COMPLETION_DIR "${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions" CACHE STRING
    "Where the zsh completion is installed, relative to the prefix")

install(TARGETS kvplan RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(TARGETS ${KVPLAN_LIBRARY_TARGETS} EXPORT kvplanTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/kvplan" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
  FILES_MATCHING PATTERN "*.h")
install(EXPORT kvplanTargets NAMESPACE kvplan:: DESTINATION "${KVPLAN_INSTALL_CMAKEDIR}")

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/kvplanConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/kvplanConfig.cmake"
  INSTALL_DESTINATION "${KVPLAN_INSTALL_CMAKEDIR}")
# 0.x: a minor version may break the API, so only the same major.minor is compatible.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/kvplanConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/kvplanConfig.cmake" "${PROJECT_BINARY_DIR}/kvplanConfigVersion.cmake"
  DESTINATION "${KVPLAN_INSTALL_CMAKEDIR}")

install(FILES "${PROJECT_SOURCE_DIR}/packaging/kvplan.1" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1")
install(FILES "${PROJECT_SOURCE_DIR}/packaging/completions/kvplan.bash"
  DESTINATION "${KVPLAN_BASH_COMPLETION_DIR}" RENAME kvplan)
install(FILES "${PROJECT_SOURCE_DIR}/packaging/completions/_kvplan" DESTINATION "${KVPLAN_ZSH_COMPLETION_DIR}")

# ---- cpack -G DEB (run in the build directory) ----
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kvplan)
set(CPACK_PACKAGE_VENDOR kvplan)
set(CPACK_PACKAGE_CONTACT "kvplan maintainers <kvplan@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION "kvplan answers whether a model, at a context length and concurrency, fits on a GPU, \
and with which KV-cache dtype, in exact bytes. Includes libkvplan (C++ and C API) and its CMake package.")
set(CPACK_PACKAGE_HOMEPAGE_URL "${PROJECT_HOMEPAGE_URL}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
# Dependencies from the binaries themselves (dpkg-shlibdeps, in dpkg-dev), else the known list.
find_program(KVPLAN_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(KVPLAN_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34), libfmt9, libgcc-s1, libstdc++6 (>= 12), libyaml-cpp0.7")
endif()
# The headers include nlohmann/json_fwd.hpp and the static library needs libfmt: only for building
# against libkvplan, not for running kvplan.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nlohmann-json3-dev, libfmt-dev")
set(CPACK_STRIP_FILES ON)
include(CPack)
