"""Recording a training-mode call of an autograd-level kernel (a call that needs an autograd graph) as a plan whose
replay also builds the graph's node in C++ (autograd_node.cpp; docs/native.md, "Autograd-level operators").

The call's Python implementation applied an autograd Function. Its forward's launches are recorded like any
call's (the key holds which inputs require grad, so the forward recorded is the one that saves statistics where
the Function does), and the node it built is read back: its Function's declared backward
(gems/runtime/native_backward.py), the tensors it saved (located among the call's inputs, results and temporary
buffers, as kernel arguments are), its ctx attributes and ``needs_input_grad`` (constants of the plan), and its
inputs (the call's tensors that become the node's edges). A call whose graph the node cannot express (no
declaration, several Functions, a saved tensor from outside the call, a result the Function did not make)
keeps its signature on the Python path, with the reason.
"""

from __future__ import annotations

import re

import torch

from gems.native.refusals import NotRecordable, NotYet
from gems.runtime.native_backward import Grad, Result, resolve


class Graph:
    """The autograd node of one recorded training-mode call: ``keep`` (its saved tensors, for the plan to locate)
    and :meth:`spec` (what C++ stores beside the plan)."""

    def __init__(self, name, node, declaration, tensors, edges, positions, saved, outputs):
        self.name, self.node, self.declaration, self.tensors, self.outputs = name, node, declaration, tensors, outputs
        self.edges, self.positions, self.saved = edges, positions, saved
        self.keep = tuple(t for t in saved if t is not None)

    @classmethod
    def of(cls, recording, result, overload: str):
        """The graph ``result`` (the implementation's return) carries, or None when the call built none (every
        result without history: a plain plan serves it); raises NotRecordable when no C++ node can replay it."""
        if _saved_tensor_hooks_active():
            raise NotYet("autograd: saved-tensor hooks are active (what the Function saved is read back through "
                         "them; the next call of the signature is recorded)")
        returns = result if isinstance(result, tuple) else (result,)
        tensors = [r for r in returns if isinstance(r, torch.Tensor)]
        nodes = {id(r.grad_fn): r.grad_fn for r in tensors if r.grad_fn is not None}
        if not nodes and not any(r.requires_grad for r in tensors):
            return None
        names = sorted({type(n).__name__ for n in nodes.values()})
        if not recording.applied:
            raise NotRecordable(f"autograd: {', '.join(names) or 'its graph'} has no native backward declared (its "
                                "Function's backward is Python: gems/runtime/native_backward.py)")
        if len(nodes) != 1 or len(recording.applied) != 1:
            raise NotRecordable(f"autograd: the call built {len(nodes)} autograd nodes ({', '.join(names)}) and "
                                f"applied {len(recording.applied)} Functions with a native backward (a C++ node "
                                "replays one)")
        (node,) = nodes.values()
        function, inputs = recording.applied[0]
        if getattr(type(node), "_forward_cls", None) is not function:
            raise NotRecordable(f"autograd: its results' node {type(node).__name__} is not {function.__name__}'s")
        for j, r in enumerate(returns):
            if not isinstance(r, torch.Tensor) or r.grad_fn is not node or r.output_nr != j:
                raise NotRecordable(f"autograd: result {j} is not output {j} of {function.__name__}")
        edges, positions = [], []
        for p, value in enumerate(inputs):
            if isinstance(value, torch.Tensor):
                k = next((i for i, t in enumerate(recording.tensors) if t is value), None)
                if k is None:
                    raise NotRecordable(f"autograd: input {p} of {function.__name__} is not a tensor argument of "
                                        "the call")
                edges.append(k)
                positions.append(p)
        short = re.sub(r"(?:^|_)([a-z0-9])", lambda m: m.group(1).upper(), overload.rpartition(".")[2]
                       if overload.startswith("gems.") else overload.partition(".")[0])
        return cls(f"Gems{short}Backward", node, function.native_backward, recording.tensors, edges, positions,
                   node.saved_tensors, len(returns))

    def spec(self, plan) -> tuple:
        """(name, (operator, overload), edges, args, saved, grads, undefined): autograd_node.cpp's build_node_spec."""
        d, node = self.declaration, self.node
        try:
            args = [resolve(a, node) for a in d.args]
        except TypeError as exc:
            raise NotRecordable(f"autograd: {exc}") from exc
        # The gradient of an output this call does not return is None (backward's default: fused_rms_norm's grad_s).
        args = [("c", None) if a[0] == "g" and a[1] >= self.outputs else a for a in args]
        if any(a[0] == "s" and a[1] >= len(self.saved) for a in args):
            raise NotRecordable(f"autograd: the declaration names a saved tensor beyond the {len(self.saved)} saved")
        kept = iter(plan.kept)
        saved = [None if t is None else self._saved(t, next(kept), plan.outs) for t in self.saved]
        grads = [d.grads[p].index if isinstance(d.grads[p], Result) else -1 for p in self.positions]
        undefined = [(j, [alt[p].output if isinstance(alt[p], Grad) and alt[p].output < self.outputs else -1
                          for p in self.positions]) for j, alt in d.undefined.items() if j < self.outputs]
        return self.name, tuple(d.operator.split(".", 1) + [""])[:2], self.edges, args, saved, grads, undefined

    def _saved(self, tensor, argspec, outs):
        """(kind, index, byte offset, dtype, shape, strides, exact) of a saved tensor: an input (exact: the input
        itself), a view of an input or result, or a view of a temporary buffer."""
        if argspec[0] != "t":
            raise NotRecordable("autograd: a saved tensor is not memory of the call")
        _, kind, index, delta, dtype, shape, strides = argspec
        if kind == 2:
            if delta % tensor.element_size():
                raise NotRecordable("autograd: a saved tensor sits unaligned in a buffer")
            return kind, index, delta, dtype, shape, strides, False
        base_dtype = outs[index][4] if kind == 1 else self.tensors[index].dtype
        if dtype != base_dtype:
            raise NotRecordable("autograd: a saved tensor reinterprets the dtype of an input or result")
        return kind, index, delta, dtype, shape, strides, kind == 0 and tensor is self.tensors[index]


def _saved_tensor_hooks_active() -> bool:
    """Whether torch.autograd.graph.saved_tensors_hooks are active (a private binding: its argument came later)."""
    top = torch._C._autograd._top_saved_tensors_default_hooks
    try:
        return top(True) is not None
    except TypeError:  # unreached on the interpreter's torch: a binding that takes no argument
        return top() is not None
