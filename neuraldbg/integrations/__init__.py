"""neuraldbg inside the trainers users already have (each loads its framework on import)."""
