"""gems.patch: fused gems kernels (with their backward) put into Hugging Face ``transformers`` models.

    import gems
    report = gems.patch(model)      # llama, mistral, qwen2, gemma, bert, vit: RMSNorm, residual add + norm,
    print(report)                   # gated MLP, rotary embedding, LM head + cross-entropy -> gems.fused
    gems.unpatch(model)             # every module back to its class's forward
    gems.patch_class(LlamaForCausalLM)  # every model of the class built from now on (unpatch_class stops it)

The tables (gems/patch/tables.py) say which module class of which architecture gets which fused operator;
a module whose configuration the kernel does not compute exactly (a norm without weight, an unusual
rotary scaling, a head with a bias) is left as it is and listed in the report with the reason. A model
of an architecture with no table gets its modules matched by class name, and the report says which it
recognised and which it left. The fused operators run whether or not gems.enable() was called; the
linear + cross-entropy's matrix products are gems' GEMM kernels. At call time a fused norm, gated MLP or
rotary kernel runs where it pays: for activations of at least the vendor's ``patch_fusion`` MIN_NUMEL elements
(nvidia: 2^22; a fused call's Python path costs more host time than it saves on the device below that, as in
decode and BERT-base), or while a CUDA graph is captured; other calls run the module's own forward.

``gems.patch`` is this package and is callable (``gems.patch(model)``), so that the function and the
package of its tables share the name the architecture gives them.
"""

from __future__ import annotations

import sys
import types

from gems.patch.patcher import PatchReport, patch, patch_class, report_of, unpatch, unpatch_class

__all__ = ["PatchReport", "patch", "patch_class", "report_of", "unpatch", "unpatch_class"]


class _CallableModule(types.ModuleType):
    def __call__(self, model):
        return patch(model)


sys.modules[__name__].__class__ = _CallableModule
