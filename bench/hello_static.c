/* The floor for kvplan's start-up: a C hello world linked -static, as kvplan is. It runs no
 * dynamic loader and no static constructors, so fork + exec + exit of it is what starting any
 * static program costs on the machine. */

#include <stdio.h>

int main(void) {
  puts("hello");
  return 0;
}
