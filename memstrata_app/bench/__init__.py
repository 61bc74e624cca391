"""`memstrata bench`: seeded, marker-free benchmarks of the engine against plain-RAG baselines."""
