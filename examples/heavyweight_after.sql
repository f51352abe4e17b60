-- the failed job is CANCELLED with the failed expectation and a sample value; the origin serves on
SHOW ALTER TABLE COLUMN FROM events;
SELECT * FROM events ORDER BY id;
-- with on_cast_error = null the same change succeeds and reports the values it turned into NULL
ALTER TABLE events MODIFY COLUMN code TINYINT PROPERTIES ("on_cast_error" = "null");
SELECT * FROM events ORDER BY id;
SHOW ALTER TABLE COLUMN FROM events;
