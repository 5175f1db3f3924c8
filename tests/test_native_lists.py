"""List plans of the native layer (gems/native/list_plans.h, list_record.py): calls over tensor lists
(``_foreach_*``, ``_fused_adam(w)_``, torch.optim's foreach and fused steps) replay from C++ after their first
call, with the same bits as the Python path; lists the key does not cover stay on the Python path, which
raises ATen's errors. On the interpreter vendor the launch primitive is Python (keying, tables and allocation are
C++); on the nvidia vendor the same tests run the CUDA primitive, its table uploads and kernel arguments."""

import contextlib
import copy
import os
import shutil

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import gems
from gems import native
from gems.native.record import NEW_SIGNATURE
from gems.ops.optim.foreach_kernels import VALUES
from gems.runtime import device_tables

pytestmark = [pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None,
                                 reason="no C++ compiler: the native layer cannot be built here"),
              pytest.mark.skipif(gems.vendor().device not in ("cpu", "cuda"),
                                 reason="compares with ATen's kernels on the vendor's device (no simulated one)"),
              pytest.mark.usefixtures("gems_enabled")]

DEVICE = gems.vendor().device
SHAPES = [(i % 5 + 1, 3 + i % 4) for i in range(19)] + [(0,)]  # 20 tensors of mixed sizes, one empty


@contextlib.contextmanager
def python_path():
    """The native layer steps aside: every call runs the Python implementation (the answers to match)."""
    native.extension().set_enabled(False)
    try:
        yield
    finally:
        native.extension().set_enabled(True)


def lists(n, seed, shapes=SHAPES):
    g = torch.Generator().manual_seed(seed)
    return [[torch.randn(s, generator=g).to(DEVICE) for s in shapes] for _ in range(n)]


def same(got, want):
    assert len(got) == len(want)
    assert all(torch.equal(a, b) for a, b in zip(got, want))


def replays(overload):
    return native.call_counts().get(overload, 0)


def test_a_foreach_loop_replays_after_its_first_call_with_the_python_paths_bits():
    for step in range(3):
        xs, ys, zs = lists(3, step)
        want_xs, want_zs = [x.clone() for x in xs], [z.clone() for z in zs]
        with python_path():
            torch._foreach_add_(want_xs, 0.5)
            want_prod = torch._foreach_mul(want_xs, ys)
            torch._foreach_addcmul_(want_zs, want_xs, ys, value=-0.25)
        torch._foreach_add_(xs, 0.5)
        prod = torch._foreach_mul(xs, ys)
        torch._foreach_addcmul_(zs, xs, ys, value=-0.25)
        same(xs, want_xs), same(prod, want_prod), same(zs, want_zs)
        # functional results: fresh tensors laid out as their inputs
        assert all(p.data_ptr() != x.data_ptr() and p.shape == x.shape for p, x in zip(prod[:-1], xs))
    assert (replays("_foreach_add_.Scalar"), replays("_foreach_mul.List"), replays("_foreach_addcmul_.Scalar")) == \
        (2, 2, 2)
    assert native.launch_counts()["_foreach_mul.List"] == 2
    with gems.aten_only():
        torch.testing.assert_close(prod, torch._foreach_mul(xs, ys), rtol=0, atol=0)


def test_scalar_lists_and_scalars_are_read_per_call():
    xs = lists(1, 0)[0]
    for step in range(3):
        scalars = [1.0 + step + i / 8 for i in range(len(xs))]
        with python_path():
            want = torch._foreach_div(xs, scalars)
        same(torch._foreach_div(xs, scalars), want)
    assert replays("_foreach_div.ScalarList") == 2  # new values every call, one plan
    for lr in (0.1, 0.1, 0.2, 0.3, 2):  # a changed Scalar gives the new answer from the same plan
        ys = [x.clone() for x in xs]
        want = [x.clone() for x in xs]
        with python_path():
            torch._foreach_mul_(want, 1 - lr)
        torch._foreach_mul_(ys, 1 - lr)
        same(ys, want)
    assert replays("_foreach_mul_.Scalar") == 3  # 1 - 2 is an int: another signature (recorded)
    ys, zs = lists(2, 6)
    for alpha in (0.5, -2.0):
        want = [y.clone() for y in ys]
        with python_path():
            torch._foreach_add_(want, zs, alpha=alpha)
        torch._foreach_add_(ys, zs, alpha=alpha)
        same(ys, want)
    assert replays("_foreach_add_.List") == 1


def test_a_scalar_list_of_one_value_reaches_the_kernel_as_an_argument_and_uploads_no_new_table():
    # Adam's bias corrections: one value for every row, a new one each step. Carried as table words, each step's
    # values made a new table to upload (pinned memory and a copy on CUDA); as a kernel argument the table holds
    # addresses only and is found in the cache.
    params, exp_avgs, denoms = lists(3, 7)
    denoms = [d.abs() + 0.5 for d in denoms]
    uploads = []
    for step in range(1, 5):
        correction = [1 - 0.999 ** step] * len(denoms)
        step_size = [-1e-2 / (1 - 0.9 ** step)] * len(params)
        want_denoms, want_params = [d.clone() for d in denoms], [p.clone() for p in params]
        with python_path():
            torch._foreach_div_(want_denoms, correction)
            torch._foreach_addcdiv_(want_params, exp_avgs, want_denoms, step_size)
        device_tables.reset_counts()
        torch._foreach_div_(denoms, correction)
        torch._foreach_addcdiv_(params, exp_avgs, denoms, step_size)
        uploads.append(device_tables.counts()["uploads"])
        same(denoms, want_denoms), same(params, want_params)
    assert uploads == [2, 2, 0, 0]  # the Python path's cache (the recorded call), then the native layer's
    assert (replays("_foreach_div_.ScalarList"), replays("_foreach_addcdiv_.ScalarList")) == (3, 3)
    # lists of the same length whose values differ are another signature: their values are table words
    scales = [1.0 + i / 8 for i in range(len(denoms))]
    for _ in range(2):
        want = [d.clone() for d in denoms]
        with python_path():
            torch._foreach_div_(want, scales)
        torch._foreach_div_(denoms, scales)
        same(denoms, want)
    assert replays("_foreach_div_.ScalarList") == 4
    assert native.python_calls()["_foreach_div_.ScalarList"][NEW_SIGNATURE] == 2


def test_scalar_lists_of_changing_values_reach_the_kernel_as_arguments_and_upload_no_new_table():
    # Adam's bias corrections when the parameters have taken different numbers of steps: one value per row, new
    # values every step. Carried as table words, each call made a new table to upload (on an H200 20-25 us through
    # ATen's copy, where ATen's whole call takes 13-27 us); up to VALUES of them are kernel arguments, over a table
    # of the rows' positions that stays the same. An empty tensor has no row: the positions still name the items.
    shapes = SHAPES[:7] + [(0,)] + SHAPES[7:15]
    assert len(shapes) == VALUES
    params, exp_avgs, denoms = lists(3, 8, shapes)
    denoms = [d.abs() + 0.5 for d in denoms]
    counts = [1, 2, 5, 10, 100] * 4
    found = []
    for step in range(1, 6):
        correction = [(1 - 0.999 ** (counts[i] + step)) ** 0.5 for i in range(len(denoms))]
        step_size = [-1e-2 / (1 - 0.9 ** (counts[i] + step)) for i in range(len(params))]
        want_denoms, want_params = [d.clone() for d in denoms], [p.clone() for p in params]
        with python_path():
            torch._foreach_div_(want_denoms, correction)
            torch._foreach_addcdiv_(want_params, exp_avgs, want_denoms, step_size)
            want_ratio = torch._foreach_div(want_params, correction)
        native.extension().table_counts(True)
        torch._foreach_div_(denoms, correction)
        torch._foreach_addcdiv_(params, exp_avgs, denoms, step_size)
        found.append(native.extension().table_counts(True))  # (found, uploaded) by the native layer's replays
        ratio = torch._foreach_div(params, correction)  # a functional form: the same kernel arguments
        same(denoms, want_denoms), same(params, want_params), same(ratio, want_ratio)
    # recorded (the Python path's own cache), the first replays' tables uploaded into the native layer's cache, then
    # found there: values as table words uploaded 2 tables every step
    assert found == [(0, 0), (0, 2)] + [(2, 0)] * 3
    assert (replays("_foreach_div_.ScalarList"), replays("_foreach_addcdiv_.ScalarList"),
            replays("_foreach_div.ScalarList")) == (4, 4, 4)
    assert native.python_calls()["_foreach_div_.ScalarList"][NEW_SIGNATURE] == 1


def test_a_scalar_list_longer_than_the_kernel_arguments_keeps_its_values_in_the_table():
    xs = lists(1, 9, SHAPES + SHAPES[:3])[0]
    assert len(xs) > VALUES
    native.extension().table_counts(True)
    for step in range(3):
        scalars = [1.0 + step / 4 + i / 16 for i in range(len(xs))]
        want = [x.clone() for x in xs]
        with python_path():
            torch._foreach_mul_(want, scalars)
        torch._foreach_mul_(xs, scalars)
        same(xs, want)
    assert replays("_foreach_mul_.ScalarList") == 2
    assert native.extension().table_counts(True) == (0, 2)  # new values, a new table each call


def test_the_float64_bits_of_scalars_are_64_bit_kernel_parameters():
    # Triton types an unannotated integer argument by its value: 0 (0.0's bits) as int32. A list plan recorded with
    # lr=0.0 (a warm-up's first step) filled that parameter with the low half of every later lr on the CUDA
    # primitive; the recorder now refuses such a parameter, and the kernels declare them int64.
    from triton.runtime.jit import JITFunction

    from gems.ops.optim import foreach_kernels, fused_adam, fused_sgd

    kernels = (foreach_kernels.foreach_kernel, foreach_kernels.values_kernel, fused_adam._adam_kernel,
               fused_sgd._sgd_kernel)
    for kernel in kernels:  # the interpreter's functions keep jit's arguments: the parameters a GPU compile sees
        params = kernel.params if isinstance(kernel, JITFunction) else JITFunction(kernel.fn, **kernel.kwargs).params
        words = [p for p in params if p.name.endswith("_bits") or p.name in {f"v{j}" for j in range(VALUES)}]
        assert words and all(p.annotation_type == "i64" and p.do_not_specialize for p in words), kernel


class _UploadsByOverload(TorchDispatchMode):
    """Counts the device tables each overload uploads (the native layer's and the Python path's)."""

    def __init__(self):
        super().__init__()
        self.uploads = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        before = device_tables.counts()["uploads"]
        result = func(*args, **(kwargs or {}))
        name = func.name().removeprefix("aten::")
        self.uploads[name] = self.uploads.get(name, 0) + device_tables.counts()["uploads"] - before
        return result


def test_a_steady_torch_adamw_foreach_step_replays_every_call_and_uploads_only_tables_of_fresh_tensors():
    torch.manual_seed(0)
    params = [torch.randn(s).to(DEVICE) for s in [(5, 3), (7,), (2, 2, 2), (6,)] * 10]
    for p in params:
        p.grad = torch.randn_like(p)  # kept: a new gradient tensor has a new address, hence a new table
    opt = torch.optim.AdamW(params, lr=1e-2, weight_decay=0.1, foreach=True)
    for step in range(5):
        native.reset_counts()
        with _UploadsByOverload() as mode:
            opt.step()
        if step < 2:
            continue  # the first step records each signature
        assert native.python_calls() == {}
        # The step counts are CPU tensors: gems serves their increment only where the vendor's device is the CPU
        step_increment = {"_foreach_add_.Tensor": 1} if DEVICE == "cpu" else {}
        assert native.call_counts() == {**step_increment, "_foreach_mul_.Scalar": 2,
                                        "_foreach_lerp_.Scalar": 1, "_foreach_addcmul_.Scalar": 1, "_foreach_sqrt": 1,
                                        "_foreach_div_.ScalarList": 1, "_foreach_add_.Scalar": 1,
                                        "_foreach_addcdiv_.ScalarList": 1}
        # Tables over the step's lists are found in the cache. What the step allocates afresh has new addresses
        # on the CPU (malloc; CUDA's caching allocator tends to hand the same blocks back): _foreach_sqrt's
        # results, read by _foreach_div_ (whose table _foreach_add_(eps) then shares) and _foreach_addcdiv_, and
        # the CPU step counts' new 0-d increment (on CUDA, ATen's CPU kernel adds it).
        fresh = {"_foreach_sqrt", "_foreach_div_.ScalarList", "_foreach_addcdiv_.ScalarList", "_foreach_add_.Tensor"}
        assert {o: n for o, n in mode.uploads.items() if n and o not in fresh} == {}
        assert all(mode.uploads[o] <= 1 for o in fresh)


def test_a_scalar_tensor_operand_is_read_at_its_address():
    xs = lists(1, 1)[0]
    for value in (2.0, -3.0):  # the same signature: the kernel reads the new value
        s = torch.tensor(value, device=DEVICE)
        with python_path():
            want = torch._foreach_add(xs, s, alpha=0.5)
        same(torch._foreach_add(xs, s, alpha=0.5), want)
    assert replays("_foreach_add.Tensor") == 1


@pytest.mark.parametrize("kind", ["foreach", "fused"])
def test_torch_adamw_steps_replay_natively_and_match_atens(kind):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.LayerNorm(16), torch.nn.Linear(16, 12),
                                torch.nn.LayerNorm(12), torch.nn.Linear(12, 8), torch.nn.LayerNorm(8))
    assert len(list(model.parameters())) == 12
    ref, mine = copy.deepcopy(model).to(DEVICE), copy.deepcopy(model).to(DEVICE)
    options = {"lr": 1e-2, "weight_decay": 0.1, "amsgrad": kind == "fused", kind: True}
    opt_ref, opt = torch.optim.AdamW(ref.parameters(), **options), torch.optim.AdamW(mine.parameters(), **options)
    # an lr schedule: the lr (a Scalar of _foreach_mul_'s weight decay, the fused step's float lr) changes every step
    schedules = [torch.optim.lr_scheduler.LambdaLR(o, lambda step: 1 / (1 + step)) for o in (opt_ref, opt)]
    for _ in range(4):
        for p, q in zip(ref.parameters(), mine.parameters()):
            p.grad = torch.randn_like(p)
            q.grad = p.grad.clone()
        with gems.aten_only():
            opt_ref.step()
        opt.step()
        for p, q in zip(ref.parameters(), mine.parameters()):
            torch.testing.assert_close(q, p, rtol=1e-5, atol=1e-6)
        for schedule in schedules:
            schedule.step()
    served = ["_fused_adamw_"] if kind == "fused" else [
        "_foreach_lerp_.Scalar", "_foreach_mul_.Scalar", "_foreach_addcmul_.Scalar", "_foreach_sqrt",
        "_foreach_div_.ScalarList", "_foreach_add_.Scalar", "_foreach_addcdiv_.ScalarList"]
    # every step after the first replays (_foreach_mul_ scales params by 1 - lr * wd and exp_avg_sq by beta2)
    assert {o: replays(o) for o in served} == {o: 7 if o == "_foreach_mul_.Scalar" else 3 for o in served}
    assert {o: native.python_calls()[o] for o in served} == {o: {NEW_SIGNATURE: 1} for o in served}


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_torch_fused_sgd_steps_replay_natively_and_match_atens(momentum):
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.LayerNorm(16), torch.nn.Linear(16, 8))
    ref, mine = copy.deepcopy(model).to(DEVICE), copy.deepcopy(model).to(DEVICE)
    options = {"lr": 0.1, "momentum": momentum, "nesterov": momentum > 0, "weight_decay": 0.01, "fused": True}
    opt_ref, opt = torch.optim.SGD(ref.parameters(), **options), torch.optim.SGD(mine.parameters(), **options)
    schedules = [torch.optim.lr_scheduler.LambdaLR(o, lambda step: 1 / (1 + step)) for o in (opt_ref, opt)]
    for _ in range(4):
        for p, q in zip(ref.parameters(), mine.parameters()):
            p.grad = torch.randn_like(p)
            q.grad = p.grad.clone()
        with gems.aten_only():
            opt_ref.step()
        opt.step()
        for p, q in zip(ref.parameters(), mine.parameters()):
            torch.testing.assert_close(q, p, rtol=1e-6, atol=1e-7)
        for schedule in schedules:
            schedule.step()
    # The first step with momentum buffers is a signature of its own (is_first_step); every later step replays,
    # the scheduled lr read per call.
    new_signatures = 2 if momentum else 1
    assert replays("_fused_sgd_") == 4 - new_signatures
    assert native.python_calls()["_fused_sgd_"] == {NEW_SIGNATURE: new_signatures}


def test_fused_adam_reads_lr_grad_scale_and_found_inf_per_call():
    params, grads, m, v = lists(4, 2, [(5, 3), (7,), (2, 2, 2)])
    steps = [torch.tensor(1.0, device=DEVICE) for _ in params]
    state = [params, grads, m, [x.abs() for x in v]]
    for lr, scale, inf in ((0.1, 2.0, 0.0), (0.3, 4.0, 0.0), (0.3, 4.0, 1.0)):
        args = [[t.clone() for t in ts] for ts in state]
        want = [[t.clone() for t in ts] for ts in state]
        options = dict(lr=torch.tensor(lr, device=DEVICE), beta1=0.9, beta2=0.99, weight_decay=0.01, eps=1e-8,
                       amsgrad=False, maximize=False, grad_scale=torch.tensor(scale, device=DEVICE),
                       found_inf=torch.tensor(inf, device=DEVICE))
        with python_path():
            torch._fused_adam_(*want, [], steps, **options)
        torch._fused_adam_(*args, [], steps, **options)
        for got, expected in zip(args, want):
            same(got, expected)
    assert replays("_fused_adam_.tensor_lr") == 2


@pytest.mark.parametrize("change", ["dtype", "non-contiguous"])
def test_lists_the_key_does_not_cover_stay_in_python_and_work(change):
    xs, ys = lists(2, 3)
    if change == "dtype":
        xs[4] = xs[4].double()
    else:
        xs[4] = torch.randn(3, 5, device=DEVICE).t()  # SHAPES[4] transposed
    for _ in range(2):
        with gems.aten_only():
            want = torch._foreach_mul(xs, ys)
        torch.testing.assert_close(torch._foreach_mul(xs, ys), want, rtol=0, atol=0)
    assert replays("_foreach_mul.List") == 0
    assert "not uniform" in native.python_reasons()["_foreach_mul.List"]


def test_lists_of_unequal_length_raise_atens_error_every_call():
    xs, ys = lists(2, 4)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="same number of tensors"):
            torch._foreach_add_(xs, ys[:-1])
    torch._foreach_add_(xs, ys)
    torch._foreach_add_(xs, ys)
    assert replays("_foreach_add_.List") == 1


def test_a_call_the_table_cannot_serve_stays_in_python_with_its_reason():
    xs = lists(1, 5)[0]
    torch._foreach_addcmul_(xs, xs, xs, torch.ones(len(xs)))  # a CPU tensor of scalars, read on the host
    torch._foreach_addcmul_(xs, xs, xs, torch.ones(len(xs)))
    assert replays("_foreach_addcmul_.Tensor") == 0
    assert "ScalarList argument" in native.python_reasons()["_foreach_addcmul_.Tensor"]
