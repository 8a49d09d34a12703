"""Detection: triage of closed steps, the per-signal state machines, transition events and the
flight recorder (host floats in, `Event`s out)."""
