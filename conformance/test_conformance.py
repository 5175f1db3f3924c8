"""One test per (operator, dtype, variant) case; see conftest.py for options and reports."""

import pytest

from gems import ops
from gems.testing.conformance import CaseResult, dtype_name, run_case


def _failure_report(result: CaseResult) -> str:
    tol = result.tolerance
    return "\n".join([
        f"{result.op} {result.dtype} {result.variant} (overload {result.overload}): {result.status.upper()}",
        f"  {result.message}",
        f"  shapes {result.shapes} strides {result.strides} seed {result.seed}",
        f"  max abs err {result.max_abs_err:.3g}, max rel err {result.max_rel_err:.3g}, "
        f"mismatch {result.mismatch_pct:.3g}%, max ULP {result.max_ulp:.3g} "
        f"(rtol {tol.get('rtol', 0):g}, atol {tol.get('atol', 0):g})",
        f"  reproduce: {result.repro}",
    ])


def _device_gap(backend, case) -> str | None:
    """The vendor's declared reason why its device cannot pass this case (keys "variant" or "variant/dtype")."""
    return backend.device_gap(case.op, case.variant, case.dtype)


def test_case(case, conformance, request):
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
    gap = _device_gap(backend, case)
    if gap and result.status in ("fail", "error"):
        result.status, result.message = "xfail", f"known gap of device {backend.device}: {gap} ({result.message})"
    elif gap and result.status == "pass":
        result.status, result.message = "xpass", f"declared as a gap of device {backend.device} but passes: {gap}"
    request.node.user_properties.append(("gems_case", result.to_json()))
    if result.status in ("fail", "error", "xpass"):
        pytest.fail(_failure_report(result), pytrace=False)
    if result.status == "xfail":
        pytest.xfail(result.message)
    if result.status == "unsupported":
        pytest.skip(result.message)
