"""Which engine converts a heavyweight job's history (docs/heavyweight.md, "Engines: Spark or in-process").

- `spark`: Spark, on the configured master: history at any scale.
- `local`: in this process with Arrow (`alterflow.rewrite.local_conversion`), with the same
  conversion rules, job states, progress, validation suite and swap. Starting Spark costs more than
  converting a small table, so `auto` (the default) picks it for small ones.

`auto` picks `local` when the rows a rewrite reads are at most LOCAL_AUTO_ROWS and their files at
most LOCAL_AUTO_BYTES, else `spark`. `local` is refused over LOCAL_MAX_ROWS or LOCAL_MAX_BYTES:
the local engine holds one origin tablet in memory at a time, and a table that big is Spark's work.
"""

from __future__ import annotations

from alterflow.catalog.states import Engine

LOCAL_AUTO_ROWS = 1_000_000
LOCAL_AUTO_BYTES = 64 << 20
LOCAL_MAX_ROWS = 20_000_000
LOCAL_MAX_BYTES = 1 << 30


def _size_text(rows: int, nbytes: int) -> str:
    return f"{rows} rows in {nbytes / (1 << 20):.1f} MiB of files"


def local_refusal(rows: int, nbytes: int) -> str | None:
    """Why `"engine" = "local"` cannot convert this much history (None: it can)."""
    if rows <= LOCAL_MAX_ROWS and nbytes <= LOCAL_MAX_BYTES:
        return None
    return (
        f'"engine" = "local" converts at most {LOCAL_MAX_ROWS} rows and {LOCAL_MAX_BYTES >> 20} MiB of files, '
        f'the table holds {_size_text(rows, nbytes)}; use "auto" or "spark"'
    )


def choose_engine(requested: Engine, rows: int, nbytes: int) -> Engine:
    """`Engine.SPARK` or `Engine.LOCAL` for a rewrite of `rows` rows in `nbytes` bytes of files."""
    if requested not in tuple(Engine):
        raise ValueError(f"unknown engine {requested!r}; use one of {', '.join(Engine)}")
    if requested != Engine.AUTO:
        return Engine(requested)
    return Engine.LOCAL if rows <= LOCAL_AUTO_ROWS and nbytes <= LOCAL_AUTO_BYTES else Engine.SPARK


def engine_reason(requested: Engine, rows: int, nbytes: int) -> str:
    """The engine and why, as EXPLAIN ALTER says it."""
    engine = choose_engine(requested, rows, nbytes)
    if requested != Engine.AUTO:
        return f'{engine} ("engine" = "{requested}")'
    limit = f"{LOCAL_AUTO_ROWS} rows and {LOCAL_AUTO_BYTES >> 20} MiB"
    if engine == Engine.LOCAL:
        return f"local: {_size_text(rows, nbytes)}, within {limit}"
    return f"spark: {_size_text(rows, nbytes)}, over {limit}"
