"""Errors the catalog raises. Each message is one line a user can act on."""

from alterflow.errors import UserError, shown


class CatalogError(UserError):
    """Base of every catalog error."""


class UnknownObject(CatalogError):
    """No live table, view, job or transaction of that name or id."""


class NameInUse(CatalogError):
    """A table or view of that name already exists."""


class ConcurrentChange(CatalogError):
    """Another writer changed the same thing first; nothing of this operation was applied."""


class TableMoved(ConcurrentChange):
    """An ALTER's compare-and-set found the table past the version it was planned against
    (another change committed first); nothing of it was applied. Planned again on the current
    version, it may still apply (`alterflow.workflow.alter_steps.retry_on_table_moved`)."""


class DependentObjects(CatalogError):
    """Something still depends on the object (a view, an unfinished job)."""


class TransactionStateError(CatalogError):
    """The transaction is not in a state that allows this."""


class LoadOvertaken(TransactionStateError):
    """A load's commit refused because a heavyweight schema change started or swapped while it
    ran, after it had chosen where to write: its rows went to an index the table no longer reads
    alone, so nothing of it committed. Run again, it writes to the table as it now is (a load of
    files does so by itself: `Session.load_input_result`). `transient`: an Airflow task that meets
    it is left to its retries."""

    transient = True


class JobStateError(CatalogError):
    """The alter job is not in a state that allows this; nothing changed."""


class LeaseHeld(CatalogError):
    """Another live runner holds the job's lease: it is being driven; nothing changed."""


class LeaseLost(CatalogError):
    """This runner's lease on a job (or a load's on its transaction) was taken over or expired;
    the runner stops without writing."""


class CatalogUnavailable(CatalogError):
    """The catalog database cannot be opened (a bad URL, no driver, no server)."""


class CatalogLost(CatalogUnavailable):
    """The catalog's server stopped answering, or refused a connection (a restart, a network cut):
    a passing state, not a refusal. The command stops with one line; an Airflow task is retried
    (`transient`). What committed before stays; a statement it cut off did not commit, or committed
    whole."""

    transient = True

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


class CatalogFull(CatalogError):
    """The catalog database cannot grow (its disk is full, a quota, a read-only SQLite file): the
    transaction was rolled back, nothing of it committed."""


class CatalogOutdated(CatalogError):
    """A catalog database that is not at this release's migration; only `alterflow db upgrade`
    migrates a catalog that is not SQLite."""


class BadLabel(CatalogError):
    """A load's label the catalog cannot keep (too long, empty, control characters); nothing was written."""


MAX_LABEL = 256  # af_transactions.label


def checked_label(label: object, context: str) -> str:
    """`label` when the catalog can keep it as a load's label: text of 1 to MAX_LABEL printable
    characters (no control character: PostgreSQL text holds no NUL, and a label is printed);
    otherwise BadLabel, one line that begins with `context`."""
    if not isinstance(label, str):
        raise BadLabel(f"{context}: a label is a string, not {type(label).__name__}")
    if not label.strip() or len(label) > MAX_LABEL or not label.isprintable():
        raise BadLabel(f"{context}: label {shown(label)} is not 1 to {MAX_LABEL} printable characters (no control characters)")
    return label
