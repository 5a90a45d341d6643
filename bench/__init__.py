"""Benchmarks of jupyter-resolve: ``python -m bench [--quick] [--json PATH]`` from the repo root.

Every figure is measured against a baseline taken in the same run; nothing is hard-coded and
nothing here is asserted (goals are printed, not enforced). See ``bench/README.md``.
"""
