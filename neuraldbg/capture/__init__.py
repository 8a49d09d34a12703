"""Capture: the hooks, the step buffer, gradient norms, the one host transfer per step, what the
model reads and returns, tensor statistics, activations applied as functions and recurrent gates.
The step orchestrator is `step_capture.StepCapture`."""
