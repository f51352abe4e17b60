"""The versioned catalog: tables, immutable schema versions, indexes, tablets, data files,
transactions, alter jobs and views, stored with SQLAlchemy and migrated with Alembic."""
