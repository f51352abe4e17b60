"""The checks a heavyweight rewrite's validation runs, as plain data: the one list that both the
Great Expectations suites (`alterflow.expectations.schema_change`, run by `validate_job` on the
shadow index) and the analysis of today's data (`alterflow.rewrite.cast_analysis`: EXPLAIN ANALYZE
and `migrate lint --analyze`) are generated from, so the two cannot check different things.

Each check is either read from the data (`ON_DATA`: the analysis counts the rows that would fail
it, with samples) or holds by the rewrite's construction whatever the data (`BY_CONSTRUCTION`,
with the reason): every kind is in exactly one of the two (tests/rewrite/test_validation_checks.py).
No Great Expectations and no Spark here: the lint imports this.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from alterflow.catalog.schema import SchemaVersion
from alterflow.catalog.states import OnCastError
from alterflow.errors import shown, shown_path


class CheckKind(StrEnum):
    TABLET_CONVERTED = "tablet_converted"  # every origin tablet holding data was converted
    ROWS_ACCOUNTED = "rows_accounted"  # a tablet's rows read = rows written + rows quarantined
    FAILED_CASTS = "failed_casts"  # no value lost to a failed cast (on_cast_error = fail only)
    NOT_NULL = "not_null"  # a NOT NULL column of the new version holds no NULL after the rewrite
    UNIQUE_KEY = "duplicate_keys"  # the converted rows' primary key is unique
    SORT_ORDER = "sort_order"  # each converted file is in the new sort-key order


class Suite(StrEnum):
    """The Great Expectations suite a check belongs to, and what it runs over."""

    TABLET_COUNTS = "alterflow_tablet_counts"  # one row per origin tablet
    SHADOW_ROWS = "alterflow_shadow_rows"  # the shadow index as readers see it after the swap
    CONVERTED_KEYS = "alterflow_converted_keys"  # the converted rows, not merged
    SORT_ORDER = "alterflow_sort_order"  # one row per converted file


ON_DATA = frozenset({CheckKind.FAILED_CASTS, CheckKind.NOT_NULL, CheckKind.UNIQUE_KEY})
BY_CONSTRUCTION = {
    CheckKind.TABLET_CONVERTED: "the rewrite converts every origin tablet before validation",
    CheckKind.ROWS_ACCOUNTED: "the rewrite writes or quarantines every row it reads",
    CheckKind.SORT_ORDER: "the rewrite sorts every file it writes by the new sort key",
}


@dataclass(frozen=True)
class ValidationCheck:
    kind: CheckKind
    suite: Suite
    column_ids: tuple[int, ...] = ()  # the NEW version's columns it is about (NOT NULL, key)
    columns: tuple[str, ...] = ()  # their names in the NEW version

    @property
    def on_data(self) -> bool:
        return self.kind in ON_DATA

    @property
    def rule(self) -> str:
        """The `migrate lint` rule that reports a failure of it found on today's data."""
        return self.kind.value

    def description(self) -> str:
        match self.kind:
            case CheckKind.NOT_NULL:
                return f"NOT NULL column {self.columns[0]} holds no NULL"
            case CheckKind.UNIQUE_KEY:
                return f"primary key ({', '.join(self.columns)}) is unique in the converted rows"
            case CheckKind.FAILED_CASTS:
                return "no value fails to convert (on_cast_error = fail)"
            case CheckKind.TABLET_CONVERTED:
                return "every origin tablet is converted"
            case CheckKind.ROWS_ACCOUNTED:
                return "rows read = rows written + rows quarantined, per tablet"
            case CheckKind.SORT_ORDER:
                return f"converted files are in ({', '.join(self.columns)}) order"
        raise ValueError(self.kind)


@dataclass(frozen=True)
class FailedSample:
    """One failed value or row, as a failure line shows it: `value` (text, None for a row) and
    the row's primary key ({origin column: value as text}; empty without a key)."""

    key: dict
    value: str | None = None
    column: str = ""  # the NEW column of a failed value

    def text(self, with_column: bool = False) -> str:
        where = "(" + ", ".join(f"{k}={v}" for k, v in self.key.items()) + ")" if self.key else ""
        if self.value is None:
            return where
        value = "NULL" if self.value == "NULL" else shown(self.value, 40)
        return " ".join(p for p in (self.column if with_column else "", value, where) if p)


@dataclass(frozen=True)
class CheckFailure:
    """A check the rewrite's result failed, counted from the data: `count` of `of` (values, rows,
    tablets or files, as the check counts), with a few samples. `converting`: for failed casts,
    NEW's columns whose conversion can fail, as (name, type)."""

    check: ValidationCheck
    count: int
    of: int
    samples: tuple[FailedSample, ...] = ()
    converting: tuple[tuple[str, str], ...] = ()

    def line(self) -> str:
        """The failure in the user's words, one line: no expectation's or suite's name."""
        n, of, columns = self.count, self.of, ", ".join(self.check.columns)
        match self.check.kind:
            case CheckKind.FAILED_CASTS if len(self.converting) == 1:
                ((name, type_name),) = self.converting
                text = f"{n} of {of} values of {name} do not convert to {type_name}"
            case CheckKind.FAILED_CASTS:
                text = f"{n} values do not convert ({of} rows read)"
            case CheckKind.NOT_NULL:
                text = f"{n} of {of} rows would hold NULL in NOT NULL column {columns}"
            case CheckKind.UNIQUE_KEY:
                text = f"{n} of {of} converted rows share their primary key ({columns}) with another row"
            case CheckKind.TABLET_CONVERTED:
                text = f"{n} of {of} origin tablets holding data were not converted"
            case CheckKind.ROWS_ACCOUNTED:
                text = f"{n} of {of} origin tablets did not write or quarantine exactly the rows they read"
            case CheckKind.SORT_ORDER:
                text = f"{n} of {of} converted files are not in ({columns}) order"
            case _:
                raise ValueError(self.check.kind)
        many = self.check.kind is CheckKind.FAILED_CASTS and len(self.converting) > 1
        if self.check.kind is CheckKind.SORT_ORDER:  # the samples are files
            examples = [shown_path(s.value) for s in self.samples[:3]]
        else:
            examples = [t for t in (s.text(with_column=many) for s in self.samples[:3]) if t]
        return text + (", e.g. " + ", ".join(examples) if examples else "")


def validation_checks(new: SchemaVersion, on_cast_error: OnCastError) -> tuple[ValidationCheck, ...]:
    """Every check validation runs on a rewrite to `new` with `on_cast_error`, in suite order."""
    if on_cast_error not in tuple(OnCastError):
        raise ValueError(f"on_cast_error must be one of {', '.join(OnCastError)}, not {on_cast_error!r}")
    checks = [
        ValidationCheck(CheckKind.TABLET_CONVERTED, Suite.TABLET_COUNTS),
        ValidationCheck(CheckKind.ROWS_ACCOUNTED, Suite.TABLET_COUNTS),
    ]
    if on_cast_error == OnCastError.FAIL:
        checks.append(ValidationCheck(CheckKind.FAILED_CASTS, Suite.TABLET_COUNTS))
    checks += [ValidationCheck(CheckKind.NOT_NULL, Suite.SHADOW_ROWS, (c.id,), (c.name,)) for c in new.columns if not c.nullable]
    if new.primary_key:
        checks.append(
            ValidationCheck(CheckKind.UNIQUE_KEY, Suite.CONVERTED_KEYS, tuple(new.primary_key), tuple(new.names(new.primary_key)))
        )
    if new.sort_key:
        checks.append(ValidationCheck(CheckKind.SORT_ORDER, Suite.SORT_ORDER, tuple(new.sort_key), tuple(new.names(new.sort_key))))
    return tuple(checks)
