"""Benchmarks of cudart against C and the other Python bindings; see bench/README.md."""
