"""Workload generators for the trace-driven evaluation (deterministic by seed)."""
