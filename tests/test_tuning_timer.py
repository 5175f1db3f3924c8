"""gems/runtime/tuning_timer.py: the autotuner's timer queues a spin kernel before every timed run, so the events
bracket device work only; a device without ``_sleep`` gets Triton's own timer; autotune passes it to Triton."""

import types

import pytest
import triton

from gems.runtime import configs, tuning_timer


class _FakeDevice:
    """A device interface that logs what is queued; every run of the timed call lasts 2 ms between its events."""

    def __init__(self):
        self.queue = []

    def _sleep(self, cycles):
        self.queue.append(("spin", cycles))

    def synchronize(self):
        pass

    def Event(self, enable_timing):  # noqa: N802 (torch.cuda.Event's name)
        device = self

        class Event:
            def record(self):
                device.queue.append(("event", self))
                self.at = len([q for q in device.queue if q[0] == "call"])

            def elapsed_time(self, end):
                return 2.0 * (end.at - self.at)

        return Event()


@pytest.fixture
def fake_driver(monkeypatch):
    device = _FakeDevice()
    driver = types.SimpleNamespace(get_device_interface=lambda: device, get_empty_cache_for_benchmark=lambda: None,
                                   clear_cache=lambda cache: device.queue.append(("flush", None)))
    monkeypatch.setattr(type(triton.runtime.driver), "active", property(lambda self: driver), raising=False)
    return device


def test_each_timed_run_follows_a_flush_and_a_spin(fake_driver):
    calls = []

    def fn():
        calls.append(1)
        fake_driver.queue.append(("call", None))

    median, low, high = tuning_timer.device_time(fn, quantiles=(0.5, 0.2, 0.8))
    assert (median, low, high) == (2.0, 2.0, 2.0)
    kinds = [kind for kind, _ in fake_driver.queue]
    timed = [i for i, kind in enumerate(kinds) if kind == "event"][::2]  # every start event
    assert len(timed) >= 5
    for i in timed:  # flush, spin, start, call, end
        assert kinds[i - 2: i + 3] == ["flush", "spin", "event", "call", "event"]
    assert all(cycles >= 20_000 for kind, cycles in fake_driver.queue if kind == "spin")
    assert tuning_timer.device_time(fn, return_mode="median") == 2.0


def test_a_device_without_sleep_takes_tritons_timer(monkeypatch):
    device = types.SimpleNamespace(synchronize=lambda: None)
    driver = types.SimpleNamespace(get_device_interface=lambda: device)
    monkeypatch.setattr(type(triton.runtime.driver), "active", property(lambda self: driver), raising=False)
    seen = {}

    def tritons_timer(fn, **kw):
        seen["kw"] = kw
        return 1.5

    monkeypatch.setattr(triton.testing, "do_bench", tritons_timer)
    assert tuning_timer.device_time(lambda: None, warmup=3, rep=7, return_mode="min") == 1.5
    assert seen["kw"]["rep"] == 7 and seen["kw"]["return_mode"] == "min"


def test_autotune_compares_configs_with_the_device_timer():
    @configs.autotune([triton.Config({"B": 1})], ["n"])
    @triton.jit
    def kernel(x_ptr, n, B: triton.language.constexpr):
        pass

    assert kernel.do_bench is tuning_timer.device_time
