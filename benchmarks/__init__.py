"""Benchmarks: ``python -m benchmarks`` (``make bench``); ``--quick`` runs every row once, asserting nothing."""
