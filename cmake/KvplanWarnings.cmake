# Warnings for kvplan's own targets. Third-party headers come in as system includes, so these
# flags speak only about our code.
function(kvplan_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
    # Designated initializers leave the other members to their default initializers on purpose.
    -Wno-missing-field-initializers)
  # GCC 12 reports -Wrestrict on std::string concatenation at -O3 (GCC bug 105329), a false
  # positive inside libstdc++ that no change to our code avoids.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(KVPLAN_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
