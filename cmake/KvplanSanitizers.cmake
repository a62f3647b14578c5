# Sanitizers for every target of the build (KVPLAN_SANITIZERS, e.g. "address,undefined"; the
# sanitize and fuzz presets set it). Any finding aborts: UBSan does not recover.
# With KVPLAN_BUILD_FUZZERS the code is also instrumented for libFuzzer's coverage feedback.

if(KVPLAN_BUILD_FUZZERS AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "KVPLAN_BUILD_FUZZERS needs clang (libFuzzer): use the fuzz preset "
                      "(CC=clang CXX=clang++), not ${CMAKE_CXX_COMPILER_ID}")
endif()

if(KVPLAN_SANITIZERS)
  add_compile_options(-fsanitize=${KVPLAN_SANITIZERS} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${KVPLAN_SANITIZERS} -fno-sanitize-recover=all)
endif()

if(KVPLAN_BUILD_FUZZERS)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# A C program linking the instrumented libkvplan.so needs the sanitizers' C++ runtime (UBSan's
# vptr checks) and libstdc++, which only the C++ driver links: such programs link as C++.
set(KVPLAN_LINK_C_AS_CXX OFF)
if(KVPLAN_SANITIZERS)
  set(KVPLAN_LINK_C_AS_CXX ON)
endif()
