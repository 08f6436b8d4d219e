/* static-init: the floor for `npm run bench:boot`. A trivial static init on the same
 * kernel: print the guest uptime (CLOCK_MONOTONIC counts from boot) and power off.
 * Our PID 1's ready time is reported as a ratio of this one's. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/reboot.h>

int main(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  printf("STATIC READY uptime=%.3fs\n", ts.tv_sec + ts.tv_nsec / 1e9);
  fflush(stdout);
  sync();
  reboot(RB_POWER_OFF);
  for (;;) pause();
}
