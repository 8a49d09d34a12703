"""The non-finite hunt: where the first inf or NaN of a step was born (forward, backward, loss,
input), found from kept outputs, a replay of the step's forward passes, or a re-run in float32."""
