# Warnings for kvplan's own targets. Third-party headers come in as system includes, so these
# flags speak only about our code.
function(kvplan_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
    # Designated initializers leave the other members to their default initializers on purpose.
    -Wno-missing-field-initializers)
  # GCC 12 reports -Wrestrict on std::string concatenation at -O3 (GCC bug 105329), a false
  # positive inside libstdc++ that no change to our code avoids. Its -Warray-bounds,
  # -Wstringop-overflow and -Wstringop-overread do the same for a string moved or appended into a
  # vector (the memcpy in char_traits.h "out of the bounds [0, 32]" of the string object itself,
  # "reading 139 bytes from a region of size 16" of its inline buffer): 60 reports in 15 files once
  # fmt::format stopped being inlined, none of them a real access. The sanitize build (clang,
  # ASan) checks every such access at run time instead.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict -Wno-array-bounds -Wno-stringop-overflow
      -Wno-stringop-overread)
  endif()
  if(KVPLAN_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
