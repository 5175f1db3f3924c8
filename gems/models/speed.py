"""Speed: a model's workloads timed with ATen's kernels and with gems', alternating in one process.

Each workload is a :class:`Workload`: ``prepare()`` (untimed: inputs, a prefilled KV cache, a captured CUDA
graph; before every run where a run consumes its state) and ``run(state)`` (timed with the wall clock
between two device synchronisations: end-to-end time, host work included, which is what a model engineer
waits for). Rounds alternate ATen and gems, A B A B, so
drift hits both alike; the median of each side is reported.
"""

from __future__ import annotations

import contextlib
import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from gems.models.answers import make_inputs
from gems.models.build import DECODER, ModelSpec, cache_argument, returned_cache

TRAIN_LEARNING_RATE = 1e-5  # small: random-weight models stay finite over the timed steps


@dataclass
class Workload:
    name: str                      # "prefill", "decode", "decode (CUDA graph)", "train step (foreach AdamW)"...
    batch: int
    tokens: int                    # tokens per sequence processed per run (decode: generated tokens)
    prepare: Callable[[], object]  # -> state handed to run
    run: Callable[[object], None]
    units: int                     # tokens per run, for tokens/s
    fresh: bool = False            # a run consumes its state (a growing KV cache): prepare before every run
    graph: bool = False            # replays a CUDA graph: nothing to trace

    @property
    def kind(self) -> str:
        """prefill, decode, graph, train or forward (--model-workloads)."""
        return "graph" if self.graph else self.name.split()[0]


def gems_context():
    """gems as registered (the harness enables it once): the gems side of a comparison."""
    return contextlib.nullcontext()


def synchronize(device: str) -> None:
    module = getattr(torch, torch.device(device).type, None)
    if module is not None and hasattr(module, "synchronize"):
        module.synchronize()


KINDS = ("prefill", "decode", "graph", "train", "forward")


def workloads(model: torch.nn.Module, spec: ModelSpec, device: str, kinds=None) -> list[Workload]:
    """The workloads of a decoder (prefill, decode at each batch, CUDA-graph decode, training steps) or of
    an encoder (forward with a padding mask, training steps); ``kinds`` (of KINDS) selects some."""
    return [w for w in _all_workloads(model, spec, device) if not kinds or w.kind in kinds]


def _all_workloads(model, spec, device) -> list[Workload]:
    w = spec.workloads
    found = []
    if spec.kind == DECODER:
        found.append(_prefill(model, spec, device, *w.prefill))
        for batch in w.decode_batches:
            found.append(_decode(model, spec, device, batch, w.decode_prompt, w.decode_tokens))
        if torch.device(device).type == "cuda":
            for batch in w.decode_batches:
                found.append(_graph_decode(model, spec, device, batch, w.decode_prompt, w.decode_tokens))
    else:
        found.append(_forward(model, spec, device, *w.forward))
    for form in ("foreach", "fused"):
        found.append(_train_step(model, spec, device, *w.train, form))
    return found


def _ids(spec, batch, tokens, device, seed=2):
    return {k: v.to(device) for k, v in make_inputs(spec, batch, tokens, seed).items()}


def _prefill(model, spec, device, batch, tokens) -> Workload:
    def prepare():
        model.eval()
        return _ids(spec, batch, tokens, device)["input_ids"]

    def run(ids):
        with torch.no_grad():
            model(input_ids=ids, use_cache=False)

    return Workload("prefill", batch, tokens, prepare, run, batch * tokens)


def _forward(model, spec, device, batch, tokens) -> Workload:
    def prepare():
        model.eval()
        inputs = _ids(spec, batch, tokens, device)
        return {"input_ids": inputs["input_ids"], "attention_mask": inputs["attention_mask"]}

    def run(inputs):
        with torch.no_grad():
            model(**inputs)

    return Workload("forward (padding mask)", batch, tokens, prepare, run, batch * tokens)


def _decode(model, spec, device, batch, prompt, tokens) -> Workload:
    """Greedy decoding with a KV cache (DynamicCache), token by token, as generate() runs it."""
    keyword = cache_argument(model)

    def prepare():
        model.eval()
        ids = _ids(spec, batch, prompt, device)["input_ids"]
        with torch.no_grad():
            out = model(input_ids=ids, use_cache=True)
        return returned_cache(out), out.logits[:, -1:].argmax(-1)

    def run(state):
        cache, token = state
        with torch.no_grad():
            for _ in range(tokens):
                logits = model(input_ids=token, use_cache=True, **{keyword: cache}).logits
                token = logits[:, -1:].argmax(-1)

    return Workload("decode", batch, tokens, prepare, run, batch * tokens, fresh=True)


def _graph_decode(model, spec, device, batch, prompt, tokens) -> Workload:
    """One decode step captured in a CUDA graph over a StaticCache, replayed token by token, as inference
    servers run decoding. Each side captures its own graph (under its own kernels)."""
    from transformers import StaticCache

    keyword = cache_argument(model)

    def prepare():
        model.eval()
        ids = _ids(spec, batch, prompt, device)["input_ids"]
        cache = StaticCache(config=model.config, max_cache_len=prompt + tokens + 4)
        with torch.no_grad():
            out = model(input_ids=ids, use_cache=True, cache_position=torch.arange(prompt, device=device),
                        **{keyword: cache})
            token = out.logits[:, -1:].argmax(-1)
            position = torch.tensor([prompt], device=device)
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):  # warm-up off the capturing stream: compiles, tunes, records plans
                for _ in range(3):
                    model(input_ids=token, use_cache=True, cache_position=position, **{keyword: cache})
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                logits = model(input_ids=token, use_cache=True, cache_position=position, **{keyword: cache}).logits
                next_token = logits[:, -1:].argmax(-1)
        return graph, token, position, next_token, cache

    def run(state):
        graph, token, position, next_token, cache = state
        for layer in cache.layers:  # each replayed update advances the layer's own write position: rewind it
            layer.cumulative_length.fill_(prompt)
        for step in range(tokens):
            position.fill_(prompt + step)
            graph.replay()
            token.copy_(next_token)

    return Workload("decode (CUDA graph)", batch, tokens, prepare, run, batch * tokens, graph=True)


def _train_step(model, spec, device, batch, tokens, form) -> Workload:
    """Forward, backward and an AdamW step (``foreach`` or ``fused``), dropout active."""

    def prepare():
        model.train()
        options = {"foreach": True} if form == "foreach" else {"fused": True}
        return _ids(spec, batch, tokens, device), torch.optim.AdamW(model.parameters(), lr=TRAIN_LEARNING_RATE,
                                                                       **options)

    def run(state):
        inputs, optimizer = state
        model(**inputs).loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return Workload(f"train step ({form} AdamW)", batch, tokens, prepare, run, batch * tokens)


def gems_calls_so_far() -> tuple[int, int]:
    """(calls gems has served, of them replayed by the native layer without Python), since the last reset."""
    from gems import native
    from gems.runtime import registration

    return sum(registration.gems_calls[o] for o in registration.gems_calls), sum(native.call_counts().values())


def time_workload(workload: Workload, device: str, sides: dict, rounds: int, warmup: int = 2,
                  replays: dict | None = None) -> dict[str, list]:
    """{side: [seconds per run]}: each side prepares its own state under its own kernels, warms up, then the
    sides alternate for ``rounds`` rounds. ``replays`` (a dict): filled with {side: [gems calls, of them
    replayed natively]} over the timed runs, each side's."""
    states = {}
    for side, context in sides.items():
        with context():
            states[side] = workload.prepare()
            for _ in range(warmup):
                workload.run(workload.prepare() if workload.fresh else states[side])
            synchronize(device)
    times = {side: [] for side in sides}
    for _ in range(rounds):
        for side, context in sides.items():
            with context():
                if workload.fresh:
                    states[side] = workload.prepare()
                synchronize(device)
                calls_before = gems_calls_so_far() if replays is not None else None
                started = time.perf_counter()
                workload.run(states[side])
                synchronize(device)
                times[side].append(time.perf_counter() - started)
                if calls_before is not None:
                    served, replayed = (now - before for now, before in zip(gems_calls_so_far(), calls_before))
                    counted = replays.setdefault(side, [0, 0])
                    counted[0], counted[1] = counted[0] + served, counted[1] + replayed
    return times


def peak_memory(workload: Workload, device: str, sides: dict) -> dict[str, list]:
    """{side: [(peak bytes, peak bytes above the run's start)]} of one run per side on CUDA, each side alone:
    its state prepared under its own kernels after the timing rounds' states are gone, warmed by one run (AdamW
    creates its moments at its first step), then the allocator's peak reset and one run measured. So a side's
    peak holds the model, its own state (optimizer moments, KV cache, captured graph) and the run, and no other
    side's state."""
    if torch.device(device).type != "cuda":
        return {}
    peaks = {}
    for side, context in sides.items():
        gc.collect()
        with context():
            state = workload.prepare()
            workload.run(state)
            if workload.fresh:
                state = workload.prepare()
            synchronize(device)
            torch.cuda.reset_peak_memory_stats(device)
            resident = torch.cuda.memory_allocated(device)
            workload.run(state)
            synchronize(device)
            peak = torch.cuda.max_memory_allocated(device)
        peaks[side] = [(peak, peak - resident)]
        del state
    return peaks


def summarize(workload: Workload, times: dict[str, list], peaks: dict | None = None,
              replays: dict | None = None) -> dict:
    """One row: medians, spread and the speedup (ATen time / gems time: above 1, gems is faster); with a
    patched side its speedup (ATen time / patched time); with ``peaks``, each side's largest peak memory
    and largest peak above the run's start, in MiB; with ``replays``, each side's gems calls in the timed runs
    and the share the native layer replayed (none where the side served no call: ATen's, a CUDA graph's)."""
    row = {"workload": workload.name, "batch": workload.batch, "tokens": workload.tokens}
    for side, values in times.items():
        median = statistics.median(values)
        row[f"{side}_ms"] = 1e3 * median
        row[f"{side}_tokens_per_s"] = workload.units / median
        row[f"{side}_spread"] = max(values) / min(values)
    if "aten_ms" in row and "gems_ms" in row:
        row["speedup"] = row["aten_ms"] / row["gems_ms"]
    if "aten_ms" in row and "patched_ms" in row:
        row["patched_speedup"] = row["aten_ms"] / row["patched_ms"]
    for side, found in (peaks or {}).items():
        row[f"{side}_peak_mib"] = max(p for p, _ in found) / 2**20
        row[f"{side}_step_mib"] = max(s for _, s in found) / 2**20
    for side, (served, replayed) in (replays or {}).items():
        if served:
            row[f"{side}_calls"], row[f"{side}_native_share"] = served, replayed / served
    return row

