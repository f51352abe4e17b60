"""the catalog's identity and deferred deletes: af_catalog holds the id the catalog's warehouse is
bound to (docs/gc.md: "A warehouse belongs to one catalog"), made here for new and existing catalogs
alike; af_data_files.dropped_at is when a file left its table (DELETED or REPLACED), which GC
waits the retention period after before it deletes the file
"""

import uuid
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    now = datetime.now(UTC).replace(tzinfo=None)
    identity = op.create_table(
        "af_catalog",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.bulk_insert(identity, [{"id": uuid.uuid4().hex, "created_at": now}])
    with op.batch_alter_table("af_data_files") as batch_op:
        batch_op.add_column(sa.Column("dropped_at", sa.DateTime(), nullable=True))
        batch_op.create_index("ix_af_data_files_state_dropped_at", ["state", "dropped_at"])
    # Files that left their table before this release: their retention starts now.
    files = sa.table("af_data_files", sa.column("state", sa.String), sa.column("dropped_at", sa.DateTime))
    op.execute(files.update().where(files.c.state.in_(("DELETED", "REPLACED"))).values(dropped_at=now))


def downgrade() -> None:
    with op.batch_alter_table("af_data_files") as batch_op:
        batch_op.drop_index("ix_af_data_files_state_dropped_at")
        batch_op.drop_column("dropped_at")
    op.drop_table("af_catalog")
