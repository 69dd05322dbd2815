"""Measurements: training and decoding throughput (fast vs eager), the attention kernels, monotonic decoding,
and `nmt estimate`'s time and memory estimates. Slow; run by `nmt bench ...`, never by timed tests."""
