# kvplan_link_static(<target>): link an executable fully static and not position-independent, so
# that it starts with no dynamic loader and no relocation pass at all (docs/performance.md).
#
# Plain -static, with two additions:
# - the linker writes the .eh_frame_hdr search table (gcc asks for it only when linking
#   dynamically), and crtbeginT.o's registration of the unwind tables is sent to a function that
#   does nothing (src/cli/static_unwind.c says why: 27 M instructions on the first exception);
# - --gc-sections drops the archive members' unreferenced sections (870 KB of 8.6 MB).
function(kvplan_link_static target)
  target_sources(${target} PRIVATE "${PROJECT_SOURCE_DIR}/src/cli/static_unwind.c")
  target_link_options(${target} PRIVATE -static "LINKER:--eh-frame-hdr" "LINKER:--gc-sections"
    "LINKER:--wrap=__register_frame_info" "LINKER:--wrap=__deregister_frame_info")
endfunction()
