"""One test per model case (preset, dtype, size); gems.models.conformance says what a case checks."""

import importlib.util

from gems.models import conformance as model_cases
from gems.testing.cases import CaseResult, dtype_name


def test_model_case(model_case, conformance, request, report_case):
    backend, case = conformance.backend, model_case
    node_id = request.node.nodeid.split("@")[0]  # without the xdist group suffix
    repro = f'pytest "{node_id}" --vendor {backend.name}' + (" --quick" if conformance.quick else "")
    why_not = ("transformers is not installed: pip install 'gems[models]'"
               if importlib.util.find_spec("transformers") is None
               else None if backend.capabilities.supports(case.dtype)
               else f"vendor {backend.name} does not support {case.dtype}")
    if why_not:
        result = CaseResult(id=case.id, op=case.op, dtype=dtype_name(case.dtype), variant=case.variant,
                            status="unsupported", message=why_not)
    else:
        result = model_cases.run_case(case, backend, repro)
    report_case(result, case)
