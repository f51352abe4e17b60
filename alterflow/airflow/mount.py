"""Where the Schema changes page lives: the path the api-server mounts its app at, and its route in
Airflow's UI. A module of its own so that the plugin names them without importing the app."""

MOUNT_PATH = "/alterflow"  # where the plugin mounts the page's app (alterflow.airflow.web)
UI_ROUTE = "schema-changes"  # the page inside Airflow's UI: /plugin/schema-changes
