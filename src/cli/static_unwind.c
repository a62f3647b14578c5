/* Linked into the kvplan executable only when it is linked fully static (cmake/KvplanStaticLink.cmake).
 *
 * gcc starts a -static program with crtbeginT.o, which hands the whole .eh_frame section to
 * libgcc's unwinder (__register_frame_info). The first exception thrown then sorts every frame
 * description of the binary before it can look one up: 27 M instructions for `kvplan --version`,
 * whose CLI11 parser throws to say it is done. Without the registration the unwinder asks
 * dl_iterate_phdr, which a static glibc program answers too, and binary-searches the
 * .eh_frame_hdr table the linker writes (--eh-frame-hdr), as it does in every dynamically linked
 * program. The linker sends crtbeginT.o's two calls here (--wrap), where they do nothing. */

struct object;

void __wrap___register_frame_info(const void* begin, struct object* ob);
void* __wrap___deregister_frame_info(const void* begin);

void __wrap___register_frame_info(const void* begin, struct object* ob) {
  (void)begin;
  (void)ob;
}

void* __wrap___deregister_frame_info(const void* begin) {
  (void)begin;
  return 0;
}
