/* gpupart-dev-nocuda: a plain C program that never touches CUDA. The tests start it under
 * the shim to check that LD_PRELOAD of libgpupart-shim.so leaves such a process alone.
 *
 * stdout:
 *   nocuda pid <pid> ok <sum of 1..1000000>      (always 500000500000)
 *   ld_preload <value of LD_PRELOAD, or (unset)>
 * Exit 0. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

int main(void) {
  unsigned long long sum = 0;
  for (unsigned long long i = 1; i <= 1000000ULL; ++i) sum += i;

  const char *preload = getenv("LD_PRELOAD");
  printf("nocuda pid %ld ok %llu\n", (long)getpid(), sum);
  printf("ld_preload %s\n", preload != NULL ? preload : "(unset)");
  return 0;
}
