"""The rows read and the casts that failed, as each converted tablet records them (docs/heavyweight.md,
RUNNING and VALIDATING): counted in the conversion query for primary-key tables, and from the
Parquet footers of the origin and staged files otherwise (`alterflow.rewrite.footer_counts`).
Both ways must give the same numbers for the same rows, with NULLs, failures, columns that older
files lack (NULL or a default), several converted columns and several tablets; and the local
engine, which counts while it converts, the same again.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from alterflow.arrow_schema import FIELD_ID_KEY
from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.rewrite.footer_counts import file_counts
from alterflow.store.layout import FileSource
from alterflow.workflow import alter_steps, heavy_steps
from alterflow.workflow.request import AlterRequest
from tests.support.statements import sql

pytestmark = pytest.mark.spark


# ------------------------------------------------------------------------------------------------
# footer_counts
# ------------------------------------------------------------------------------------------------


def _field(name: str, values: pa.Array, fid: int | None) -> pa.Field:
    return pa.field(name, values.type, metadata=None if fid is None else {FIELD_ID_KEY: str(fid).encode()})


def _write(path, columns, **options) -> str:
    schema = pa.schema([_field(name, values, fid) for name, fid, values in columns])
    pq.write_table(pa.Table.from_arrays([v for _, _, v in columns], schema=schema), path, **options)
    return str(path)


COLUMNS = [
    ("id", 1, pa.array(range(10), pa.int32())),
    ("v", 2, pa.array(["1", None, "x", None, None, "5", "6", None, "8", "9"])),
    ("w.x", 5, pa.array([None] * 10, pa.int64())),
    ("plain", None, pa.array([None, 1] * 5, pa.int8())),
]


@pytest.mark.parametrize("statistics", [True, False], ids=["footer-statistics", "no-statistics"])
def test_file_counts_by_field_id(tmp_path, statistics):
    """Several row groups; without statistics the values are counted, to the same numbers."""
    path = _write(tmp_path / "f.parquet", COLUMNS, row_group_size=3, write_statistics=statistics)
    assert pq.read_metadata(path).num_row_groups == 4
    counts = file_counts(FileSource(str(path)), [1, 2, 5, 7])
    assert counts.rows == 10
    assert counts.nulls == {1: 0, 2: 4, 5: 10, 7: None}  # 7: no such column (the column without an id neither)


def test_file_counts_of_an_empty_file(tmp_path):
    path = _write(tmp_path / "f.parquet", [("v", 2, pa.array([], pa.string()))])
    assert file_counts(FileSource(str(path)), [2]).rows == 0 and file_counts(FileSource(str(path)), [2]).nulls == {2: 0}


# ------------------------------------------------------------------------------------------------
# a conversion's records, with and without a primary key
# ------------------------------------------------------------------------------------------------


@pytest.fixture(params=["spark", "local"])
def engine(request) -> str:
    """Every conversion test runs on both engines."""
    return request.param


def _history(session, table: str, key: str) -> None:
    """Rows over three versions: w added without a default (NULL in older files), u added with a
    default that converts; NULLs, failures ('twenty', 'x', 'y', 'nine') and good values."""
    sql(session, f"CREATE TABLE {table} (id INT NOT NULL, v STRING{key}) DISTRIBUTED BY HASH(id) BUCKETS 3")
    sql(session, f"INSERT INTO {table} VALUES (1, '10'), (2, 'twenty'), (3, NULL), (4, ' 40 '), (5, 'x'), (6, '+6')")
    sql(session, f"ALTER TABLE {table} ADD COLUMN w STRING")
    sql(session, f"INSERT INTO {table} VALUES (7, '007', '1'), (8, NULL, 'y'), (9, '-9', NULL), (10, '2147483648', '3')")
    sql(session, f"ALTER TABLE {table} ADD COLUMN u STRING DEFAULT '5'")
    sql(session, f"INSERT INTO {table} VALUES (11, '11', 'nine', 'u'), (12, NULL, NULL, NULL), (13, '13', '13', '13')")


def _convert(session, spark, table: str, on_cast_error: str, engine: str):
    statement = f"ALTER TABLE {table} MODIFY COLUMN v INT, MODIFY COLUMN w BIGINT, MODIFY COLUMN u SMALLINT"
    request = AlterRequest(table, statement, {"on_cast_error": on_cast_error, "engine": engine})
    validated = alter_steps.validate(session.catalog, request)
    assert validated.kind == "HEAVY", validated
    job_id = heavy_steps.start(session.catalog, request, validated).job_id
    assert heavy_steps.wait_for_boundary(session.catalog, session.warehouse, job_id).done
    result = heavy_steps.convert(spark, session.catalog, session.warehouse, job_id)
    return job_id, result, HeavyJobs(session.catalog).converted(job_id)


# failures: v: 'twenty', 'x', '2147483648'; w: 'y', 'nine'; u: 'u' (the default '5' of rows 1-10 converts)
FAILED = 6
BAD_VALUES = {("v", "twenty"), ("v", "x"), ("v", "2147483648"), ("w", "y"), ("w", "nine"), ("u", "u")}


@pytest.mark.parametrize("key", ["", ", PRIMARY KEY (id)"], ids=["no-key (footers)", "primary-key (observed)"])
def test_rows_and_failed_casts_are_counted_the_same_both_ways(session, spark, key, engine):
    _history(session, "t", key)
    job_id, result, converted = _convert(session, spark, "t", "null", engine)
    assert result.rows == 13 and result.failed_casts == FAILED, result
    assert len(converted) == 3  # one record per origin tablet
    assert all(t.rows_in == t.rows_out for t in converted.values())
    assert sum(t.rows_in for t in converted.values()) == 13
    samples = {tuple(s[:2]) for t in converted.values() for s in t.samples}  # [column, value, key]
    assert samples and samples <= BAD_VALUES, samples
    assert heavy_steps.check(spark, session.catalog, session.warehouse, job_id).nulled == FAILED


@pytest.mark.parametrize("key", ["", ", PRIMARY KEY (id)"], ids=["no-key (footers)", "primary-key (observed)"])
def test_a_failed_cast_fails_validation_with_its_samples(session, spark, key, engine):
    _history(session, "t", key)
    job_id, result, converted = _convert(session, spark, "t", "fail", engine)
    assert result.failed_casts == FAILED, result
    samples = sorted((s for t in converted.values() for s in t.samples), key=lambda s: [str(v) for v in s])  # as the message
    with pytest.raises(heavy_steps.JobCancelled) as err:
        heavy_steps.check(spark, session.catalog, session.warehouse, job_id)
    message = str(err.value)
    # three columns convert: the line counts all their failed values, each sample names its column
    assert f"validation failed: {FAILED} values do not convert (13 rows read), e.g. {samples[0][0]} '{samples[0][1]}'" in message, message
    assert HeavyJobs(session.catalog).job(job_id).state == "CANCELLED"


def test_no_failure_records_zero_and_takes_no_sample(session, spark, engine):
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING)")
    sql(session, "INSERT INTO t VALUES (1, '1'), (2, NULL), (3, '-3')")
    sql(session, "ALTER TABLE t ADD COLUMN w STRING")
    sql(session, "INSERT INTO t VALUES (4, '4', '4')")
    _job_id, result, converted = _convert_v_and_w(session, spark, engine)
    assert (result.rows, result.failed_casts) == (4, 0), result
    assert [(t.rows_in, t.rows_out, t.failed_casts, t.samples) for t in converted.values()] == [(4, 4, 0, ())]


def _convert_v_and_w(session, spark, engine: str):
    request = AlterRequest("t", "ALTER TABLE t MODIFY COLUMN v INT, MODIFY COLUMN w INT", {"engine": engine})
    job_id = heavy_steps.start(session.catalog, request, alter_steps.validate(session.catalog, request)).job_id
    heavy_steps.wait_for_boundary(session.catalog, session.warehouse, job_id)
    result = heavy_steps.convert(spark, session.catalog, session.warehouse, job_id)
    return job_id, result, HeavyJobs(session.catalog).converted(job_id)
