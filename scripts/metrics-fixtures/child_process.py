"""What every server process of a fixture shares: prometheus_client on the scripted clock, with a fixed
process id in multiprocess mode, and config objects that answer None for what was not set."""
import os

import load as L


class Cfg:
    """A config namespace: the fields given, and None for anything else the metrics code asks for."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __getattr__(self, name):
        return None


class ScriptedClock:
    """prometheus_client's `time` module stand-in: the scripted time, set by the caller."""
    now = L.EPOCH

    def time(self):
        return self.now


def prometheus_setup(mp_dir, fake_pid):
    """Points prometheus_client at the scripted clock and, with `mp_dir`, at that multiprocess directory
    under the fixed process id `fake_pid` (file names, pid labels and the collector's order repeat);
    drops its own process, platform and gc collectors (not the servers' metrics). Returns the clock."""
    if mp_dir:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = mp_dir
    else:
        os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
    import prometheus_client
    from prometheus_client import REGISTRY
    clock = ScriptedClock()
    prometheus_client.metrics.time = clock
    if mp_dir:
        prometheus_client.values.ValueClass = prometheus_client.values.MultiProcessValue(lambda: fake_pid)
    for c in (prometheus_client.PROCESS_COLLECTOR, prometheus_client.PLATFORM_COLLECTOR,
              prometheus_client.GC_COLLECTOR):
        try:
            REGISTRY.unregister(c)
        except KeyError:
            pass
    return clock


def public(output):
    """A request output as sent to another process: without the scheduler's request object."""
    return {k: v for k, v in output.items() if k != "req"}
