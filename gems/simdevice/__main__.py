"""``python -m gems.simdevice``: build the simulated device's extension now (CI does this once, before
the test processes that load it from the cache) and say where it is and how long it took."""

import time

from gems import simdevice

started = time.perf_counter()
simdevice.load()
print(f"simulated device '{simdevice.DEVICE}' ready in {time.perf_counter() - started:.1f} s "
      f"(build cache: {simdevice.build_dir()})")
