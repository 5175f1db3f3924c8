"""One test per (operator, dtype, variant) case; see conftest.py for options and reports."""

from gems import ops
from gems.testing.cases import CaseResult, dtype_name
from gems.testing.conformance import run_case


def test_case(case, conformance, request, report_case):
    backend = conformance.backend
    spec = ops.get(case.op)
    node_id = request.node.nodeid.split("@")[0]  # without the xdist group suffix
    repro = f'pytest "{node_id}" --vendor {backend.name}' + (" --quick" if conformance.quick else "")
    skip = spec.skip_reason(backend.name, case.dtype, case.variant)
    if skip or not backend.capabilities.supports(case.dtype):
        why = f"not run on {backend.name}: {skip}" if skip else f"vendor {backend.name} does not support {case.dtype}"
        result = CaseResult(id=case.id, op=case.op, dtype=dtype_name(case.dtype), variant=case.variant,
                            status="unsupported", message=why)
    else:
        result = run_case(spec, case, backend.device, conformance.quick, backend.name, conformance.overrides, repro)
    report_case(result, case)
