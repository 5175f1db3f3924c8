"""Tensor manipulation: layout, triangles, views resolved (one file per operator)."""
