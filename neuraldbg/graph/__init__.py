"""The layer DAG: traced with torch.fx, or recorded from real forward passes, kept current while
training."""
