"""When a table's asset had its first event (alterflow.catalog.first_asset_events): the first event
goes at once, the ones within the spacing after it wait until it is that old, later ones never
wait, and none waits once the task that emitted the first has succeeded; two tasks racing to be
first get one first. On SQLite and on PostgreSQL."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

from alterflow.catalog.catalog import Catalog
from alterflow.catalog.first_asset_events import EmittingTask, FirstAssetEvents
from alterflow.catalog.models import FirstAssetEventRow

T0 = datetime(2026, 11, 30, 12, 0, 0)
URI = "alterflow://default/t"


def test_the_first_event_goes_at_once_the_next_ones_wait_until_it_is_old_enough(catalog_url):
    first = FirstAssetEvents(Catalog(catalog_url))
    assert first.wait_s(URI, 5.0, now=T0) == 0.0
    assert first.wait_s(URI, 5.0, now=T0 + timedelta(seconds=1)) == 4.0
    assert first.wait_s(URI, 5.0, now=T0 + timedelta(seconds=4.5)) == 0.5
    assert first.wait_s(URI, 5.0, now=T0 + timedelta(seconds=5)) == 0.0
    assert first.wait_s(URI, 5.0, now=T0 + timedelta(days=3)) == 0.0
    assert first.wait_s("alterflow://default/u", 5.0, now=T0 + timedelta(seconds=1)) == 0.0  # another table's is its own first


def test_an_event_after_a_first_whose_task_succeeded_goes_at_once(catalog_url):
    catalog = Catalog(catalog_url)
    first = FirstAssetEvents(catalog)
    light = EmittingTask("alterflow_schema_change", "run_1", "validate")
    heavy = EmittingTask("alterflow_schema_change", "run_2", "done")
    asked: list[EmittingTask] = []

    def succeeded(task: EmittingTask) -> bool:
        asked.append(task)
        return task == light

    assert first.wait_s(URI, 5.0, now=T0, emitter=light, succeeded=succeeded) == 0.0
    with catalog.db_session() as s:
        row = s.get(FirstAssetEventRow, URI)
        assert (row.dag_id, row.run_id, row.task_id) == ("alterflow_schema_change", "run_1", "validate")
    assert asked == []  # the first asks nobody
    assert first.wait_s(URI, 5.0, now=T0 + timedelta(seconds=1), emitter=heavy, succeeded=succeeded) == 0.0
    assert asked == [light]
    # Until Airflow says it succeeded (running, failed, unknown), the next events wait as before.
    assert first.wait_s(URI, 5.0, now=T0 + timedelta(seconds=1), emitter=heavy, succeeded=lambda task: False) == 4.0
    assert first.wait_s(URI, 5.0, now=T0 + timedelta(seconds=1)) == 4.0  # outside a task: nobody to ask
    assert first.wait_s(URI, 5.0, now=T0 + timedelta(seconds=6), emitter=heavy, succeeded=succeeded) == 0.0
    assert asked == [light]  # past the spacing nobody is asked


def test_a_first_event_recorded_without_its_task_keeps_the_spacing(catalog_url):
    """A row of migration 0012, or an event emitted outside a task: nobody to ask about, so the
    events after it wait out the spacing."""
    first = FirstAssetEvents(Catalog(catalog_url))
    assert first.wait_s(URI, 5.0, now=T0) == 0.0
    task = EmittingTask("alterflow_schema_change", "run_2", "validate")
    assert first.wait_s(URI, 5.0, now=T0 + timedelta(seconds=2), emitter=task, succeeded=lambda asked: True) == 3.0


def test_of_tasks_racing_to_emit_a_tables_first_event_exactly_one_is_first(catalog_url):
    catalog = Catalog(catalog_url)
    waits: list[float] = []
    start = threading.Barrier(4)

    def emit() -> None:
        start.wait()
        waits.append(FirstAssetEvents(catalog).wait_s(URI, 5.0, now=T0))

    racers = [threading.Thread(target=emit) for _ in range(4)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert sorted(waits) == [0.0, 5.0, 5.0, 5.0], waits
