"""alterflow's tests. A package, so that every test module has a name below `tests` and the shared
helpers are imported as `tests.support...` (never as top-level names that depend on which folder
pytest put on sys.path)."""
