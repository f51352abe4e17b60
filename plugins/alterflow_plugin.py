"""The alterflow Airflow plugin, for an Airflow whose plugins folder is this repository's `plugins/`
and that imports alterflow without its distribution's metadata (PYTHONPATH only). Where alterflow is
installed (`pip install alterflow[airflow]`, or `make install`'s editable install), Airflow loads the
plugin through the `airflow.plugins` entry point and this file registers nothing: Airflow would
report a second registration of the same name as an import error."""

from importlib.metadata import entry_points

if not any(ep.value.startswith("alterflow.airflow.plugin:") for ep in entry_points(group="airflow.plugins")):
    from alterflow.airflow.plugin import AlterflowPlugin  # noqa: F401  (the plugin manager finds it here)
