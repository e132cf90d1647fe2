"""Benchmarks of hudi-spec against its peers, side by side in one run (``make bench``)."""
