"""The readers of a table that `alterflow migrate lint` names in a backward-incompatible finding,
besides views: the Airflow DAGs scheduled on the table's asset (`alterflow://<catalog>/<table>`,
the asset every schema change emits on: `alterflow.schema_change_events`) or reading it as a
task's inlet, asked of the Airflow at ALTERFLOW_AIRFLOW_URL through its REST API (plain HTTP,
`alterflow.airflow_client`; no Airflow import).

An Airflow that cannot be asked (not there, refusing the credentials, not Airflow 3) is said once,
as one line (`unreachable`), and lint goes on without DAG readers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from alterflow.catalog.schema import name_key
from alterflow.schema_change_events import table_asset_uri
from alterflow.settings import Settings

if TYPE_CHECKING:  # httpx loads only when Airflow is asked (apply imports lint: no cost there)
    from alterflow.airflow_client import AirflowClient


@dataclass
class AirflowDagReaders:
    """The DAGs reading each table's asset, asked once per table; after the first failure, none."""

    client: AirflowClient
    catalog_name: str
    unreachable: str | None = None  # the one line saying why Airflow could not be asked
    _dags: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: Settings) -> AirflowDagReaders | None:
        """Those of the settings' Airflow (ALTERFLOW_AIRFLOW_URL), or None without one."""
        if not settings.airflow_url:
            return None
        from alterflow.airflow_client import AirflowClient

        return cls(AirflowClient.from_settings(settings), settings.catalog_name)

    def asset_uri(self, table: str) -> str:
        return table_asset_uri(self.catalog_name, table)

    def dags_reading(self, table: str) -> tuple[str, ...]:
        """The DAGs scheduled on (or reading) `table`'s asset; () once Airflow could not be asked."""
        if self.unreachable is not None:
            return ()
        key = name_key(table)
        if key not in self._dags:
            from alterflow.airflow_client import AirflowRequestError

            try:
                self._dags[key] = tuple(self.client.dags_reading_asset(self.asset_uri(table)))
            except AirflowRequestError as exc:
                self.unreachable = f"cannot list the DAGs reading the tables' assets, so findings name no DAG: {exc}"
                return ()
        return self._dags[key]

    def close(self) -> None:
        self.client.close()
