/* The scheduling lab's parameters: device=, device-params=,
 * device-speed=, nr-requests=, elevator=, elevator-params=, kernel=,
 * hz= put a simulated device
 * (backend/sim/sim.h) between the engine and the image. */
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../backend/kseries.h"
#include "../backend/sim/sim.h"
#include "../backend/trace.h"
#include "volume.h"

static bool
device_wanted (void)
{
  return params.device && strcmp (params.device, "none") != 0;
}

static struct sim_config
lab_config (void)
{
  return (struct sim_config) {
    .device = params.device, .device_params = params.device_params,
    .speed = params.device_speed, .nr_requests = params.nr_requests,
    .elevator = params.elevator,
    .elevator_params = params.elevator_params,
    .kernel = params.kernel == KSERIES_NONE ? NULL
      : kernel_series_name (params.kernel),
    .hz = params.hz,
  };
}

int
lab_check_params (void)
{
  struct sim_config cfg = lab_config ();

  if (!device_wanted ()) {
    /* An explicit device=none says the rest does not apply (a test may
     * say it over settings forced on a whole suite). */
    if (params.device == NULL
        && (params.device_params || params.device_speed
            || params.nr_requests || params.elevator
            || params.elevator_params || params.hz)) {
      nbdkit_error ("device-params, device-speed, nr-requests, elevator, "
                    "elevator-params and hz need a device model: "
                    "device=hdd, usb or ssd");
      return -1;
    }
    return 0;
  }
  return sim_check_config (&cfg);
}

int
lab_wrap_backend (void)
{
  struct sim_config cfg = lab_config ();
  struct backend *sim;

  if (!device_wanted ())
    return 0;
  if ((sim = backend_sim_wrap (volume.backend, &cfg)) == NULL)
    return -1;
  volume.backend = sim;
  return 0;
}

int
lab_start (void)
{
  return device_wanted () ? backend_sim_start (volume.backend) : 0;
}

void
lab_attach_trace (void)
{
  if (device_wanted () && volume.backend->trace)
    trace_set_clock (volume.backend->trace, backend_sim_clock,
                     volume.backend);
}
