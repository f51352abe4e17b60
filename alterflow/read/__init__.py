"""Reading tables and views with Spark, under any schema version."""
