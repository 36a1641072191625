"""Benchmarks: a generator of big failed-build logs with known causes, and a runner that times
`buildlog explain` against grep and wc on them (see bench/RESULTS.md)."""
