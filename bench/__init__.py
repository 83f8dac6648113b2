"""Benchmarks and cross-checks against GNU Backgammon (not part of the installed package, not run by CI)."""
