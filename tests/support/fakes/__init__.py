"""Local fakes of third-party services, for tests and benchmarks."""
