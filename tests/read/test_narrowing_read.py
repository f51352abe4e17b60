"""A narrowing read (a REVERT of a widening reads BIGINT files as INT, after checking the files'
statistics): Spark checks every value again instead of letting its cast wrap one that does not
fit, as the Arrow reader does."""

from __future__ import annotations

import pytest

from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.read.evolved_read import projection_sql
from alterflow.values.types import parse_type
from tests.support.spark_projection import projection

SOURCE = SchemaVersion(1, 2, (Column(1, "v", parse_type("BIGINT")),))
TARGET = SchemaVersion(1, 3, (Column(1, "v", parse_type("INT")),))


@pytest.mark.spark
def test_a_narrowing_read_fails_on_a_value_that_does_not_fit_instead_of_wrapping(spark):
    fits = spark.createDataFrame([(1,), (None,), (2147483647,), (-2147483648,)], "v bigint")
    for columns in (projection_sql(SOURCE, TARGET), None):
        selected = fits.selectExpr(*columns) if columns else fits.select(*projection(SOURCE, TARGET))
        assert [r[0] for r in selected.collect()] == [1, None, 2147483647, -2147483648]
    wraps = spark.createDataFrame([(5000000000,)], "v bigint")
    with pytest.raises(Exception, match="column v: a stored value does not fit INT"):
        wraps.selectExpr(*projection_sql(SOURCE, TARGET)).collect()
    with pytest.raises(Exception, match="column v: a stored value does not fit INT"):
        wraps.select(*projection(SOURCE, TARGET)).collect()


def test_a_widening_read_stays_a_plain_cast():
    assert projection_sql(TARGET, SOURCE) == ["CAST(`v` AS bigint) AS `v`"]
