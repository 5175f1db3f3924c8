"""Pointwise operators: one file per operator, each a PointwiseOp over a scalar Triton body (see
gems/codegen/pointwise.py) plus its ATen overloads and declaration. Helpers the family shares (correctly
rounded division, NaN-propagating max/min, overload tables, the lazy sample and perf references) are in
``shared.py``."""
