"""`neuraldbg report RUN`: one self-contained HTML page per run, figures drawn with matplotlib
(optional: the capture and `diagnose` never need it)."""

from causal.html_report.page import MissingDependencyError, render, write_report

__all__ = ["MissingDependencyError", "render", "write_report"]
