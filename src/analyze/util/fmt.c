/* fmt.c — byte amounts for people (see fmt.h). */
#include <math.h>
#include <stdio.h>

#include "analyze/util/fmt.h"

const char *prof__fmt_byte_unit(double max_bytes, double *scale) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double s = 1;
  int u = 0;
  while (max_bytes >= 1024 * s && u < 4) {
    s *= 1024;
    u++;
  }
  if (scale) *scale = s;
  return units[u];
}

const char *prof__fmt_bytes(char *buf, size_t n, double bytes) {
  double s;
  const char *u = prof__fmt_byte_unit(fabs(bytes), &s);
  if (s == 1) snprintf(buf, n, "%.0f B", bytes);
  else snprintf(buf, n, "%.1f %s", bytes / s, u);
  return buf;
}
