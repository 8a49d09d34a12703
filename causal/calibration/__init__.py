"""Fitted network parameters: their file format, fitting them on labelled runs, and calibrating
the posteriors."""
