"""glu_backward(grad, x, dim): the gradient of glu for both halves of x in one launch with two outputs
(views of one grad_input): sigmoid(b) grad for the first half, (1 - s) s grad a for the second, ATen's CUDA
formula. ATen's checks on x are glu's (glu.py).
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.glu import glu_cases, halves, sigmoid
from gems.spec import OpSpec, PerfSpec


@triton.jit
def _glu_backward(grad, a, b):
    s = sigmoid(b)
    return s * grad, (1.0 - s) * s * grad * a


glu_backward_op = PointwiseOp("glu_backward", _glu_backward, operands=3, outputs=2, dtypes=FLOATS)


def _launch(grad_output, self, dim, grad_input):
    first, second, dim = halves(self, dim)
    half = first.shape[dim]
    glu_backward_op(grad_output, first, second,
                    out=(grad_input.narrow(dim, 0, half), grad_input.narrow(dim, half, half)))
    return grad_input


def glu_backward(grad_output, self, dim):
    return _launch(grad_output, self, dim, torch.empty_like(self, memory_format=torch.contiguous_format))


def glu_backward_grad_input(grad_output, self, dim, *, grad_input):
    return _launch(grad_output, self, dim, grad_input.resize_(self.shape))


aten = torch.ops.aten


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    def grad_input(grad, x, dim):
        return aten.glu_backward.grad_input(grad, x, dim, grad_input=x.new_empty(0))

    return glu_cases(dtype, device, quick, aten.glu_backward.default, "glu_backward", grad_shape=True) + [
        Sample("out", lambda: (make_tensor((13, 9), dtype, device), make_tensor((13, 18), dtype, device), 1),
               call=grad_input, expects="glu_backward.grad_input"),
    ]


def _perf_inputs(shape, dtype, device):
    """grad of ``shape``, x twice as long in its last dimension."""
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    x = make_tensor((*shape[:-1], shape[-1] * 2), dtype, device)
    return Sample("perf", (make_tensor(shape, dtype, device), x, x.dim() - 1))


def _perf_bytes(sample, result):
    grad, x, _ = sample.args
    return (grad.numel() + 2 * x.numel()) * x.element_size()  # grad and x read, grad_input written


SPECS = [
    OpSpec(
        name="glu_backward", family="pointwise",
        impls={"glu_backward": glu_backward, "glu_backward.grad_input": glu_backward_grad_input},
        call=aten.glu_backward.default, samples=_samples, dtypes=FLOATS,
        perf=PerfSpec(inputs=_perf_inputs, shapes="pointwise", bytes=_perf_bytes),
    ),
]
