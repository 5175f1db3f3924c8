"""triton.heuristics rules of the nvidia vendor, one file per operator family (loaded by
gems.runtime.configs.load_vendor_heuristics, not imported)."""
