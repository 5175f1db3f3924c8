"""A tensor-parallel model run (:mod:`gems.models.parallel` splits the model): one process per device (NCCL on
GPUs, gloo on the CPU interpreter), each building the same model from the same seed; rank 0 reports.

Answers: the sharded model's logits and loss against the same model on one device, ATen's and gems' side by
side. Speed: the decoder workloads of :mod:`gems.models.speed` that need no CUDA graph, ATen and gems
alternating, all ranks in step (the all-reduces keep them so).
"""

from __future__ import annotations

import json
import os
import socket
import tempfile

import torch
import torch.distributed as dist

from gems.models import answers, speed
from gems.models.parallel import shard

QUANTITIES = ("logits", "loss")


def _forward(model, inputs) -> dict:
    with torch.no_grad():
        out = model(**inputs)
    return {"logits": out.logits.detach().to("cpu", torch.float64), "loss": out.loss.detach().to("cpu", torch.float64)}


def answers_and_speed(spec, dtype, backend, rank: int, world: int, options: dict) -> dict:
    from gems.models import build
    from gems.perf.runner import gems_off

    device = f"cuda:{rank}" if backend.device == "cuda" else backend.device
    model = build.build(spec)
    whole = build.placed(model, dtype, device)
    sharded = build.placed(model, dtype, device)
    shard(sharded, rank, world)
    inputs = {k: v.to(device) for k, v in answers.make_inputs(spec, *spec.workloads.answers).items()}
    aten = lambda: gems_off(backend.dispatch_key)  # noqa: E731
    found = {}
    for side, context in (("aten", aten), ("gems", speed.gems_context)):
        with context():
            one, split = _forward(whole, inputs), _forward(sharded, inputs)
        found[side] = {q: float((split[q] - one[q]).abs().max()) for q in QUANTITIES}
        found.setdefault("scale", {q: float(one[q].abs().max()) for q in QUANTITIES})
    rows = []
    for q in QUANTITIES:
        floor = answers.FLOOR.get(dtype, 0.0) * max(found["scale"][q], 1.0)
        rows.append(answers.Answer(f"{q}: {world} devices vs one", found["aten"][q], found["gems"][q],
                                   found["scale"][q], floor).as_dict())
    del whole
    timed = []
    if "speed" in options["measures"]:
        sides = {"aten": aten, "gems": speed.gems_context}
        for workload in speed.workloads(sharded, spec, device, ("prefill", "decode", "train")):
            times = speed.time_workload(workload, device, sides, options["rounds"])
            timed.append(speed.summarize(workload, times))
    return {"answers": rows, "speed": timed, "world": world, "device": device}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_parallel(world: int, options: dict) -> dict:
    """Start ``world`` processes running :func:`_rank_main` and return rank 0's results."""
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory() as folder:
        result_file = os.path.join(folder, "rank0.json")
        port = _free_port()
        mp.spawn(_rank_main, args=(world, port, options, result_file), nprocs=world, join=True)
        with open(result_file) as handle:
            return json.load(handle)


def _rank_main(rank: int, world: int, port: int, options: dict, result_file: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    import gems
    from gems.models import build
    from gems.runtime import selection

    backend = selection.select(options["vendor"], why="gems-perf --model-devices") if options.get("vendor") else \
        selection.current()
    device = backend.device
    if device == "cuda":
        torch.cuda.set_device(rank)
    dist.init_process_group("nccl" if device == "cuda" else "gloo", rank=rank, world_size=world)
    try:
        gems.enable()
        spec = build.from_preset(options["model"], options["size"]) if options.get("model") else \
            build.from_config_file(options["config_file"])
        result = answers_and_speed(spec, build.dtype_of(options["dtype"]), backend, rank, world, options)
        if rank == 0:
            with open(result_file, "w") as handle:
                json.dump(result, handle)
    finally:
        dist.destroy_process_group()
