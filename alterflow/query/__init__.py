"""In-process queries with Spark's answers: Spark SQL translated for DuckDB over the evolved Arrow reads
(docs/semantics.md, "Queries: two engines, Spark's answers")."""
