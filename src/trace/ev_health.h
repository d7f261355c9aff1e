/* ev_health.h — the training-health family of the event contract: SCALAR
 * events written by prof_scalar() (src/health) and read by the health section
 * and the TensorBoard export; tensor histograms travel in HIST chunks
 * (trace/rec_hist.h). Values are part of the format.
 *
 *   SCALAR  name: tag id, a: the value's double bits, b: step number
 */
#ifndef PROF_EV_HEALTH_H
#define PROF_EV_HEALTH_H

#include <stdint.h>

#include "trace/event.h"

static inline double prof__ev_scalar_value(const prof__event *ev) { return prof__bits_f64(ev->a); }
static inline uint64_t prof__ev_scalar_step(const prof__event *ev) { return ev->b; }

#endif /* PROF_EV_HEALTH_H */
