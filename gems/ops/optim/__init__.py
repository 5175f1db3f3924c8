"""Optimizer steps: the ``_foreach_*`` operators torch.optim's foreach steps dispatch, and ATen's fused
optimizers (``_fused_adam_``, ``_fused_adamw_``, ``_fused_sgd_``). Each launches one kernel over all the
tensors of its lists (per group of tensors that share their dtypes), as ATen's multi_tensor_apply does:
gems/ops/optim/multi_tensor.py describes the lists to the kernel in a small device table."""
