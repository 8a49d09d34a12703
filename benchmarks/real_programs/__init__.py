"""Programs modelled on pytorch/examples, adapted to synthetic in-code data: the healthy runs of
`benchmarks/real_programs.py`. Each module has NAME, EXPECT, STEPS (its default number of
optimizer steps), EXAMPLE (the pytorch/examples file it follows) and `run(dbg_factory, steps)`,
which returns the per-step losses."""
