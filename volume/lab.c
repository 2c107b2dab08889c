/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The scheduling lab's parameters: device=, device-params=,
 * device-speed=, nr-requests=, elevator=, elevator-params=, kernel=,
 * hz= put a simulated device
 * (backend/sim/sim.h) between the engine and the image. */
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../backend/kseries.h"
#include "../backend/sim/model.h"
#include "../backend/sim/sim.h"
#include "../backend/trace.h"
#include "internal.h"

static bool
device_wanted (const struct dmcrypt_params *p)
{
  return p->device && strcmp (p->device, "none") != 0;
}

static struct sim_config
lab_config (const struct dmcrypt_params *p)
{
  return (struct sim_config) {
    .device = p->device, .device_params = p->device_params,
    .speed = p->device_speed, .nr_requests = p->nr_requests,
    .elevator = p->elevator,
    .elevator_params = p->elevator_params,
    .kernel = p->kernel == KSERIES_NONE ? NULL
      : kernel_series_name (p->kernel),
    .hz = p->hz,
  };
}

int
lab_check_params (const struct dmcrypt_params *p)
{
  struct sim_config cfg = lab_config (p);

  if (!device_wanted (p)) {
    /* An explicit device=none says the rest does not apply (a test may
     * say it over settings forced on a whole suite). */
    if (p->device == NULL
        && (p->device_params || p->device_speed
            || p->nr_requests || p->elevator
            || p->elevator_params || p->hz)) {
      nbdkit_error ("device-params, device-speed, nr-requests, elevator, "
                    "elevator-params and hz need a device model: "
                    "device= one of %s", device_model_names ());
      return -1;
    }
    return 0;
  }
  return sim_check_config (&cfg);
}

int
lab_wrap_backend (struct dmcrypt_volume *v)
{
  struct sim_config cfg = lab_config (&v->params);
  struct backend *sim;

  if (!device_wanted (&v->params))
    return 0;
  if ((sim = backend_sim_wrap (v->backend, &cfg)) == NULL)
    return -1;
  v->backend = sim;
  return 0;
}

int
lab_start (struct dmcrypt_volume *v)
{
  return device_wanted (&v->params) ? backend_sim_start (v->backend) : 0;
}

void
lab_attach_trace (struct dmcrypt_volume *v)
{
  if (device_wanted (&v->params) && v->backend->trace)
    trace_set_clock (v->backend->trace, backend_sim_clock, v->backend);
}
