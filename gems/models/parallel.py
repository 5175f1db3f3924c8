"""A decoder over several devices: tensor parallelism, one process per device, gems serving every rank.

Megatron's split, written over the model's own ``nn.Linear`` modules: in every decoder layer the query, key,
value, gate and up projections are column-parallel (each rank keeps a contiguous block of output features:
whole attention heads, whole MLP channels), the attention output and down projections row-parallel (each
rank keeps the matching block of input features; the partial products are summed by an all-reduce).
Embeddings, norms and the language-model head stay whole on every rank. Two autograd functions carry the
communication: :class:`_ToParallel` (identity forward, all-reduce of the gradient backward) in front of a
column-parallel projection, :class:`_FromParallel` (all-reduce forward, identity backward) behind a
row-parallel one. transformers' attention reshapes by head size, so a rank's share of heads needs no change
to the attention code. The heads and key/value heads must divide by the number of ranks.

:mod:`gems.models.parallel_run` starts the processes and runs the model on them.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from gems.models.errors import ModelError

COLUMN = ("q_proj", "k_proj", "v_proj", "gate_proj", "up_proj")
ROW = ("o_proj", "down_proj")


class _ToParallel(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous()
        dist.all_reduce(grad)
        return grad


class _FromParallel(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x = x.contiguous()
        dist.all_reduce(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


class ColumnParallelLinear(torch.nn.Module):
    """This rank's block of output features of ``linear``."""

    def __init__(self, linear: torch.nn.Linear, rank: int, world: int):
        super().__init__()
        rows = linear.out_features // world
        block = slice(rank * rows, (rank + 1) * rows)
        self.linear = torch.nn.Linear(linear.in_features, rows, bias=linear.bias is not None,
                                      dtype=linear.weight.dtype, device=linear.weight.device)
        with torch.no_grad():
            self.linear.weight.copy_(linear.weight[block])
            if linear.bias is not None:
                self.linear.bias.copy_(linear.bias[block])

    def forward(self, x):
        return self.linear(_ToParallel.apply(x))


class RowParallelLinear(torch.nn.Module):
    """This rank's block of input features of ``linear``; the bias is added once, after the all-reduce."""

    def __init__(self, linear: torch.nn.Linear, rank: int, world: int):
        super().__init__()
        columns = linear.in_features // world
        block = slice(rank * columns, (rank + 1) * columns)
        self.linear = torch.nn.Linear(columns, linear.out_features, bias=False, dtype=linear.weight.dtype,
                                      device=linear.weight.device)
        with torch.no_grad():
            self.linear.weight.copy_(linear.weight[:, block])
        self.bias = None if linear.bias is None else torch.nn.Parameter(linear.bias.detach().clone())

    def forward(self, x):
        y = _FromParallel.apply(self.linear(x))
        return y if self.bias is None else y + self.bias


def check_splittable(config, world: int) -> None:
    """Every rank must get whole heads, whole key/value heads and whole MLP channels."""
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    if heads % world or kv_heads % world or config.intermediate_size % world:
        raise ModelError(f"--model-devices {world}: the attention heads ({heads}), key/value heads ({kv_heads}) and "
                         f"MLP channels ({config.intermediate_size}) must all divide by the number of devices")


def shard(model: torch.nn.Module, rank: int, world: int) -> int:
    """Replace the decoder layers' projections by their parallel blocks, in place; returns how many."""
    config = model.config
    check_splittable(config, world)
    replaced = 0
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if isinstance(child, torch.nn.Linear) and name in COLUMN + ROW:
                kind = ColumnParallelLinear if name in COLUMN else RowParallelLinear
                setattr(module, name, kind(child, rank, world))
                replaced += 1
    if not replaced:
        raise ModelError(f"{config.model_type}: no projections named {', '.join(COLUMN + ROW)} to split; tensor "
                         "parallelism covers Llama-style decoders")
    return replaced
