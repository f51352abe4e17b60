"""Values and casts: what a value of each SQL type is and how it becomes a value of another type,
the same on every engine (docs/semantics.md).

- `types`: the type system (parsing, conversion classes, literal and value coercion, the Arrow and
  Spark types of a column);
- `text_patterns`: the texts read as numbers and dates, as regular expressions Python and Java read alike;
- `cast_rules`: the one table of cast rules, value by value (the reference every engine reproduces);
- `arrow_kernels`, `arrow_number_kernels`, `arrow_text_kernels`: those rules as Arrow kernels, and
  `arrow_columns`, which casts a column with them (row slices on threads, the rare rows they
  defer going value by value);
- `spark_kernels`: the same rules as Spark column expressions;
- `load_coercion`: loaded values conformed to a column's type with Arrow kernels.

A table's conversion between two schema versions (`alterflow.conversion`) applies these casts to a
table's columns: it reads the catalog's schema versions, which this package sits below. Importing
this package imports nothing: the type system is imported by every lightweight statement, which
needs no Arrow (tests/cli/test_cli_imports.py).
"""
