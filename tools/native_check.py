"""Check the native dispatch layer on a device: cold, warm and later calls against ATen (run on the GPU).

    python tools/native_check.py

For each case the first call records a plan and later calls (fresh inputs each time) must be replayed
natively and agree with ATen. Then a CUDA graph captures a warm call, and a cold signature inside a
capture must either run capture-safe or raise gems' clear error. Exit status 1 on any failure.
"""

from __future__ import annotations

import sys

import torch

import gems
from gems import native


def _cases(device):
    def r(*shape, dtype=torch.float32):
        return torch.randn(*shape, device=device).to(dtype)

    return {
        "abs": ("abs", lambda: (r(4096),), torch.abs, {}),
        "neg fp16": ("neg", lambda: (r(4096, dtype=torch.float16),), torch.neg, {}),
        "exp": ("exp", lambda: (r(4096),), torch.exp, {}),
        "add": ("add.Tensor", lambda: (r(4096), r(4096)), torch.add, {}),
        "add alpha": ("add.Tensor", lambda: (r(4096), r(4096)), torch.add, {"alpha": 2}),
        "add scalar": ("add.Tensor", lambda: (r(4096), 2.5), torch.add, {}),
        "mul bf16": ("mul.Tensor", lambda: (r(64, 64, dtype=torch.bfloat16), r(64, 64, dtype=torch.bfloat16)),
                     torch.mul, {}),
        "add int32": ("add.Tensor", lambda: (torch.randint(-9, 9, (4096,), device=device, dtype=torch.int32),) * 2,
                      torch.add, {}),
        "mul broadcast": ("mul.Tensor", lambda: (r(32, 1024), r(1024)), torch.mul, {}),
        "mul transposed": ("mul.Tensor", lambda: (r(64, 128).t(), r(128, 64)), torch.mul, {}),
        "add out=": ("add.out", lambda: (r(4096), r(4096)), torch.add, {"out": "fresh"}),
        "add_ in-place": ("add_.Tensor", lambda: (r(4096), r(4096)), torch.Tensor.add_, {}),
        "sum": ("sum", lambda: (r(32, 1024),), torch.sum, {}),
        "sum dim": ("sum.dim_IntList", lambda: (r(32, 1024),), torch.sum, {"dim": 1}),
        "softmax": ("_softmax", lambda: (r(32, 1024),), torch.softmax, {"dim": -1}),
    }


def main() -> int:
    device = gems.vendor().device
    gems.enable()
    print("native:", gems.native_status())
    failures = []
    for name, (overload, make, fn, kwargs) in _cases(device).items():
        for call in range(4):
            args = make()
            extra = dict(kwargs)
            with gems.aten_only():
                if extra.get("out") == "fresh":
                    extra["out"] = torch.empty_like(args[0])
                ref_args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
                ref_kwargs = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in extra.items()}
                expected = fn(*ref_args, **ref_kwargs)
            before = native.call_counts().get(overload, 0)
            got = fn(*args, **extra)
            served = native.call_counts().get(overload, 0) - before
            with gems.aten_only():
                ok = torch.allclose(got.double(), expected.double(), rtol=1e-3, atol=1e-3, equal_nan=True)
            if not ok:
                failures.append(f"{name}: call {call} differs from ATen")
            if call >= 1 and served != 1:
                failures.append(f"{name}: call {call} was not replayed natively")
    torch.cuda.synchronize() if device == "cuda" else None
    if device == "cuda":
        failures += _graph_checks(device)
    print("replayed calls:", native.call_counts())
    print("replayed launches:", native.launch_counts())
    print("plans:", native.plan_counts())
    print("fallbacks:", gems.call_counts()["fallback"])
    for f in failures:
        print("FAIL", f)
    print("native_check:", "FAILED" if failures else "all passed")
    return 1 if failures else 0


def _graph_checks(device) -> list:
    failures = []
    x = torch.randn(4096, device=device)
    torch.abs(x)
    torch.abs(x)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = torch.abs(x)
    x.copy_(torch.randn(4096, device=device))
    graph.replay()
    torch.cuda.synchronize()
    with gems.aten_only():
        if not torch.equal(y, torch.abs(x)):
            failures.append("CUDA graph of a warm abs replays a wrong result")
    z = torch.randn(3, 5, 7, device=device, dtype=torch.float64)  # a signature (and kernel) never seen
    try:
        graph2 = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph2):
            torch.exp(z)
        print("cold signature in capture: ran capture-safe")
    except RuntimeError as exc:
        print("cold signature in capture raised:", str(exc)[:300])
        if "graph capture" not in str(exc):
            failures.append(f"cold call in capture: unclear error {exc}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
