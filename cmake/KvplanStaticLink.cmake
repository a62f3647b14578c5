# kvplan_link_static(<target>): link an executable fully static and not position-independent, so
# that it starts with no dynamic loader and no relocation pass at all (docs/performance.md).
#
# Plain -static, with three additions:
# - the linker writes the .eh_frame_hdr search table (gcc asks for it only when linking
#   dynamically), and crtbeginT.o's registration of the unwind tables is sent to a function that
#   does nothing (src/cli/static_unwind.c says why: 27 M instructions on the first exception);
# - --gc-sections drops the archive members' unreferenced sections (870 KB of 8.6 MB);
# - with lld (scripts/setup.sh installs it), the sections holding the functions the plain command
#   runs are placed first, in the order cmake/startup_order.txt lists them (written by
#   scripts/startup_order.sh). The kernel maps a binary's code 64 KB at a time, on the first touch
#   of each piece; the headline command touched 47 of the 74 pieces of its 4.7 MB of code, and a
#   fault costs as much as ~5,000 instructions here. Placed together, its code spans about 20
#   (issue #10). A name the file lists that the build does not have is skipped: a stale list only
#   costs speed. Without lld the binary is linked as before.
function(kvplan_link_static target)
  target_sources(${target} PRIVATE "${PROJECT_SOURCE_DIR}/src/cli/static_unwind.c")
  target_link_options(${target} PRIVATE -static "LINKER:--eh-frame-hdr" "LINKER:--gc-sections"
    "LINKER:--wrap=__register_frame_info" "LINKER:--wrap=__deregister_frame_info")
  find_program(KVPLAN_LLD NAMES ld.lld DOC "lld, to place the plain command's code together (cmake/KvplanStaticLink.cmake)")
  if(KVPLAN_LLD)
    set(order "${PROJECT_SOURCE_DIR}/cmake/startup_order.txt")
    target_link_options(${target} PRIVATE -fuse-ld=lld "LINKER:--symbol-ordering-file=${order}"
      "LINKER:--no-warn-symbol-ordering")
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${order}")
  endif()
endfunction()
