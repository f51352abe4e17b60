"""The alterflow Airflow plugin, for an Airflow whose plugins folder is this repository's `plugins/`
and that imports alterflow without its distribution's metadata (PYTHONPATH only). Where alterflow is
installed (`pip install alterflow[airflow]`, or `make install`'s editable install), Airflow loads the
plugin through the `airflow.plugins` entry point and this file registers nothing: Airflow would
report a second registration of the same name as an import error.

Airflow runs this file in every task process: it reads alterflow's own distribution's entry points
(a third of a millisecond), not every installed distribution's (ten milliseconds a task)."""

from importlib.metadata import PackageNotFoundError, distribution


def _installed_with_entry_point() -> bool:
    try:
        points = distribution("alterflow").entry_points
    except PackageNotFoundError:
        return False
    return any(point.group == "airflow.plugins" and point.value.startswith("alterflow.airflow.plugin:") for point in points)


if not _installed_with_entry_point():
    from alterflow.airflow.plugin import AlterflowPlugin  # noqa: F401  (the plugin manager finds it here)
