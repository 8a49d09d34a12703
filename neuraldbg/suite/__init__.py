"""The failure suite: scenario files, label verification, the accuracy benchmark and its scoring,
the fit driver and the bundled demo."""
