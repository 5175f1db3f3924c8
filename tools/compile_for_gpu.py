"""Compile the kernels that operators launch for an NVIDIA GPU, on a machine without one.

The interpreter runs kernels on the CPU but never compiles them, so a kernel can pass every CPU test
and still fail to compile for the GPU (a libdevice name, a reduction over a 3-d tile, a bitcast). This
script selects the nvidia vendor's configuration without its device, runs the operators' quick
conformance samples on CPU tensors with every kernel launch replaced by ``triton.compile`` for the
target (sm_90 by default), and reports each kernel specialization that fails. Results of the calls are
garbage (nothing runs); only compilation is checked. Arguments are specialized as Triton's launcher does
(16-byte-aligned pointers and integers divisible by 16 marked so, integers equal to 1 made constants), so
the code is what the GPU would run for these samples' layouts.

With ``--dump DIR``, each specialization's PTX and SASS go to DIR, and DIR/summary.tsv lists its registers
per thread, stack bytes (spills), shared memory and SASS instructions (cuobjdump and nvdisasm from Triton's
wheel): a static look at a kernel change, before a GPU measures it.

    python tools/compile_for_gpu.py --ops softmax,log_softmax,cumsum [--arch 90] [--dump runs/sass]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import traceback
import types
from pathlib import Path

os.environ.pop("TRITON_INTERPRET", None)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's gems, not an installed one

import torch  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from gems.runtime import launch, registration, selection  # noqa: E402

_TYPES = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32", torch.float64: "fp64",
          torch.int8: "i8", torch.int16: "i16", torch.int32: "i32", torch.int64: "i64", torch.uint8: "u8",
          torch.bool: "i1"}


_DIVISIBLE = [["tt.divisibility", 16]]


def _signature(kernel, args):
    """(signature, constexprs, attrs) as Triton's launcher makes them for these arguments."""
    signature, constexprs, attrs = {}, {}, {}
    for index, (param, value) in enumerate(zip(kernel.params, args)):
        specialize = not param.do_not_specialize
        if param.is_constexpr:
            signature[param.name], constexprs[param.name] = "constexpr", value
        elif param.annotation_type:  # a typed scalar (seed: tl.int64) is launched with its annotation's type
            signature[param.name] = param.annotation_type
        elif isinstance(value, torch.Tensor):
            signature[param.name] = "*" + _TYPES[value.dtype]
            if value.data_ptr() % 16 == 0 and not param.do_not_specialize_on_alignment:
                attrs[(index,)] = _DIVISIBLE
        elif isinstance(value, float):
            signature[param.name] = "fp32"
        elif isinstance(value, bool):
            signature[param.name] = "i1"
        elif isinstance(value, int) and specialize and value == 1:
            signature[param.name], constexprs[param.name] = "constexpr", 1
        elif isinstance(value, int):
            signature[param.name] = "i32" if -(2**31) <= value < 2**31 else "i64"
            if specialize and value % 16 == 0 and not param.do_not_specialize_on_alignment:
                attrs[(index,)] = _DIVISIBLE
        else:
            raise TypeError(f"{param.name}: cannot type {value!r}")
    return signature, constexprs, attrs


def _tool(name: str) -> str:
    return getattr(triton.knobs.nvidia, name).path


def _dump(compiled, name: str, directory: Path) -> str:
    """Writes the PTX and SASS of ``compiled`` as ``name``.ptx/.sass; its summary.tsv line's fields."""
    (directory / f"{name}.ptx").write_text(compiled.asm["ptx"])
    with tempfile.NamedTemporaryFile(suffix=".cubin") as cubin:
        cubin.write(compiled.asm["cubin"])
        cubin.flush()
        usage = subprocess.run([_tool("cuobjdump"), "--dump-resource-usage", cubin.name], capture_output=True,
                               text=True).stdout
        sass = subprocess.run([_tool("nvdisasm"), "-c", cubin.name], capture_output=True, text=True).stdout
    (directory / f"{name}.sass").write_text(sass)
    fields = {key: re.search(rf"{key}:(\d+)", usage) for key in ("REG", "STACK", "SHARED")}
    instructions = len(re.findall(r"^\s+/\*[0-9a-f]{4,}\*/", sass, flags=re.MULTILINE))
    return "\t".join([*(m.group(1) if m else "?" for m in fields.values()), str(instructions)])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", required=True, help="comma-separated operator names")
    parser.add_argument("--arch", type=int, default=90)
    parser.add_argument("--dump", type=Path, metavar="DIR", help="write each specialization's PTX and SASS here, "
                        "and summary.tsv: registers, stack, shared memory, SASS instructions")
    args = parser.parse_args(argv)
    summary, sampled = [], [""]  # sampled: the operator whose samples run (codegen kernels are all "kernel")
    if args.dump:
        args.dump.mkdir(parents=True, exist_ok=True)

    # The heuristics ask the device for its SM count: answer as an H100/H200 would.
    torch.cuda.current_device = lambda: 0
    torch.cuda.get_device_properties = lambda device=None: types.SimpleNamespace(multi_processor_count=132)
    selection._current = selection.load_backend("nvidia")
    target = GPUTarget("cuda", args.arch, 32)
    done, failures = set(), []

    def compile_instead(self, grid_x, grid_y, grid_z, num_warps, num_stages, launch_args):
        signature, constexprs, attrs = _signature(self.kernel, launch_args)
        key = (self.kernel.fn.__qualname__, tuple(signature.items()), repr(sorted(constexprs.items())),
               repr(sorted(attrs)), num_warps)
        if key in done:
            return
        done.add(key)
        try:
            compiled = triton.compile(ASTSource(self.kernel, signature, constexprs, attrs), target=target,
                                      options={"num_warps": num_warps or 4})
        except Exception as exc:  # report every failing specialization, not only the first
            failures.append((key, f"{type(exc).__name__}: {exc}"[:2000]))
            return
        if args.dump:
            name = f"{sampled[0]}-{self.kernel.fn.__name__}-{len(done)}"
            constants = " ".join(f"{k}={v}" for k, v in sorted(constexprs.items()))
            summary.append(f"{name}\t{num_warps or 4}\t{_dump(compiled, name, args.dump)}\t{constants}")

    launch.Launcher._launch = compile_instead
    launch.Launcher.fast = False

    import gems
    from gems import ops

    table = gems._implementation_table(include=args.ops.split(","))
    registration.apply(table, "CPU")
    for name in args.ops.split(","):
        spec = ops.get(name)
        sampled[0] = name
        for dtype in spec.dtypes:
            for sample in spec.samples(dtype, "cpu", True):
                with registration.aten_only():  # inputs made by ATen: gems' kernels compute nothing here
                    sample = sample.built()
                try:
                    (sample.call or spec.call)(*sample.args, **sample.kwargs)
                except Exception:
                    pass  # error variants raise; results are garbage anyway
    registration.apply({}, None)
    if args.dump:
        header = "kernel\twarps\tregisters\tstack\tshared\tsass_instructions\tconstexprs\n"
        (args.dump / "summary.tsv").write_text(header + "".join(line + "\n" for line in summary))
        print(f"wrote {len(summary)} specializations' PTX and SASS, and summary.tsv, to {args.dump}")
    print(f"compiled {len(done)} kernel specializations for sm_{args.arch}; {len(failures)} failed")
    for (kernel, signature, constexprs, warps), why in failures:
        print(f"\n{kernel} num_warps={warps} {dict(signature)}\n  constexprs {constexprs}\n  {why}")
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:
        traceback.print_exc()
        sys.exit(2)
